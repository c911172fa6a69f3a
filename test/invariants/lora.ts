/**
 * LoRA slot conservation (the reference's INV-L3..L5 for the resident-adapter set), per instance:
 *   - an adapter is resident at most once and never more adapters than slots;
 *   - resident = loads - evictions (every load fills a slot its start reserved, every eviction frees one);
 *   - the adapter being loaded is not resident yet;
 *   - pins: each resident adapter is pinned by exactly the requests here that hold a pin on it, every pin holder
 *     has its adapter resident (pinned adapters are never evicted), and every running request with an adapter
 *     holds a pin (it was admitted only once its adapter was resident).
 */
import { RequestState } from '../../src/domain/request.js';
import type { Instance } from '../../src/instance/instance.js';

export function loraViolations(inst: Instance): string[] {
  const lora = inst.lora;
  if (lora === null) return [];
  const v: string[] = [];
  const at = `INV-L ${inst.id}`;
  const ids = lora.resident.ids();
  if (new Set(ids).size !== ids.length) v.push(`${at}: an adapter is resident twice (${ids.join(', ')})`);
  if (ids.length > lora.resident.capacity) v.push(`${at}: ${ids.length} adapters resident in ${lora.resident.capacity} slots`);
  let loads = 0;
  let evictions = 0;
  for (const n of inst.metrics.adapterLoads.values()) loads += n;
  for (const n of inst.metrics.adapterEvictions.values()) evictions += n;
  if (ids.length !== loads - evictions) v.push(`${at}: ${ids.length} resident but ${loads} loads - ${evictions} evictions`);
  if (lora.loading !== '' && lora.resident.has(lora.loading)) v.push(`${at}: ${lora.loading} is being loaded but already resident`);
  const pins = new Map<string, number>();
  for (const r of inst.metrics.requests) {
    if (!r.adapterPinned) continue;
    pins.set(r.adapter, (pins.get(r.adapter) ?? 0) + 1);
    if (!lora.resident.has(r.adapter)) v.push(`${at}: ${r.id} pins ${r.adapter}, which is not resident (a pinned adapter was evicted)`);
  }
  for (const id of ids) {
    if (lora.resident.pinsOf(id) !== (pins.get(id) ?? 0)) v.push(`${at}: ${id} has ${lora.resident.pinsOf(id)} pins but ${pins.get(id) ?? 0} requests hold one`);
  }
  for (const r of inst.runningBatch) {
    if (r.state === RequestState.Running && r.adapter !== '' && !r.adapterPinned) v.push(`${at}: ${r.id} runs with adapter ${r.adapter} but holds no pin`);
  }
  return v;
}
