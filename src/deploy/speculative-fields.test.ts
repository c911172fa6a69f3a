import { describe, expect, it } from 'vitest';
import { isBlisError } from '../domain/errors.js';
import { parseDeployment } from './parse.js';

const file = (fields: string): string => `models:
  - name: meta-llama/llama-3.1-8b-instruct
    configurations:
      - name: a
        hardware: H100
        replicas: 1
${fields}`;

function errorOf(text: string): string {
  try {
    parseDeployment(text, 'dep.yaml');
  } catch (e) {
    if (!isBlisError(e)) throw e;
    return e.message;
  }
  throw new Error('expected an error');
}

describe('deployment files: kv_cache_dtype and speculative decoding per configuration', () => {
  it('reads them; absent = the run\'s flags', () => {
    const c = parseDeployment(file('        kv_cache_dtype: fp8\n        num_speculative_tokens: 3\n        speculative_acceptance_rate: 0.7\n        speculative_method: mtp\n'), 'dep.yaml').models[0]!.configs[0]!;
    expect(c.kvCacheDtype).toBe('fp8');
    expect(c.speculative).toEqual({ tokens: 3, acceptanceRate: 0.7, method: 'mtp' });
    const plain = parseDeployment(file(''), 'dep.yaml').models[0]!.configs[0]!;
    expect('kvCacheDtype' in plain || 'speculative' in plain).toBe(false);
    expect(parseDeployment(file('        num_speculative_tokens: 0\n'), 'dep.yaml').models[0]!.configs[0]!.speculative).toEqual({ tokens: 0, acceptanceRate: 0, method: '' });
  });

  it('one located error per mistake, naming the key', () => {
    const cases: [string, RegExp][] = [
      ['        kv_cache_dtype: int4\n', /dep\.yaml:7:25: models\[0\]\.configurations\[0\]\.kv_cache_dtype: unknown value "int4"; use one of: auto, fp8/],
      ['        num_speculative_tokens: 3\n', /num_speculative_tokens 3 needs speculative_acceptance_rate/],
      ['        speculative_acceptance_rate: 0.5\n', /dep\.yaml:7:38: .*speculative_acceptance_rate: needs num_speculative_tokens/],
      ['        num_speculative_tokens: 2\n        speculative_acceptance_rate: 1.5\n', /speculative_acceptance_rate: must be <= 1, got 1.5/],
      ['        num_speculative_tokens: -1\n', /num_speculative_tokens: must be >= 0, got -1/],
      ['        num_speculative_tokens: 2\n        speculative_acceptance_rate: 0.5\n        speculative_method: jacobi\n', /speculative_method: unknown value "jacobi"; use one of: mtp, eagle, medusa, ngram, draft/],
      ['        num_speculative_tokens: 0\n        speculative_acceptance_rate: 0.5\n', /speculative_acceptance_rate: needs num_speculative_tokens > 0/],
    ];
    for (const [fields, want] of cases) expect(errorOf(file(fields))).toMatch(want);
  });
});
