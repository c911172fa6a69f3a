/**
 * Go's `sort.Slice` (pattern-defeating quicksort, Go 1.19+), element for element. It is not stable: elements
 * that compare equal end in an order that depends on the algorithm, and the reference's outputs (e.g. the
 * per-request list of `--metrics-path`, sorted by arrival time) show that order. Porting the algorithm — its
 * insertion-sort cutoff, pivot choice, pattern breaking (a xorshift seeded by the length, so deterministic),
 * partial insertion sort and heapsort fallback — reproduces it exactly for the same input order.
 */

type Less = (i: number, j: number) => boolean;

/** Sorts `data` in place exactly as Go's `sort.Slice(data, func(i, j) bool { return less(data[i], data[j]) })`. */
export function goSortSlice<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const lessAt: Less = (i, j) => less(data[i] as T, data[j] as T);
  const swap = (i: number, j: number): void => {
    const t = data[i] as T;
    data[i] = data[j] as T;
    data[j] = t;
  };
  pdqsort({ less: lessAt, swap }, 0, data.length, bitsLen(data.length));
}

interface LessSwap {
  readonly less: Less;
  readonly swap: (i: number, j: number) => void;
}

const INCREASING = 1;
const DECREASING = 2;
const UNKNOWN = 0;

function bitsLen(n: number): number {
  return n === 0 ? 0 : Math.floor(Math.log2(n)) + 1;
}

function insertionSort(d: LessSwap, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) for (let j = i; j > a && d.less(j, j - 1); j--) d.swap(j, j - 1);
}

function siftDown(d: LessSwap, lo: number, hi: number, first: number): void {
  let root = lo;
  for (;;) {
    let child = 2 * root + 1;
    if (child >= hi) return;
    if (child + 1 < hi && d.less(first + child, first + child + 1)) child++;
    if (!d.less(first + root, first + child)) return;
    d.swap(first + root, first + child);
    root = child;
  }
}

function heapSort(d: LessSwap, a: number, b: number): void {
  const first = a;
  const hi = b - a;
  for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) siftDown(d, i, hi, first);
  for (let i = hi - 1; i >= 0; i--) {
    d.swap(first, first + i);
    siftDown(d, 0, i, first);
  }
}

function pdqsort(d: LessSwap, a: number, b: number, limit: number): void {
  const maxInsertion = 12;
  let wasBalanced = true;
  let wasPartitioned = true;
  for (;;) {
    const length = b - a;
    if (length <= maxInsertion) {
      insertionSort(d, a, b);
      return;
    }
    if (limit === 0) {
      heapSort(d, a, b);
      return;
    }
    if (!wasBalanced) {
      breakPatterns(d, a, b);
      limit--;
    }
    let [pivot, hint] = choosePivot(d, a, b);
    if (hint === DECREASING) {
      reverseRange(d, a, b);
      pivot = b - 1 - (pivot - a);
      hint = INCREASING;
    }
    if (wasBalanced && wasPartitioned && hint === INCREASING && partialInsertionSort(d, a, b)) return;
    if (a > 0 && !d.less(a - 1, pivot)) {
      a = partitionEqual(d, a, b, pivot);
      continue;
    }
    const [mid, already] = partition(d, a, b, pivot);
    wasPartitioned = already;
    const leftLen = mid - a;
    const rightLen = b - mid;
    const balanceThreshold = Math.trunc(length / 8);
    if (leftLen < rightLen) {
      wasBalanced = leftLen >= balanceThreshold;
      pdqsort(d, a, mid, limit);
      a = mid + 1;
    } else {
      wasBalanced = rightLen >= balanceThreshold;
      pdqsort(d, mid + 1, b, limit);
      b = mid;
    }
  }
}

function partition(d: LessSwap, a: number, b: number, pivot: number): [number, boolean] {
  d.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  while (i <= j && d.less(i, a)) i++;
  while (i <= j && !d.less(j, a)) j--;
  if (i > j) {
    d.swap(j, a);
    return [j, true];
  }
  d.swap(i, j);
  i++;
  j--;
  for (;;) {
    while (i <= j && d.less(i, a)) i++;
    while (i <= j && !d.less(j, a)) j--;
    if (i > j) break;
    d.swap(i, j);
    i++;
    j--;
  }
  d.swap(j, a);
  return [j, false];
}

function partitionEqual(d: LessSwap, a: number, b: number, pivot: number): number {
  d.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  for (;;) {
    while (i <= j && !d.less(a, i)) i++;
    while (i <= j && d.less(a, j)) j--;
    if (i > j) break;
    d.swap(i, j);
    i++;
    j--;
  }
  return i;
}

function partialInsertionSort(d: LessSwap, a: number, b: number): boolean {
  const maxSteps = 5;
  const shortestShifting = 50;
  let i = a + 1;
  for (let step = 0; step < maxSteps; step++) {
    while (i < b && !d.less(i, i - 1)) i++;
    if (i === b) return true;
    if (b - a < shortestShifting) return false;
    d.swap(i, i - 1);
    if (i - a >= 2) {
      for (let j = i - 1; j >= 1; j--) {
        if (!d.less(j, j - 1)) break;
        d.swap(j, j - 1);
      }
    }
    if (b - i >= 2) {
      for (let j = i + 1; j < b; j++) {
        if (!d.less(j, j - 1)) break;
        d.swap(j, j - 1);
      }
    }
  }
  return false;
}

const MASK64 = (1n << 64n) - 1n;

function breakPatterns(d: LessSwap, a: number, b: number): void {
  const length = b - a;
  if (length < 8) return;
  // Go's xorshift over a uint64 seeded with the length; BigInt is fine off the hot path (only unbalanced
  // partitions get here).
  let random = BigInt(length);
  const modulus = BigInt(2 ** bitsLen(length));
  const quarter = Math.trunc(length / 4);
  for (let idx = a + quarter * 2 - 1; idx <= a + quarter * 2 + 1; idx++) {
    random ^= (random << 13n) & MASK64;
    random ^= random >> 17n;
    random ^= (random << 5n) & MASK64;
    let other = Number(random & (modulus - 1n));
    if (other >= length) other -= length;
    d.swap(idx, a + other);
  }
}

function choosePivot(d: LessSwap, a: number, b: number): [number, number] {
  const shortestNinther = 50;
  const maxSwaps = 4 * 3;
  const l = b - a;
  const swaps = { n: 0 };
  const q = Math.trunc(l / 4);
  let i = a + q;
  let j = a + q * 2;
  let k = a + q * 3;
  if (l >= 8) {
    if (l >= shortestNinther) {
      i = median(d, i - 1, i, i + 1, swaps);
      j = median(d, j - 1, j, j + 1, swaps);
      k = median(d, k - 1, k, k + 1, swaps);
    }
    j = median(d, i, j, k, swaps);
  }
  if (swaps.n === 0) return [j, INCREASING];
  if (swaps.n === maxSwaps) return [j, DECREASING];
  return [j, UNKNOWN];
}

function median(d: LessSwap, a: number, b: number, c: number, swaps: { n: number }): number {
  const order2 = (x: number, y: number): [number, number] => {
    if (d.less(y, x)) {
      swaps.n++;
      return [y, x];
    }
    return [x, y];
  };
  [a, b] = order2(a, b);
  [b, c] = order2(b, c);
  [a, b] = order2(a, b);
  void c;
  return b;
}

function reverseRange(d: LessSwap, a: number, b: number): void {
  for (let i = a, j = b - 1; i < j; i++, j--) d.swap(i, j);
}
