/**
 * Sizes in messages. Its own module so that code naming a size limit (the CLI's input reader, loaded for every
 * command including `blis --help`) does not load the YAML library with it.
 */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} bytes`;
}
