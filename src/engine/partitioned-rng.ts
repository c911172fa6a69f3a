/**
 * Per-subsystem random streams derived from one master seed, as the reference simulator does it.
 *
 * Each subsystem (workload generation, routing, each instance, ...) owns an independent GoRand, so
 * adding or removing draws in one subsystem never shifts the values another one sees. The seed
 * derivation must match the reference exactly for parity: "workload" keeps the master seed (the
 * reference preserved it for backward compatibility), every other name XORs in the name's FNV-1a
 * hash.
 */
import { GoRand } from '../gocompat/go-rand.js';

/** Subsystem whose generator is seeded with the master seed itself. */
export const SUBSYSTEM_WORKLOAD = 'workload';

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const utf8 = new TextEncoder();

/** FNV-1a 64-bit hash of the UTF-8 bytes of `name`, as an unsigned 64-bit value. */
export function fnv1a64(name: string): bigint {
  let h = FNV64_OFFSET;
  for (const byte of utf8.encode(name)) {
    h = BigInt.asUintN(64, (h ^ BigInt(byte)) * FNV64_PRIME);
  }
  return h;
}

export class PartitionedRng {
  /** Master seed, normalised to a signed 64-bit value. */
  readonly seed: bigint;
  private readonly generators = new Map<string, GoRand>();

  constructor(seed: bigint) {
    this.seed = BigInt.asIntN(64, seed);
  }

  /**
   * The int64 seed the subsystem's generator is built from. The reference reinterprets the
   * unsigned hash as int64 before the XOR; with two's-complement BigInt XOR that only matters for
   * keeping the result in signed range, which asIntN guarantees.
   */
  seedFor(name: string): bigint {
    if (name === SUBSYSTEM_WORKLOAD) return this.seed;
    return BigInt.asIntN(64, this.seed ^ BigInt.asIntN(64, fnv1a64(name)));
  }

  /** The subsystem's generator, created on first use; later calls return the same instance. */
  forSubsystem(name: string): GoRand {
    let rng = this.generators.get(name);
    if (rng === undefined) {
      rng = new GoRand(this.seedFor(name));
      this.generators.set(name, rng);
    }
    return rng;
  }
}
