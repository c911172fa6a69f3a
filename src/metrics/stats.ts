/**
 * Exact order statistics with the reference's conventions (blis-core.md §7): linear interpolation at rank
 * p/100·(n−1), results converted from ticks to ms by /1000, mean = (Σ/n)/1000.
 *
 * Large inputs (every ITL of every request: millions of values) use selection instead of a full sort: the
 * result is the same order statistic, in O(n) rather than O(n log n).
 */

/** The values at sorted ranks `ranks` (ascending, distinct) of `a` (reordered in place). */
type Samples = Int32Array | Float64Array;

function selectRanks(a: Samples, ranks: readonly number[]): number[] {
  const out: number[] = [];
  let lo = 0;
  for (const k of ranks) {
    out.push(quickselect(a, lo, a.length - 1, k));
    lo = k; // everything left of k is <= a[k]; later ranks are >= k
  }
  return out;
}

function quickselect(a: Samples, left: number, right: number, k: number): number {
  let l = left;
  let r = right;
  while (r > l) {
    // Median-of-three pivot keeps the deterministic input patterns (sorted runs) linear.
    const m = (l + r) >>> 1;
    const x = a[l] as number;
    const y = a[m] as number;
    const z = a[r] as number;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = l;
    let j = r;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) r = j;
    else if (k >= i) l = i;
    else return a[k] as number;
  }
  return a[k] as number;
}

const SORT_THRESHOLD = 20000;

/**
 * Percentiles `ps` (0–100) of `values` in ms, exactly as the reference's CalculatePercentile over the sorted
 * values. `values` is copied unless `consume` is set, in which case a typed array argument may be reordered.
 */
export function percentilesMs(values: ArrayLike<number>, ps: readonly number[], consume = false): number[] {
  const n = values.length;
  if (n === 0) return ps.map(() => 0);
  const a: Samples = consume && (values instanceof Int32Array || values instanceof Float64Array) ? values : Float64Array.from(values);
  const plan = ps.map((p) => {
    const rank = (p / 100) * (n - 1);
    return { rank, lo: Math.floor(rank), hi: Math.ceil(rank) };
  });
  const need = [...new Set(plan.flatMap((x) => [x.lo, Math.min(x.hi, n - 1)]))].sort((x, y) => x - y);
  const at = new Map<number, number>();
  if (n <= SORT_THRESHOLD) {
    a.sort();
    for (const k of need) at.set(k, a[k] as number);
  } else {
    const vals = selectRanks(a, need);
    need.forEach((k, i) => at.set(k, vals[i] as number));
  }
  return plan.map(({ rank, lo, hi }) => {
    const lv = at.get(lo) as number;
    if (lo === hi) return lv / 1000;
    if (hi >= n) return (at.get(n - 1) as number) / 1000;
    const hv = at.get(hi) as number;
    return lv / 1000 + ((hv - lv) * (rank - lo)) / 1000;
  });
}

/**
 * Mean in ms. The reference sums the sorted values; every input here is an integer tick count whose running
 * sum stays far below 2^53, so any summation order gives the same exact sum.
 */
export function meanMs(values: ArrayLike<number>): number {
  const n = values.length;
  if (n === 0) return 0;
  let s = 0;
  for (let i = 0; i < n; i++) s += values[i] as number;
  return s / n / 1000;
}

/**
 * {@link percentilesMs} over a multiset given as distinct-or-not values with repeat counts: the same result
 * as expanding every value `counts[i]` times. Used for the ITL distribution, whose millions of samples are
 * a few values per simulated step.
 */
export function weightedPercentilesMs(values: Float64Array, counts: Float64Array, ps: readonly number[]): number[] {
  let n = 0;
  for (let i = 0; i < counts.length; i++) n += counts[i] as number;
  if (n === 0) return ps.map(() => 0);
  const plan = ps.map((p) => {
    const rank = (p / 100) * (n - 1);
    return { rank, lo: Math.floor(rank), hi: Math.ceil(rank) };
  });
  const need = [...new Set(plan.flatMap((x) => [x.lo, Math.min(x.hi, n - 1)]))].sort((x, y) => x - y);
  const found = histogramRanks(values, counts, need) ?? sortedRanks(values, counts, need);
  const at = (r: number): number => found[need.indexOf(r)] as number;
  return plan.map(({ rank, lo, hi }) => {
    const lv = at(lo);
    if (lo === hi) return lv / 1000;
    if (hi >= n) return at(n - 1) / 1000;
    const hv = at(hi);
    return lv / 1000 + ((hv - lv) * (rank - lo)) / 1000;
  });
}

/** Values at the 0-based ranks `need` (ascending) of the expanded multiset, through a sort of the pairs. */
function sortedRanks(values: Float64Array, counts: Float64Array, need: readonly number[]): number[] {
  const sorted = sortedPairs(values, counts);
  const sv = sorted.values;
  const cum = sorted.cum;
  return need.map((r) => {
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cum[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return sv[lo] as number;
  });
}

/** Buckets kept between calls (zeroed before each use), so that a short run's histograms allocate nothing. */
const KEPT_BUCKETS = 1 << 16;
/** Buckets per coarse bucket: the walk to a rank skips whole coarse buckets. */
const COARSE_SHIFT = 6;
let kept = new Float64Array(0);
let keptCoarse = new Float64Array(0);

/**
 * {@link sortedRanks} by counting, when every value is an integer (counts too) and they span a range not much
 * wider than the number of pairs: one pass adding each count to its value's bucket (and to its coarse bucket of
 * 64), and one walk over coarse buckets, then buckets, to each rank — instead of a sort. ITLs in µs qualify: a
 * short run's step ITLs span ~16,000 µs over ~2,000 distinct steps per instance. Null when the values do not qualify.
 */
function histogramRanks(values: Float64Array, counts: Float64Array, need: readonly number[]): number[] | null {
  const m = values.length;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < m; i++) {
    const v = values[i] as number;
    const c = counts[i] as number;
    if (!Number.isInteger(v) || !Number.isInteger(c) || c < 0) return null;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max - min + 1;
  if (!(span <= Math.max(8 * m, KEPT_BUCKETS))) return null;
  const coarseLen = (span >> COARSE_SHIFT) + 1;
  let hist: Float64Array;
  let coarse: Float64Array;
  if (span <= KEPT_BUCKETS) {
    if (kept.length < span) {
      kept = new Float64Array(Math.min(KEPT_BUCKETS, Math.max(span, 2 * kept.length)));
      keptCoarse = new Float64Array((kept.length >> COARSE_SHIFT) + 1);
    }
    hist = kept;
    coarse = keptCoarse;
    hist.fill(0, 0, span);
    coarse.fill(0, 0, coarseLen);
  } else {
    hist = new Float64Array(span);
    coarse = new Float64Array(coarseLen);
  }
  for (let i = 0; i < m; i++) {
    const d = (values[i] as number) - min;
    const c = counts[i] as number;
    hist[d] = (hist[d] as number) + c;
    coarse[d >> COARSE_SHIFT] = (coarse[d >> COARSE_SHIFT] as number) + c;
  }
  // The value at rank r is the first whose running count exceeds r; `cum` counts everything below bucket d.
  const out: number[] = [];
  let cum = 0;
  let d = 0;
  for (const r of need) {
    for (;;) {
      if ((d & ((1 << COARSE_SHIFT) - 1)) === 0) {
        const b = coarse[d >> COARSE_SHIFT] as number;
        if (cum + b <= r) {
          cum += b;
          d += 1 << COARSE_SHIFT;
          continue;
        }
      }
      const h = hist[d] as number;
      if (cum + h > r) break;
      cum += h;
      d++;
    }
    out.push(d + min);
  }
  return out;
}

const PACK = 2 ** 21;

/**
 * The (value, count) pairs in ascending value order with running count totals. Only the order of values
 * matters (equal values are interchangeable), so when every value is an integer below 2^32 and every count
 * below 2^21 — ITLs in µs always are — each pair packs exactly into one double (value × 2^21 + count) and a
 * native numeric sort replaces a comparator sort of indexes, several times faster on hundreds of thousands of
 * steps.
 */
function sortedPairs(values: Float64Array, counts: Float64Array): { values: Float64Array; cum: Float64Array } {
  const m = values.length;
  const outV = new Float64Array(m);
  const cum = new Float64Array(m);
  let packable = true;
  for (let i = 0; i < m; i++) {
    const v = values[i] as number;
    const c = counts[i] as number;
    if (!(Number.isInteger(v) && v >= 0 && v < 4294967296 && Number.isInteger(c) && c >= 0 && c < PACK)) {
      packable = false;
      break;
    }
  }
  if (packable) {
    const keys = new Float64Array(m);
    for (let i = 0; i < m; i++) keys[i] = (values[i] as number) * PACK + (counts[i] as number);
    keys.sort();
    let acc = 0;
    for (let j = 0; j < m; j++) {
      const k = keys[j] as number;
      const c = k % PACK;
      outV[j] = (k - c) / PACK;
      acc += c;
      cum[j] = acc;
    }
    return { values: outV, cum };
  }
  const order = Array.from(values.keys()).sort((a, b) => (values[a] as number) - (values[b] as number));
  let acc = 0;
  order.forEach((idx, j) => {
    outV[j] = values[idx] as number;
    acc += counts[idx] as number;
    cum[j] = acc;
  });
  return { values: outV, cum };
}

/** Mean in ms of the multiset (values × counts); exact while the integer sum stays below 2^53. */
export function weightedMeanMs(values: Float64Array, counts: Float64Array): number {
  let n = 0;
  let s = 0;
  for (let i = 0; i < values.length; i++) {
    n += counts[i] as number;
    s += (values[i] as number) * (counts[i] as number);
  }
  return n === 0 ? 0 : s / n / 1000;
}

/**
 * Linear interpolation at rank p/100·(n−1) over ascending values, in the values' own unit (the reference's
 * Distribution and calibration percentiles, unlike {@link percentilesMs}). The float evaluation order is
 * part of the result: `lo + (rank − lo) × (hi − lo)`.
 */
export function percentileFromSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  if (n === 1) return sorted[0] as number;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const lv = sorted[lo] as number;
  if (lo === hi) return lv;
  return lv + (rank - lo) * ((sorted[hi] as number) - lv);
}
