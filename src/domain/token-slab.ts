/**
 * Token-id arrays as views of shared slabs, with the slab space of requests that have left reused.
 *
 * A run generates tens of thousands of token arrays. One ArrayBuffer each made the garbage collector account
 * every one as external memory (frequent forced scavenges, slow frees), so they are views of 1 MiB slabs. A
 * slab left to the collector is freed only by a full collection, which a short run hardly makes: a
 * 10,000-request run wrote 40 MB of fresh slabs, and the kernel's page faults on them were a tenth of the run.
 * So a slab whose every array has been given back ({@link releaseTokenArray}) is handed out again, as it is:
 * whoever takes an array writes every element (zeroing reused slabs cost ~4 ms a run).
 *
 * Only the sole owner of an array may give it back, once, after nothing reads it any more: a workload generator
 * marks the requests whose arrays it made for them alone (`Request.ownsTokens`), and a request gives its arrays
 * back when it leaves the system (`Request.releaseTokens`). An array never given back keeps its slab from being
 * reused, so an array some other code still holds is never overwritten; such a slab is freed by the collector
 * once no view of it is left.
 */

const SLAB_TOKENS = 1 << 18;
/** Arrays longer than this get their own buffer (a slab holds at least eight). */
const MAX_SLAB_ARRAY = SLAB_TOKENS / 8;
/** Emptied slabs kept for reuse at most (16 MiB); more are left to the collector. */
const MAX_SPARE = 16;

interface Slab {
  readonly ids: Int32Array;
  /** Arrays handed out from this slab and not given back yet. */
  live: number;
}

const slabOf = new WeakMap<ArrayBufferLike, Slab>();
const spare: Slab[] = [];
let current: Slab | null = null;
let used = 0;

function nextSlab(): Slab {
  const reused = spare.pop();
  if (reused !== undefined) return reused;
  const slab: Slab = { ids: new Int32Array(SLAB_TOKENS), live: 0 };
  slabOf.set(slab.ids.buffer, slab);
  return slab;
}

/**
 * An Int32Array of `n` tokens for the caller to fill: every element must be written, since a reused slab holds
 * earlier ids (a view of the current slab, or its own zeroed buffer when large).
 */
export function tokenArray(n: number): Int32Array {
  if (n > MAX_SLAB_ARRAY || n === 0) return new Int32Array(n);
  let slab = current;
  if (slab === null || used + n > SLAB_TOKENS) {
    // The slab being left is reused later only if every array in it has been given back by then.
    if (slab !== null && slab.live === 0 && spare.length < MAX_SPARE) spare.push(slab);
    slab = current = nextSlab();
    used = 0;
  }
  const out = slab.ids.subarray(used, used + n);
  used += n;
  slab.live++;
  return out;
}

/**
 * Gives back an array {@link tokenArray} made, for its slab to be reused once all of the slab's arrays are
 * back. Only its sole owner may call this, once, when nothing will read the array again. Arrays not made by
 * tokenArray (their own buffers, a caller's arrays) are ignored.
 */
export function releaseTokenArray(ids: Int32Array): void {
  const slab = slabOf.get(ids.buffer);
  if (slab === undefined) return;
  if (--slab.live === 0 && slab !== current && spare.length < MAX_SPARE) spare.push(slab);
}
