import { BlisError, type ErrorWhere } from '../domain/errors.js';
/** A configuration error with a stable code; its message names the flag or field and says how to fix it. */
export class ConfigError extends BlisError {
  constructor(code: string, message: string, where: ErrorWhere = {}) {
    super(code, message, where);
    this.name = 'ConfigError';
  }
}
