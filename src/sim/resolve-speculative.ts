/**
 * Speculative decoding / MTP options (upstream PR #1538) and --kv-cache-dtype (upstream PR #1646), checked once
 * at the edge: --num-speculative-tokens K with --speculative-acceptance-rate α (or the per-position
 * --speculative-acceptance-rates a1..aK), --speculative-method (a label). Off (null) unless K > 0.
 */
import { SPECULATIVE_METHODS, expectedAccepted, type SpeculativeConfig } from '../instance/speculative.js';
import { KV_CACHE_DTYPES } from '../latency/kv-capacity.js';
import { showValue } from '../domain/errors.js';
import { ConfigError } from './config-error.js';
import type { FlagValues } from './options.js';

function bad(flag: string, message: string): ConfigError {
  return new ConfigError('bad-flag', `${flag} ${message}`, { field: flag });
}

/** The speculative-decoding configuration the flags give; null when off (K = 0 and no per-position rates). */
export function resolveSpeculative(f: FlagValues, corrected: boolean): SpeculativeConfig | null {
  if (!f.has('num-speculative-tokens')) return null;
  const kGiven = f.changed('num-speculative-tokens');
  let k = f.int('num-speculative-tokens');
  if (k < 0) throw bad('--num-speculative-tokens', `must be >= 0 (0 = off), got ${k}`);
  const rateGiven = f.changed('speculative-acceptance-rate');
  const rates = f.floats('speculative-acceptance-rates');
  const method = f.str('speculative-method');
  if (rates.length > 0) {
    if (rates.length > 64) throw bad('--speculative-acceptance-rates', `has ${rates.length} rates; at most 64 draft positions`);
    if (rateGiven) throw bad('--speculative-acceptance-rates', 'and --speculative-acceptance-rate both set the acceptance: give one');
    rates.forEach((a, i) => {
      if (!(a >= 0 && a <= 1)) throw bad('--speculative-acceptance-rates', `element ${i + 1} must be in [0, 1], got ${a}`);
    });
    if (kGiven && k !== rates.length) {
      throw bad('--speculative-acceptance-rates', `has ${rates.length} rates but --num-speculative-tokens is ${k}: give one rate per draft position (or leave out --num-speculative-tokens)`);
    }
    k = rates.length;
  }
  if (k === 0) {
    // As upstream: a rate of 0 without drafts is harmless; any other is a mistake.
    if (rateGiven && f.float('speculative-acceptance-rate') !== 0) throw bad('--speculative-acceptance-rate', 'needs --num-speculative-tokens > 0 (speculative decoding is off)');
    if (method !== '') throw bad('--speculative-method', 'needs --num-speculative-tokens > 0 (speculative decoding is off)');
    return null;
  }
  if (method !== '' && !(SPECULATIVE_METHODS as readonly string[]).includes(method)) {
    throw bad('--speculative-method', `must be one of ${SPECULATIVE_METHODS.join(', ')}, got ${showValue(method)}`);
  }
  let accepted: number;
  if (rates.length > 0) accepted = expectedAccepted(rates);
  else {
    if (!rateGiven) {
      throw bad('--num-speculative-tokens', `${k} needs --speculative-acceptance-rate α in [0, 1] (blis runs no draft model, so it cannot predict acceptance), e.g. --speculative-acceptance-rate 0.7`);
    }
    const a = f.float('speculative-acceptance-rate');
    if (!(a >= 0 && a <= 1)) throw bad('--speculative-acceptance-rate', `must be in [0, 1], got ${a}`);
    accepted = a * k;
  }
  return { k, accepted, lookahead: corrected };
}

/** --kv-cache-dtype checked against its values ('auto' when the command has no such option). */
export function resolveKvCacheDtype(f: FlagValues): string {
  if (!f.has('kv-cache-dtype')) return 'auto';
  const v = f.str('kv-cache-dtype');
  if (!(KV_CACHE_DTYPES as readonly string[]).includes(v)) {
    throw bad('--kv-cache-dtype', `must be one of ${KV_CACHE_DTYPES.join(', ')}, got ${showValue(v)}`);
  }
  return v;
}
