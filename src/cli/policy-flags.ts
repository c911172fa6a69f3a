/**
 * Cluster policy flags -> PolicySetup, with the reference's checks (cmd/root.go): token bucket parameters,
 * trace level, non-negative intervals, scorer profile grammar.
 */
import { parseScorerConfigs } from '../routing/scorer-config.js';
import { ConfigError } from '../sim/config-error.js';
import type { PolicySetup } from '../sim/engine-setup.js';
import type { FlagValues } from './flags.js';
import type { Io } from './io.js';

export function resolvePolicyFlags(f: FlagValues, io: Io): PolicySetup {
  const admissionPolicy = f.str('admission-policy');
  const cap = f.float('token-bucket-capacity');
  const refill = f.float('token-bucket-refill-rate');
  if (admissionPolicy === 'token-bucket') {
    if (!(cap > 0)) throw new ConfigError('bad-flag', `--token-bucket-capacity must be a finite value > 0, got ${cap}`);
    if (!(refill > 0)) throw new ConfigError('bad-flag', `--token-bucket-refill-rate must be a finite value > 0, got ${refill}`);
  }
  const traceLevel = f.str('trace-level');
  if (traceLevel !== 'none' && traceLevel !== 'decisions') throw new ConfigError('bad-flag', `unknown --trace-level "${traceLevel}"; valid: none, decisions`);
  const k = f.int('counterfactual-k');
  if (k < 0) throw new ConfigError('bad-flag', `--counterfactual-k must be >= 0, got ${k}`);
  if (traceLevel === 'none' && k > 0) io.warn(`--counterfactual-k=${k} has no effect without --trace-level decisions`);
  if (traceLevel === 'none' && f.bool('summarize-trace')) io.warn('--summarize-trace has no effect without --trace-level decisions');
  const nonNeg = (name: string): number => {
    const v = f.int(name);
    if (v < 0) throw new ConfigError('bad-flag', `--${name} must be >= 0, got ${v}`);
    return v;
  };
  return {
    admissionPolicy,
    tokenBucketCapacity: cap,
    tokenBucketRefillRate: refill,
    tierShedThreshold: 0,
    tierShedMinPriority: 0,
    gaieQdThreshold: 0,
    gaieKvThreshold: 0,
    tenantBudgets: new Map(),
    routingPolicy: f.str('routing-policy'),
    routingScorers: parseScorerConfigs(f.str('routing-scorers')),
    snapshotRefreshInterval: nonNeg('snapshot-refresh-interval'),
    cacheSignalDelay: nonNeg('cache-signal-delay'),
    traceDecisions: traceLevel === 'decisions',
    counterfactualK: k,
  };
}
