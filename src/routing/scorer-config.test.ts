/** The --routing-scorers grammar and profile helpers; error texts are the reference's, verbatim. */
import { describe, expect, it } from 'vitest';
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import { composeLoraScorer, defaultScorerConfigs, normalizeScorerWeights, parseScorerConfigs, validateScorerConfigs } from './scorer-config.js';
import { isScorerName, SCORER_NAMES } from './scorer-registry.js';

function errorOf(f: () => unknown): RoutingConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof RoutingConfigError) return e;
    throw e;
  }
  throw new Error('expected a RoutingConfigError');
}

describe('parseScorerConfigs', () => {
  it('parses name:weight pairs in order, trimming whitespace', () => {
    expect(parseScorerConfigs('queue-depth:2,kv-utilization:3,load-balance:1')).toEqual([
      { name: 'queue-depth', weight: 2 },
      { name: 'kv-utilization', weight: 3 },
      { name: 'load-balance', weight: 1 },
    ]);
    expect(parseScorerConfigs(' queue-depth : 2 , load-balance : 1 ')).toEqual([
      { name: 'queue-depth', weight: 2 },
      { name: 'load-balance', weight: 1 },
    ]);
  });

  it('returns null for the empty string (use the default profile)', () => {
    expect(parseScorerConfigs('')).toBeNull();
  });

  it('accepts what strconv.ParseFloat accepts', () => {
    expect(parseScorerConfigs('load-balance:1_0,queue-depth:0x1p-2,kv-utilization:.5e1')).toEqual([
      { name: 'load-balance', weight: 10 },
      { name: 'queue-depth', weight: 0.25 },
      { name: 'kv-utilization', weight: 5 },
    ]);
  });

  it.each([
    ['queue-depth', RoutingErrorCode.MalformedScorerConfig, 'invalid scorer config "queue-depth" (expected name:weight)'],
    ['queue-depth:1,', RoutingErrorCode.MalformedScorerConfig, 'invalid scorer config "" (expected name:weight)'],
    ['foo:1', RoutingErrorCode.UnknownScorer, `unknown scorer "foo"; valid: ${SCORER_NAMES.join(', ')}`],
    ['queue-depth:1,queue-depth:2', RoutingErrorCode.DuplicateScorer, 'duplicate scorer "queue-depth"; each scorer may appear at most once'],
    ['queue-depth:abc', RoutingErrorCode.InvalidScorerWeight, 'invalid weight for scorer "queue-depth": strconv.ParseFloat: parsing "abc": invalid syntax'],
    ['queue-depth:1e400', RoutingErrorCode.InvalidScorerWeight, 'invalid weight for scorer "queue-depth": strconv.ParseFloat: parsing "1e400": value out of range'],
    ['queue-depth:-1', RoutingErrorCode.InvalidScorerWeight, 'scorer "queue-depth" weight must be a finite positive number, got -1'],
    ['queue-depth:0', RoutingErrorCode.InvalidScorerWeight, 'scorer "queue-depth" weight must be a finite positive number, got 0'],
    ['queue-depth:NaN', RoutingErrorCode.InvalidScorerWeight, 'scorer "queue-depth" weight must be a finite positive number, got NaN'],
    ['queue-depth:Inf', RoutingErrorCode.InvalidScorerWeight, 'scorer "queue-depth" weight must be a finite positive number, got +Inf'],
    ['queue-depth:-1000000', RoutingErrorCode.InvalidScorerWeight, 'scorer "queue-depth" weight must be a finite positive number, got -1e+06'],
  ])('rejects %j', (text, code, message) => {
    const e = errorOf(() => parseScorerConfigs(text));
    expect([e.code, e.message, e.field]).toEqual([code, message, 'routing-scorers']);
  });
});

describe('profiles', () => {
  it('default profile is precise-prefix-cache:2, queue-depth:1, kv-utilization:1', () => {
    expect(defaultScorerConfigs()).toEqual([
      { name: 'precise-prefix-cache', weight: 2 },
      { name: 'queue-depth', weight: 1 },
      { name: 'kv-utilization', weight: 1 },
    ]);
  });

  it('normalises weights by their sum', () => {
    expect(normalizeScorerWeights([{ name: 'queue-depth', weight: 3 }, { name: 'load-balance', weight: 2 }])).toEqual([0.6, 0.4]);
  });

  it('validates bundle-style profiles with the entry index', () => {
    expect(errorOf(() => validateScorerConfigs([{ name: 'queue-depth', weight: 1 }, { name: 'bogus', weight: 1 }])).message).toMatch(/^routing scorer\[1\]: unknown scorer "bogus"; valid: /);
    expect(errorOf(() => validateScorerConfigs([{ name: 'queue-depth', weight: -2 }])).message).toBe(
      'routing scorer[0] "queue-depth": weight must be a finite positive number, got -2',
    );
  });

  it('composes lora-affinity onto the given or default profile, once', () => {
    expect(composeLoraScorer(null, 2).map((c) => `${c.name}:${c.weight}`)).toEqual(['precise-prefix-cache:2', 'queue-depth:1', 'kv-utilization:1', 'lora-affinity:2']);
    expect(composeLoraScorer([{ name: 'load-balance', weight: 1 }], 0.5)).toEqual([
      { name: 'load-balance', weight: 1 },
      { name: 'lora-affinity', weight: 0.5 },
    ]);
    expect(() => composeLoraScorer([{ name: 'lora-affinity', weight: 1 }], 1)).toThrow(/not both/);
    expect(() => composeLoraScorer(null, 0)).toThrow('weight must be a finite positive number, got 0');
  });

  it('knows every reference scorer name', () => {
    expect(SCORER_NAMES).toEqual([
      'active-requests',
      'kv-utilization',
      'load-aware',
      'load-balance',
      'lora-affinity',
      'no-hit-lru',
      'precise-prefix-cache',
      'prefix-affinity',
      'queue-depth',
      'running-requests',
      'vllm-dp',
    ]);
    expect([isScorerName(''), isScorerName('toString'), isScorerName('unknown')]).toEqual([false, false, false]);
  });
});
