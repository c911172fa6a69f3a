/**
 * `--lora-config` and the `--lora-*` flags → the run's LoRA setup (the reference's resolveLoRAConfig): the file's
 * `lora:` block, coefficients it omits from the reference defaults, flags over both; then the adapter
 * references of the workload checked against the registry.
 */
import { adapterReservedBytes, EMPTY_LORA_CONFIG, parseLoraConfig, resolveLora, type AdapterSpec, type ResolvedLora } from '../config/lora.js';
import { checkLoraSchedule, parseLoraSchedule, type PlacementEntry } from '../config/lora-schedule.js';
import { AdapterCost } from '../instance/lora.js';
import { ConfigError } from './config-error.js';
import type { SimEnv } from './env.js';
import type { FlagValues } from './options.js';

export interface LoraSetup {
  /** The cost model shared by every instance; null = LoRA off. */
  readonly cost: AdapterCost | null;
  readonly resolved: ResolvedLora | null;
  /** The declared adapters (even when inert for want of a capacity): workload references are checked against it. */
  readonly registry: readonly AdapterSpec[];
  /** HBM each instance reserves for its adapter slots (bytes; subtracted from auto-sized KV capacity). */
  readonly reservedBytes: number;
}

export const NO_LORA: LoraSetup = { cost: null, resolved: null, registry: [], reservedBytes: 0 };

/** `corrected` (--semantics corrected): adapters without a capacity get one slot (A1) instead of staying inert. */
export function resolveLoraFlags(f: FlagValues, env: SimEnv, corrected = false): LoraSetup {
  const path = f.str('lora-config');
  const given = ['lora-adapter-capacity', 'lora-load-base-latency-us', 'lora-load-bandwidth-bytes-us', 'lora-footprint-bytes-per-rank'].some((n) => f.changed(n));
  if (path === '' && !given) return NO_LORA;
  const file = path === '' ? EMPTY_LORA_CONFIG : parseLoraConfig(env.readText(path, '--lora-config'), path);
  const resolved = resolveLora(file, {
    ...(f.changed('lora-adapter-capacity') ? { adapterCapacity: f.int('lora-adapter-capacity') } : {}),
    ...(f.changed('lora-load-base-latency-us') ? { loadBaseLatencyUs: f.float('lora-load-base-latency-us') } : {}),
    ...(f.changed('lora-load-bandwidth-bytes-us') ? { loadBandwidthBytesUs: f.float('lora-load-bandwidth-bytes-us') } : {}),
    ...(f.changed('lora-footprint-bytes-per-rank') ? { footprintBytesPerRank: f.float('lora-footprint-bytes-per-rank') } : {}),
  }, path === '' ? 'the --lora-* flags' : `--lora-config ${path}`, (m) => env.warn(m), corrected);
  return { cost: resolved === null ? null : new AdapterCost(resolved), resolved, registry: file.adapters, reservedBytes: adapterReservedBytes(resolved) };
}

/**
 * `--lora-placement-schedule`: the file parsed and checked against the adapters, their slots and the instances
 * at start; null when not given.
 * @throws ConfigError when LoRA is off; LoraScheduleError at file:line:col for the file's problems.
 */
export function resolveLoraSchedule(f: FlagValues, env: SimEnv, lora: LoraSetup, numInstances: number): PlacementEntry[] | null {
  const path = f.has('lora-placement-schedule') ? f.str('lora-placement-schedule') : '';
  if (path === '') return null;
  if (lora.resolved === null) {
    throw new ConfigError('bad-flag', `--lora-placement-schedule needs LoRA on: pass --lora-config declaring the adapters, with adapter_capacity (or --lora-adapter-capacity)`, { field: '--lora-placement-schedule' });
  }
  const entries = parseLoraSchedule(env.readText(path, '--lora-placement-schedule'), path);
  checkLoraSchedule(entries, path, lora.resolved.adapters.map((a) => a.id), lora.resolved.capacity, numInstances);
  return entries;
}

/** One workload source's adapter reference: a spec client or cohort, or a trace row. */
export interface AdapterReference {
  readonly kind: string;
  readonly id: string;
  readonly adapter: string;
  /** null: no base-model check (trace rows, whose adapters the reference never checks at all). */
  readonly model: string | null;
}

/**
 * Every referenced adapter must be declared, and an adapter that names a base model attaches only to that model:
 * compared, as in the reference, with the client's own `model` field, or, when `runsOn` is given (--semantics
 * corrected), with the model the client's requests run on: its `model` field, else `runsOn` (the simulated
 * model), case-insensitively as --model is read.
 * @throws ConfigError naming the client and the fix.
 */
export function checkAdapterReferences(refs: Iterable<AdapterReference>, lora: LoraSetup, runsOn: string | null = null): void {
  const byId = new Map(lora.registry.map((a) => [a.id, a]));
  for (const r of refs) {
    if (r.adapter === '') continue;
    if (byId.size === 0) {
      throw new ConfigError('lora-reference', `${r.kind} "${r.id}" uses LoRA adapter "${r.adapter}" but no adapters are declared; pass --lora-config with a lora: block listing it (adapters: [{id: ${r.adapter}, rank: ...}])`);
    }
    const a = byId.get(r.adapter);
    if (a === undefined) {
      throw new ConfigError('lora-reference', `${r.kind} "${r.id}" uses LoRA adapter "${r.adapter}", which --lora-config does not declare (declared: ${[...byId.keys()].sort().join(', ')}); add it or fix the name`);
    }
    if (r.model === null) continue;
    if (runsOn !== null) {
      const model = r.model !== '' ? r.model : runsOn;
      if (a.baseModel !== '' && a.baseModel.toLowerCase() !== model.toLowerCase()) {
        const whose = r.model !== '' ? `has model "${model}"` : `runs on the simulated model "${model}"`;
        throw new ConfigError('lora-reference', `${r.kind} "${r.id}" ${whose} but its LoRA adapter "${r.adapter}" attaches to base model "${a.baseModel}"; use an adapter for "${model}" or fix the adapter's base_model`);
      }
      continue;
    }
    if (a.baseModel !== '' && a.baseModel !== r.model) {
      throw new ConfigError('lora-reference', `${r.kind} "${r.id}" has model "${r.model}" but its LoRA adapter "${r.adapter}" attaches to base model "${a.baseModel}"; set the ${r.kind}'s model to "${a.baseModel}" or use an adapter for "${r.model}"`);
    }
  }
}
