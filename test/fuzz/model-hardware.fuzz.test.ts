/**
 * User model config.json files (--model-config-folder) and hardware catalogs (--hardware-config), valid and
 * hostile, through `blis run`: the outcome contract holds.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { applyMutations, mutations, numberText, sometimes, weirdText } from './gen.js';
import { CliWorker, caseDir, checkOutcome, cleanupSandbox, fuzzParams, fuzzTimeout, writeFiles } from './harness.js';

const worker = new CliWorker();
afterAll(async () => {
  await worker.close('model and hardware files');
  cleanupSandbox();
});

const pick = <T>(...xs: T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
/** A JSON value for a numeric field: usually a sensible number, sometimes anything. */
const jsonNumber = (good: number[], hostile: boolean): fc.Arbitrary<unknown> =>
  hostile
    ? fc.oneof({ weight: 3, arbitrary: pick(...good) }, { weight: 1, arbitrary: fc.oneof(pick<unknown>(0, -1, 0.5, 1e6, null, 'x', true, [], {}), numberText.map((t) => (Number.isFinite(Number(t)) && t.trim() !== '' ? Number(t) : t))) })
    : pick(...good);

function modelConfig(hostile: boolean): fc.Arbitrary<string> {
  return fc
    .record({
      layers: jsonNumber([4, 16, 32], hostile),
      hidden: jsonNumber([512, 2048, 4096], hostile),
      heads: jsonNumber([8, 16, 32], hostile),
      kv: sometimes(jsonNumber([8, 4, 1], hostile), 2),
      inter: jsonNumber([2048, 11008], hostile),
      vocab: jsonNumber([32000, 128256], hostile),
      dtype: hostile ? fc.oneof(pick('bfloat16', 'float16'), weirdText) : pick('bfloat16', 'float16', 'float32'),
      maxPos: sometimes(jsonNumber([4096, 131072], hostile), 2),
      experts: sometimes(fc.tuple(jsonNumber([8], hostile), jsonNumber([2], hostile)), 5),
      wrap: fc.boolean(),
      extra: hostile ? sometimes(pick('"rope_scaling": {"type": "yarn", "factor": -4}', '"quantization_config": {"bits": "x"}', '"head_dim": -3', '"text_config": 5', '"num_kv_heads": 64'), 3) : fc.constant(undefined),
      damage: hostile ? sometimes(mutations, 4).map((m) => m ?? []) : fc.constant([]),
    })
    .map((c) => {
      const fields: Record<string, unknown> = {
        model_type: c.experts === undefined ? 'llama' : 'mixtral',
        num_hidden_layers: c.layers,
        hidden_size: c.hidden,
        num_attention_heads: c.heads,
        intermediate_size: c.inter,
        vocab_size: c.vocab,
        torch_dtype: c.dtype,
        hidden_act: 'silu',
      };
      if (c.kv !== undefined) fields['num_key_value_heads'] = c.kv;
      if (c.maxPos !== undefined) fields['max_position_embeddings'] = c.maxPos;
      if (c.experts !== undefined) [fields['num_local_experts'], fields['num_experts_per_tok']] = c.experts;
      let text = JSON.stringify(c.wrap ? { architectures: ['X'], text_config: fields } : fields, null, 2);
      if (c.extra !== undefined) text = text.replace(/\n}$/, `,\n  ${c.extra}\n}`);
      return applyMutations(text, c.damage);
    });
}

function hardware(hostile: boolean): fc.Arbitrary<string> {
  return fc
    .record({
      name: hostile ? fc.oneof(pick('X1', 'H100'), weirdText) : pick('X1', 'H100'),
      peak: jsonNumber([989.5, 312], hostile),
      fp8: sometimes(jsonNumber([0, 1979], hostile), 2),
      bw: jsonNumber([3.35, 2.039], hostile),
      mfuP: jsonNumber([0.45, 0.38], hostile),
      mfuD: jsonNumber([0.3, 0.18], hostile),
      mem: sometimes(jsonNumber([80, 40, 24], hostile), 4).map((m) => m ?? 80),
      extra: hostile ? sometimes(pick('"TflopsPeak": 1', '"_comment": 5', '"MemoryGiB": -80'), 3) : fc.constant(undefined),
      damage: hostile ? sometimes(mutations, 4).map((m) => m ?? []) : fc.constant([]),
    })
    .map((h) => {
      const entry: Record<string, unknown> = { _comment: 'fuzz', TFlopsPeak: h.peak, BwPeakTBs: h.bw, mfuPrefill: h.mfuP, mfuDecode: h.mfuD, MemoryGiB: h.mem };
      if (h.fp8 !== undefined) entry['TFlopsFP8'] = h.fp8;
      let text = JSON.stringify({ [h.name]: entry }, null, 2);
      if (h.extra !== undefined) text = text.replace(/\n {2}}\n}$/, `,\n    ${h.extra}\n  }\n}`);
      return applyMutations(text, h.damage);
    });
}

describe('fuzz: model and hardware files', () => {
  it('a model config.json ends in a run or one located error line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(modelConfig(false), modelConfig(true)), pick('roofline', 'trained-physics'), async (config, backend) => {
        const dir = caseDir();
        const folder = path.join(dir, 'm');
        mkdirSync(folder);
        writeFiles(folder, { 'config.json': config });
        const argv = ['run', '--model', 'fuzz/m', '--model-config-folder', folder, '--hardware', 'H100', '--tp', '1', '--latency-model', backend, '--num-requests', '5'];
        checkOutcome(await worker.run(argv, dir), { 'config.json': config });
      }),
      fuzzParams('model config.json', 80),
    );
  }, fuzzTimeout(120_000));

  it('a hardware catalog ends in a run or one located error line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(hardware(false), hardware(true)), pick('X1', 'H100'), pick('roofline', 'trained-physics'), async (hw, gpu, backend) => {
        const dir = caseDir();
        const files = writeFiles(dir, { 'hw.json': hw });
        const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--hardware-config', files['hw.json']!, '--hardware', gpu, '--tp', '1', '--latency-model', backend, '--num-requests', '5'];
        checkOutcome(await worker.run(argv, dir), { 'hw.json': hw });
      }),
      fuzzParams('hardware catalogs', 60),
    );
  }, fuzzTimeout(120_000));
});
