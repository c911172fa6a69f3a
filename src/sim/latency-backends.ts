/**
 * The latency backends' names. Apart from the resolver so that the flag table (loaded by every command, even
 * `blis --help`) lists them without loading every latency model.
 */
export const LATENCY_BACKENDS = { 'trained-physics': true, roofline: true, blackbox: true, 'corrected-physics': true } as const;
export type LatencyBackend = keyof typeof LATENCY_BACKENDS;
