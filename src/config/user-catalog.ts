/**
 * User-supplied model and GPU definitions: HuggingFace config.json files for extra models and
 * hardware_config.json-style files for extra GPUs. Pure functions over already-read text; the CLI reads the
 * files and passes a label (normally the path) that every error message starts with.
 *
 * Model configs are open-ended (HF configs carry hundreds of keys), so only the keys the parser reads are
 * type-checked and everything else passes through. Hardware entries are closed: a misspelt field would
 * otherwise silently read as 0.
 */
import { z } from 'zod';
import type { GpuSpec } from './catalog/hardware.js';
import { GPU_CLASS_NAMES, type GpuClass } from './catalog/gpu-physics.js';
import type { UserGpuPhysics } from './gpu-physics-derive.js';
import type { HFConfigFields } from './catalog/models.js';
import { BlisError, showValue } from '../domain/errors.js';
import { locateJson } from '../format/json-locate.js';
import { parseJson as parseBoundedJson } from '../format/json.js';

export const UserCatalogErrorCode = {
  InvalidJson: 'USER_CATALOG_INVALID_JSON',
  InvalidModelConfig: 'USER_CATALOG_INVALID_MODEL_CONFIG',
  InvalidHardwareConfig: 'USER_CATALOG_INVALID_HARDWARE_CONFIG',
  DuplicateName: 'USER_CATALOG_DUPLICATE_NAME',
} as const;
export type UserCatalogErrorCode = (typeof UserCatalogErrorCode)[keyof typeof UserCatalogErrorCode];

export class UserCatalogError extends BlisError {
  declare readonly code: UserCatalogErrorCode;
  /** Dotted path of the offending field inside the file ('' for the whole file). */
  readonly path: string;

  /** `detail` is the message after the file label (and position); it names `path` itself where that helps. */
  constructor(code: UserCatalogErrorCode, file: string, path: string, detail: string, pos?: { line: number; col: number }) {
    super(code, `${pos === undefined ? file : `${file}:${pos.line}:${pos.col}`}: ${detail}`, { file, field: path === '' ? undefined : path, line: pos?.line, col: pos?.col });
    this.name = 'UserCatalogError';
    this.path = path;
  }
}

/** Numeric config keys may be null in real HF configs; null reads as absent. */
const optNum = z.number().nullable().optional();
const optStr = z.string().nullable().optional();

const ropeScaling = z
  .looseObject({
    type: optStr,
    rope_type: optStr,
    factor: optNum,
    original_max_position_embeddings: optNum,
  })
  .nullable()
  .optional();

const quantizationConfig = z.looseObject({
  quant_method: optStr,
  bits: z.union([z.number(), z.string()]).nullable().optional(),
  config_groups: z
    .record(z.string(), z.looseObject({ weights: z.looseObject({ num_bits: optNum }).nullable().optional() }))
    .nullable()
    .optional(),
});

const textFields = {
  model_type: optStr,
  num_hidden_layers: optNum,
  hidden_size: optNum,
  num_attention_heads: optNum,
  num_key_value_heads: optNum,
  num_kv_heads: optNum,
  multi_query_group_num: optNum,
  head_dim: optNum,
  vocab_size: optNum,
  torch_dtype: optStr,
  dtype: optStr,
  hidden_act: optStr,
  intermediate_size: optNum,
  ffn_hidden_size: optNum,
  intermediate_size_mlp: optNum,
  num_experts: optNum,
  moe_num_experts: optNum,
  n_routed_experts: optNum,
  num_local_experts: optNum,
  num_routed_experts: optNum,
  num_experts_per_tok: optNum,
  moe_intermediate_size: optNum,
  shared_expert_intermediate_size: optNum,
  n_shared_experts: optNum,
  interleave_moe_layer_step: optNum,
  kv_lora_rank: optNum,
  qk_rope_head_dim: optNum,
  first_k_dense_replace: optNum,
  tie_word_embeddings: z.boolean().nullable().optional(),
  max_position_embeddings: optNum,
  rope_scaling: ropeScaling,
  quantization_config: quantizationConfig.nullable().optional(),
};

const hfConfigSchema = z
  .looseObject({ ...textFields, text_config: z.looseObject(textFields).nullable().optional() })
  .refine(
    (c) =>
      c.num_hidden_layers != null ||
      c.hidden_size != null ||
      c.text_config?.num_hidden_layers != null ||
      c.text_config?.hidden_size != null,
    { message: 'not a HuggingFace model config: expected num_hidden_layers or hidden_size (at the top level or in text_config)' },
  );

const fraction = z.number().positive().max(1);
const protocolSchema = z.strictObject({ latencyUs: z.number().nonnegative(), busBandwidthGBs: z.number().positive() });
const linkSchema = z.strictObject({ kind: z.string().default('custom'), small: protocolSchema, large: protocolSchema });

const gpuSchema = z.strictObject({
  _comment: z.string().optional(),
  // corrected-physics only (docs/fidelity.md): how the GPUs talk and how much of the peaks kernels reach.
  interconnect: z.strictObject({ intraNode: linkSchema, interNode: linkSchema, gpusPerNode: z.number().int().positive().default(8) }).optional(),
  efficiency: z.strictObject({ gemm: fraction, attention: fraction, weightRead: fraction, kvRead: fraction }).optional(),
  // corrected-physics from datasheet facts (src/config/gpu-physics-derive.ts) when interconnect/efficiency are absent.
  class: z.enum(GPU_CLASS_NAMES as [GpuClass, ...GpuClass[]]).optional(),
  NVLinkGBs: z.number().nonnegative().optional(),
  PCIeGen: z.literal([3, 4, 5, 6], { error: "must be the PCIe generation the cards talk over: 3, 4, 5 or 6" }).optional(),
  PCIeP2P: z.boolean().optional(),
  mixedDecodeTileRows: z.number().int().nonnegative().max(1024).optional(),
  gpusPerNode: z.number().int().positive().optional(),
  TFlopsPeak: z.number().positive(),
  TFlopsFP8: z.number().nonnegative().default(0),
  BwPeakTBs: z.number().positive(),
  // A model FLOPs utilisation is a fraction of the peak: above 1 the roofline would beat the hardware.
  mfuPrefill: z.number().nonnegative().max(1, 'must be a fraction in [0, 1] (model FLOPs utilisation: 0.45 = 45% of the peak)').default(0),
  mfuDecode: z.number().nonnegative().max(1, 'must be a fraction in [0, 1] (model FLOPs utilisation: 0.30 = 30% of the peak)').default(0),
  MemoryGiB: z.number().nonnegative().default(0),
  // Upstream's interconnect fields (inference-sim PR #1710): GB/s per GPU, the inter-node one the default of
  // --inter-node-bandwidth for this GPU.
  IntraNodeBwGBps: z.number().positive().optional(),
  InterNodeBwGBps: z.number().positive().optional(),
});

const hardwareSchema = z.record(z.string().min(1), gpuSchema);

/** Bounded JSON parsing (src/format) with syntax errors at `file:line:col`, as this module's error type. */
function parseJson(text: string, file: string): unknown {
  try {
    return parseBoundedJson(text, file);
  } catch (e) {
    if (!(e instanceof BlisError)) throw e;
    const pos = e.line === undefined ? undefined : { line: e.line, col: e.col ?? 1 };
    const detail = e.message.startsWith(`${file}:`) ? e.message.slice(e.message.indexOf(': ') + 2) : e.message;
    throw new UserCatalogError(UserCatalogErrorCode.InvalidJson, file, '', detail, pos);
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => {
      if (typeof p === 'number') return `[${p}]`;
      // A key with unusual characters (or none) is quoted so the message stays readable.
      const key = /^[\x21-\x7e]+$/.test(String(p)) ? String(p) : showValue(String(p));
      return i === 0 ? key : `.${key}`;
    })
    .join('');
}

/** All issues in the message, after the first one's `line:col` in the text; its location in `path`. */
function fromZod(code: UserCatalogErrorCode, file: string, text: string, error: z.ZodError): UserCatalogError {
  const first = error.issues[0];
  const message = (i: z.core.$ZodIssue): string => (i.code === 'invalid_key' ? 'a GPU name must be non-empty text' : i.message);
  const details = error.issues.map((i) => (i.path.length > 0 ? `${formatPath(i.path)}: ${message(i)}` : message(i)));
  if (first === undefined) return new UserCatalogError(code, file, '', 'invalid');
  const path = first.path.filter((p): p is string | number => typeof p !== 'symbol');
  const at = first.code === 'unrecognized_keys' && first.keys[0] !== undefined ? [...path, first.keys[0]] : path;
  return new UserCatalogError(code, file, formatPath(first.path), details.join('; ') || 'invalid', locateJson(text, at));
}

/** Validates one HuggingFace config.json; returns it unchanged (extra keys kept) for the config parser. */
export function parseUserModelConfig(jsonText: string, fileLabel: string): HFConfigFields {
  const result = hfConfigSchema.safeParse(parseJson(jsonText, fileLabel));
  if (!result.success) throw fromZod(UserCatalogErrorCode.InvalidModelConfig, fileLabel, jsonText, result.error);
  return result.data as HFConfigFields;
}

export interface UserModelFile {
  /** Folder name, i.e. the model name `--model` must resolve to (org prefix dropped, lowercase). */
  readonly name: string;
  readonly jsonText: string;
  /** Label for messages, e.g. `my-models/foo/config.json`. */
  readonly fileLabel: string;
}

/**
 * Validates a model folder's `<name>/config.json` files. Names are lowercased so that they match the way
 * a `--model` value is looked up; two folders differing only in case are rejected.
 */
export function parseUserModelFolder(files: readonly UserModelFile[]): ReadonlyMap<string, HFConfigFields> {
  const out = new Map<string, HFConfigFields>();
  for (const f of files) {
    const key = f.name.toLowerCase();
    if (out.has(key)) {
      throw new UserCatalogError(
        UserCatalogErrorCode.DuplicateName,
        f.fileLabel,
        '',
        `model "${key}" is defined more than once (names are case-insensitive)`,
      );
    }
    out.set(key, parseUserModelConfig(f.jsonText, f.fileLabel));
  }
  return out;
}

/**
 * Validates a hardware_config.json-style file: an object keyed by GPU name. Unknown fields are errors
 * (except `_comment`); TFlopsPeak and BwPeakTBs are required, the rest default to 0 as in the reference
 * (0 FP8 = no native FP8, 0 memory = no KV auto-sizing, 0 MFU = unusable with roofline).
 */
export function parseUserHardwareConfig(jsonText: string, fileLabel: string): ReadonlyMap<string, GpuSpec> {
  const result = hardwareSchema.safeParse(parseJson(jsonText, fileLabel));
  if (!result.success) throw fromZod(UserCatalogErrorCode.InvalidHardwareConfig, fileLabel, jsonText, result.error);
  const out = new Map<string, GpuSpec>();
  for (const [name, g] of Object.entries(result.data)) {
    out.set(name, {
      TFlopsPeak: g.TFlopsPeak,
      TFlopsFP8: g.TFlopsFP8,
      BwPeakTBs: g.BwPeakTBs,
      mfuPrefill: g.mfuPrefill,
      mfuDecode: g.mfuDecode,
      MemoryGiB: g.MemoryGiB,
      ...(g.IntraNodeBwGBps !== undefined ? { IntraNodeBwGBps: g.IntraNodeBwGBps } : {}),
      ...(g.InterNodeBwGBps !== undefined ? { InterNodeBwGBps: g.InterNodeBwGBps } : {}),
      ...(g.interconnect !== undefined && g.efficiency !== undefined
        ? { physics: { interconnect: g.interconnect, efficiency: g.efficiency, ...(g.mixedDecodeTileRows !== undefined && g.mixedDecodeTileRows > 0 ? { mixedDecodeTileRows: g.mixedDecodeTileRows } : {}) } }
        : userPhysics(g)),
    });
  }
  return out;
}

/** The corrected-physics fields an entry gave short of a complete physics entry (the resolver derives the rest). */
function userPhysics(g: z.infer<typeof gpuSchema>): { userPhysics?: UserGpuPhysics } {
  const u: UserGpuPhysics = {
    ...(g.class !== undefined ? { class: g.class } : {}),
    ...(g.NVLinkGBs !== undefined ? { NVLinkGBs: g.NVLinkGBs } : {}),
    ...(g.PCIeGen !== undefined ? { PCIeGen: g.PCIeGen } : {}),
    ...(g.PCIeP2P !== undefined ? { PCIeP2P: g.PCIeP2P } : {}),
    ...(g.mixedDecodeTileRows !== undefined ? { mixedDecodeTileRows: g.mixedDecodeTileRows } : {}),
    ...(g.gpusPerNode !== undefined ? { gpusPerNode: g.gpusPerNode } : {}),
    ...(g.interconnect !== undefined ? { interconnect: g.interconnect } : {}),
    ...(g.efficiency !== undefined ? { efficiency: g.efficiency } : {}),
  };
  return Object.keys(u).length > 0 ? { userPhysics: u } : {};
}
