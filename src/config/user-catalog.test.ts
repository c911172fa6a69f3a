import { describe, expect, it } from 'vitest';
import { UserCatalogError, parseUserHardwareConfig, parseUserModelConfig, parseUserModelFolder } from './user-catalog.js';

function errorOf(f: () => unknown): UserCatalogError {
  try {
    f();
  } catch (e) {
    if (e instanceof UserCatalogError) return e;
    throw e;
  }
  throw new Error('expected a UserCatalogError');
}

const llamaLike = {
  architectures: ['LlamaForCausalLM'],
  num_hidden_layers: 32,
  hidden_size: 4096,
  num_attention_heads: 32,
  num_key_value_heads: 8,
  torch_dtype: 'bfloat16',
  rope_scaling: { rope_type: 'llama3', factor: 8.0, low_freq_factor: 1.0 },
  some_future_key: { nested: [1, 2] },
};

describe('parseUserModelConfig', () => {
  it('accepts an HF config, keeping unknown keys', () => {
    const cfg = parseUserModelConfig(JSON.stringify(llamaLike), 'm/config.json');
    expect(cfg).toEqual(llamaLike);
  });

  it('accepts multimodal configs with text_config and null-valued optional keys', () => {
    const text = JSON.stringify({ model_type: 'llama4', text_config: { num_hidden_layers: 48, hidden_size: 5120, head_dim: null } });
    expect(parseUserModelConfig(text, 'scout.json').text_config?.num_hidden_layers).toBe(48);
  });

  it('names the file and field of a wrongly typed key', () => {
    const e = errorOf(() => parseUserModelConfig(JSON.stringify({ ...llamaLike, num_hidden_layers: '32' }), 'm/config.json'));
    expect([e.code, e.file, e.path]).toEqual(['USER_CATALOG_INVALID_MODEL_CONFIG', 'm/config.json', 'num_hidden_layers']);
    expect(e.message).toMatch(/^m\/config\.json:1:\d+: num_hidden_layers: /);
    const nested = errorOf(() =>
      parseUserModelConfig(
        JSON.stringify({ ...llamaLike, quantization_config: { config_groups: { g0: { weights: { num_bits: 'eight' } } } } }),
        'q.json',
      ),
    );
    expect(nested.path).toBe('quantization_config.config_groups.g0.weights.num_bits');
  });

  it('rejects JSON that is not a model config', () => {
    expect(errorOf(() => parseUserModelConfig('{"error": "not found"}', 'x.json')).code).toBe('USER_CATALOG_INVALID_MODEL_CONFIG');
    expect(errorOf(() => parseUserModelConfig('[1]', 'x.json')).code).toBe('USER_CATALOG_INVALID_MODEL_CONFIG');
    const bad = errorOf(() => parseUserModelConfig('{"num_hidden_layers": 3,', 'broken.json'));
    expect([bad.code, bad.file]).toEqual(['USER_CATALOG_INVALID_JSON', 'broken.json']);
    expect(bad.message).toMatch(/^broken\.json:1:\d+: invalid JSON/);
  });
});

describe('parseUserModelFolder', () => {
  it('keys configs by lowercased folder name and rejects case-insensitive duplicates', () => {
    const text = JSON.stringify(llamaLike);
    const out = parseUserModelFolder([{ name: 'My-Model', jsonText: text, fileLabel: 'dir/My-Model/config.json' }]);
    expect([...out.keys()]).toEqual(['my-model']);
    const e = errorOf(() =>
      parseUserModelFolder([
        { name: 'a', jsonText: text, fileLabel: 'dir/a/config.json' },
        { name: 'A', jsonText: text, fileLabel: 'dir/A/config.json' },
      ]),
    );
    expect([e.code, e.file]).toEqual(['USER_CATALOG_DUPLICATE_NAME', 'dir/A/config.json']);
  });

  it('reports the failing file', () => {
    const e = errorOf(() => parseUserModelFolder([{ name: 'b', jsonText: '{}', fileLabel: 'dir/b/config.json' }]));
    expect(e.file).toBe('dir/b/config.json');
  });
});

describe('parseUserHardwareConfig', () => {
  const gpu = { _comment: 'measured', TFlopsPeak: 100, TFlopsFP8: 200, BwPeakTBs: 1.5, mfuPrefill: 0.4, mfuDecode: 0.2, MemoryGiB: 32 };

  it('reads GPUs in hardware_config.json form, dropping _comment and defaulting optional numbers to 0', () => {
    const out = parseUserHardwareConfig(JSON.stringify({ X1: gpu, X2: { TFlopsPeak: 50, BwPeakTBs: 1 } }), 'hw.json');
    expect(out.get('X1')).toEqual({ TFlopsPeak: 100, TFlopsFP8: 200, BwPeakTBs: 1.5, mfuPrefill: 0.4, mfuDecode: 0.2, MemoryGiB: 32 });
    expect(out.get('X2')).toEqual({ TFlopsPeak: 50, TFlopsFP8: 0, BwPeakTBs: 1, mfuPrefill: 0, mfuDecode: 0, MemoryGiB: 0 });
  });

  it('rejects unknown keys, naming the GPU and key', () => {
    const e = errorOf(() => parseUserHardwareConfig(JSON.stringify({ X1: { ...gpu, TflopsPeak: 1 } }), 'hw.json'));
    expect([e.code, e.file, e.path]).toEqual(['USER_CATALOG_INVALID_HARDWARE_CONFIG', 'hw.json', 'X1']);
    expect(e.message).toContain('TflopsPeak');
  });

  it('rejects missing or non-positive peaks', () => {
    expect(errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { BwPeakTBs: 1 } }), 'hw.json')).path).toBe('X.TFlopsPeak');
    expect(errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, BwPeakTBs: 0 } }), 'hw.json')).path).toBe('X.BwPeakTBs');
    expect(errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, mfuDecode: -0.1 } }), 'hw.json')).path).toBe('X.mfuDecode');
  });

  it('refuses a model FLOPs utilisation above 1, at its line and column', () => {
    const text = '{\n  "X": {\n    "TFlopsPeak": 100,\n    "BwPeakTBs": 1,\n    "mfuPrefill": 5\n  }\n}\n';
    const e = errorOf(() => parseUserHardwareConfig(text, 'hw.json'));
    expect(e.path).toBe('X.mfuPrefill');
    expect(e.message).toMatch(/^hw\.json:5:19: X\.mfuPrefill: must be a fraction in \[0, 1\]/);
    expect(errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, mfuDecode: 1.5 } }), 'hw.json')).path).toBe('X.mfuDecode');
    expect(parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, mfuDecode: 1 } }), 'hw.json').get('X')?.mfuDecode).toBe(1);
  });

  it('says which PCIe generations exist when PCIeGen is a string or out of range', () => {
    for (const bad of ['four', 4e11, 7]) {
      const e = errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, class: 'ampere', PCIeGen: bad } }), 'hw.json'));
      expect(e.path).toBe('X.PCIeGen');
      expect(e.message).toMatch(/X\.PCIeGen: must be the PCIe generation the cards talk over: 3, 4, 5 or 6/);
    }
    expect(parseUserHardwareConfig(JSON.stringify({ X: { ...gpu, PCIeGen: 4 } }), 'hw.json').has('X')).toBe(true);
  });

  it('points an unknown key at the key itself', () => {
    const e = errorOf(() => parseUserHardwareConfig('{"X1": {"TFlopsPeak": 1, "BwPeakTBs": 1,\n "Tflops": 2}}', 'hw.json'));
    expect(e.message).toMatch(/^hw\.json:2:12: /);
  });

  it('lists every problem and points at the first', () => {
    const e = errorOf(() => parseUserHardwareConfig(JSON.stringify({ X: { BwPeakTBs: 1, MemoryGiB: -1 } }), 'hw.json'));
    expect(e.path).toBe('X.TFlopsPeak');
    expect(e.message).toMatch(/^hw\.json:1:\d+: X\.TFlopsPeak: .*; X\.MemoryGiB: /);
  });
});
