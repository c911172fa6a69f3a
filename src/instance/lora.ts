/**
 * LoRA adapters on one replica (the reference's `sim/lora` cost model and resident set, blis-core's cold-load
 * gate): a fixed number of adapter slots kept as an LRU over adapter ids, where adapters used by running
 * requests are pinned; loads are serialised and cost `base + ceil(footprint x rank / bandwidth)` µs; every step
 * with adapters in its batch runs `1 + (k6/k7) x distinct adapters` times longer, (k6, k7) taken from the tier
 * of the batch's largest rank (the nearest tier, ties to the lower rank).
 */
import type { Request } from '../domain/request.js';
import { loadLatencyUs, type ResolvedLora } from '../config/lora.js';

/** The per-run cost model (pure; shared by every instance). */
export class AdapterCost {
  private readonly ranks = new Map<string, number>();
  private readonly tierRanks: number[];
  private readonly seen = new Set<string>();

  constructor(readonly cfg: ResolvedLora) {
    for (const a of cfg.adapters) this.ranks.set(a.id, a.rank);
    this.tierRanks = [...cfg.stepOverheadTiers.keys()].sort((a, b) => a - b);
  }

  get capacity(): number {
    return this.cfg.capacity;
  }

  /** Cold-load latency in µs; 0 for '' and for ids not in the registry (they never gate). */
  loadLatency(id: string): number {
    const rank = this.ranks.get(id);
    return rank === undefined ? 0 : loadLatencyUs(this.cfg, rank);
  }

  /** The step-time multiplier of the first `count` requests of `batch` (exactly 1 without registered adapters). */
  stepOverheadFactor(batch: readonly Request[], count: number): number {
    const seen = this.seen;
    seen.clear();
    let maxRank = 0;
    for (let i = 0; i < count; i++) {
      const id = (batch[i] as Request).adapter;
      if (id === '' || seen.has(id)) continue;
      const rank = this.ranks.get(id);
      if (rank === undefined) continue;
      seen.add(id);
      if (rank > maxRank) maxRank = rank;
    }
    if (seen.size === 0 || this.tierRanks.length === 0) return 1;
    let best = this.tierRanks[0] as number;
    for (const r of this.tierRanks) if (Math.abs(maxRank - r) < Math.abs(maxRank - best)) best = r;
    const t = this.cfg.stepOverheadTiers.get(best)!;
    return 1 + (t.k6 / t.k7) * seen.size;
  }

  /** A base step time with the batch's overhead applied (Go's int64 truncation, never below 1). */
  applyOverhead(base: number, batch: readonly Request[], count: number): number {
    const f = this.stepOverheadFactor(batch, count);
    if (!(f > 1) || !Number.isFinite(f)) return base;
    return Math.max(1, Math.trunc(base * f));
  }
}

interface Slot {
  pins: number;
}

/**
 * The resident adapters of one instance: at most `capacity` ids, least recently used first (a Map keeps
 * insertion order, and a touch re-inserts at the end). Pinned ids are never evicted.
 */
export class ResidentAdapters {
  private readonly slots = new Map<string, Slot>();

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new RangeError(`adapter capacity must be > 0, got ${capacity}`);
  }

  get size(): number {
    return this.slots.size;
  }

  get atCapacity(): boolean {
    return this.slots.size >= this.capacity;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  /** Resident ids, least recently used first. */
  ids(): string[] {
    return [...this.slots.keys()];
  }

  /** How many running requests pin `id` (0 when it is not resident). */
  pinsOf(id: string): number {
    return this.slots.get(id)?.pins ?? 0;
  }

  touch(id: string): void {
    const s = this.slots.get(id);
    if (s === undefined) return;
    this.slots.delete(id);
    this.slots.set(id, s);
  }

  /** Makes `id` resident (most recent), evicting the LRU unpinned id when full; false when every slot is pinned. */
  store(id: string): { evicted: string; admitted: boolean } {
    if (this.slots.has(id)) {
      this.touch(id);
      return { evicted: '', admitted: true };
    }
    let evicted = '';
    if (this.atCapacity) {
      const e = this.evictLru();
      if (e === null) return { evicted: '', admitted: false };
      evicted = e;
    }
    this.slots.set(id, { pins: 0 });
    return { evicted, admitted: true };
  }

  /** Removes the least recently used unpinned id; null when empty or all pinned. */
  evictLru(): string | null {
    for (const [id, s] of this.slots) {
      if (s.pins === 0) {
        this.slots.delete(id);
        return id;
      }
    }
    return null;
  }

  pin(id: string): void {
    const s = this.slots.get(id);
    if (s !== undefined) s.pins++;
  }

  unpin(id: string): void {
    const s = this.slots.get(id);
    if (s !== undefined && s.pins > 0) s.pins--;
  }
}

/**
 * One instance's LoRA state: its resident slots, the serialised load in flight, and the per-adapter load and
 * eviction counters it reports. The instance calls it at the reference's points: before batch formation
 * ({@link startLoad}), as the batch gate ({@link held}), when a request enters the batch ({@link pin}) or
 * reaches a terminal state ({@link release}), and when the load event fires ({@link finishLoad}).
 */
export class InstanceAdapters {
  readonly resident: ResidentAdapters;
  /** The adapter being loaded ('' = none). */
  loading = '';
  /**
   * Adapters the placement schedule in force wants here and that are not resident yet (sorted; the next load
   * takes the first). Empty without a schedule.
   */
  private placed: string[] = [];

  constructor(
    readonly cost: AdapterCost,
    private readonly loads: Map<string, number>,
    private readonly evictions: Map<string, number>,
  ) {
    this.resident = new ResidentAdapters(cost.capacity);
  }

  /** True while `r`'s adapter is not resident: it may not enter the batch yet. */
  held(r: Request): boolean {
    return r.adapter !== '' && !this.resident.has(r.adapter);
  }

  /**
   * When no load is in flight and `head` needs an adapter that is not resident: reserve a slot (evicting the
   * least recently used unpinned adapter when full) and start loading. Returns the load time in ticks, or 0
   * when no load starts (also when every slot is pinned: it is retried at the next step). With nothing for
   * `head` to load, the next adapter a placement schedule wants here (if any) starts loading instead.
   */
  startLoad(head: Request | undefined): number {
    if (this.loading !== '') return 0;
    if (head === undefined || !this.held(head)) return this.placed.length === 0 ? 0 : this.startPlacement();
    return this.load(head.adapter);
  }

  /** Reserves a slot for `id` (evicting the LRU unpinned adapter when full) and starts its load; 0 when every slot is pinned. */
  private load(id: string): number {
    if (this.resident.atCapacity) {
      const evicted = this.resident.evictLru();
      if (evicted === null) return 0;
      bump(this.evictions, evicted);
    }
    this.loading = id;
    return Math.max(1, Math.ceil(this.cost.loadLatency(id)));
  }

  /**
   * A placement-schedule entry takes force (--lora-placement-schedule): the instance is to hold `ids`. Only the
   * ones not resident are kept to load, after any request's own load (one load at a time, as every load). An
   * entry replaces the previous one's loads not started yet. Adapters resident but not named stay until LRU
   * evicts them (upstream's `scheduled` policy loads, it never unloads).
   */
  place(ids: readonly string[]): void {
    this.placed = ids.filter((id) => !this.resident.has(id));
  }

  /** Starts the next scheduled placement load, when no load is in flight; the load time in ticks, or 0. */
  startPlacement(): number {
    if (this.loading !== '') return 0;
    while (this.placed.length > 0 && this.resident.has(this.placed[0] as string)) this.placed.shift();
    if (this.placed.length === 0) return 0;
    const ticks = this.load(this.placed[0] as string);
    if (ticks > 0) this.placed.shift();
    return ticks;
  }

  /** The load in flight completes: its adapter becomes resident (the slot was reserved, so nothing is evicted). */
  finishLoad(): void {
    if (this.resident.store(this.loading).admitted) bump(this.loads, this.loading);
    this.loading = '';
  }

  /** A request entering the batch touches its adapter and pins it once for as long as it runs here. */
  pin(r: Request): void {
    if (r.adapter === '') return;
    this.resident.touch(r.adapter);
    if (!r.adapterPinned) {
      this.resident.pin(r.adapter);
      r.adapterPinned = true;
    }
  }

  release(r: Request): void {
    if (r.adapter === '' || !r.adapterPinned) return;
    this.resident.unpin(r.adapter);
    r.adapterPinned = false;
  }
}

function bump(m: Map<string, number>, id: string): void {
  m.set(id, (m.get(id) ?? 0) + 1);
}
