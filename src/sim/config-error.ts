/** A configuration error with a stable code; its message names the flag or field and says how to fix it. */
export class ConfigError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ConfigError';
    this.code = code;
  }
}
