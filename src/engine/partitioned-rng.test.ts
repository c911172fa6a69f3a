import { describe, expect, it } from 'vitest';
import { GoRand } from '../gocompat/go-rand.js';
import { PartitionedRng, SUBSYSTEM_WORKLOAD, fnv1a64 } from './partitioned-rng.js';

// Hash and stream values below were produced with Go 1.19 (hash/fnv, math/rand) on linux/amd64.

describe('fnv1a64', () => {
  it('matches the standard FNV-1a test vectors', () => {
    expect(fnv1a64('')).toBe(14695981039346656037n);
    expect(fnv1a64('a')).toBe(12638187200555641996n);
  });

  it('matches Go hash/fnv for the subsystem names and for non-ASCII text (UTF-8 bytes)', () => {
    expect(fnv1a64('workload')).toBe(6817975948066808924n);
    expect(fnv1a64('workload-gen')).toBe(7079132663427089759n);
    expect(fnv1a64('router')).toBe(11591039486880609604n);
    expect(fnv1a64('kv-offload')).toBe(5706539092703791860n);
    expect(fnv1a64('instance_0')).toBe(4261570529227722053n);
    expect(fnv1a64('instance_1')).toBe(4261569429716093842n);
    expect(fnv1a64('héllo')).toBe(11772399666002542816n);
  });
});

describe('PartitionedRng', () => {
  it('returns the same generator instance for the same name', () => {
    const p = new PartitionedRng(42n);
    const a = p.forSubsystem('router');
    a.int63();
    expect(p.forSubsystem('router')).toBe(a);
    expect(p.forSubsystem('instance_0')).not.toBe(a);
  });

  it('seeds "workload" with the plain master seed', () => {
    const p = new PartitionedRng(42n);
    expect(p.seedFor(SUBSYSTEM_WORKLOAD)).toBe(42n);
    expect(p.forSubsystem('workload').int63Big()).toBe(new GoRand(42n).int63Big());
  });

  it('derives other seeds as seed XOR int64(fnv1a64(name)), matching Go', () => {
    const cases: Array<[bigint, string, bigint, bigint]> = [
      [42n, 'workload', 42n, 3440579354231278675n],
      [42n, 'workload-gen', 7079132663427089781n, 8021973113318348621n],
      [42n, 'router', -6855704586828941970n, 2209865534360810960n],
      [42n, 'instance_0', 4261570529227722095n, 2625784627403609769n],
      [-7n, 'workload', -7n, 747107023976529931n],
      [-7n, 'workload-gen', -7079132663427089754n, 1730552135196688317n],
      [-7n, 'router', 6855704586828942013n, 6809813514499744739n],
      [-7n, 'instance_0', -4261570529227722052n, 6177889608695218825n],
    ];
    for (const [seed, name, derived, first] of cases) {
      const p = new PartitionedRng(seed);
      expect(p.seedFor(name), `${seed} ${name}`).toBe(derived);
      expect(p.forSubsystem(name).int63Big(), `${seed} ${name}`).toBe(first);
    }
  });

  it('keeps subsystems isolated: draws from one do not shift another', () => {
    const p = new PartitionedRng(7n);
    const q = new PartitionedRng(7n);
    for (let i = 0; i < 1000; i++) p.forSubsystem('router').intn(10);
    const fromP = [1, 2, 3].map(() => p.forSubsystem('workload-gen').int63Big());
    const fromQ = [1, 2, 3].map(() => q.forSubsystem('workload-gen').int63Big());
    expect(fromP).toEqual(fromQ);
  });

  it('normalises the master seed to int64', () => {
    expect(new PartitionedRng(1n << 64n).seed).toBe(0n);
    expect(new PartitionedRng((1n << 64n) - 1n).seed).toBe(-1n);
  });
});
