/**
 * Units shared by every layer.
 *
 * Time is an integer number of microseconds (a Tick), stored in a JS number. Every tick value the simulator
 * produces is far below 2^53, so integer arithmetic on numbers is exact. The reference uses Go int64; its
 * `MaxInt64` sentinel (the default horizon) is represented by {@link MAX_INT64}, which is only ever compared,
 * never added to.
 */
export type Tick = number;

/** Go's math.MaxInt64 as a float64 (9223372036854775807 rounds to 2^63). Used for "no horizon". */
export const MAX_INT64 = 2 ** 63;

/** Upper bound (exclusive) of random token ids, as in the reference (`rng.Intn(128000)`). */
export const MAX_TOKEN_ID = 128000;

/** Go `int64(x)` for a float: truncation toward zero; NaN and values >= 2^63 clamp to MaxInt64. */
export function clampToInt64(v: number): number {
  if (Number.isNaN(v) || v >= MAX_INT64) return MAX_INT64;
  return Math.trunc(v);
}

/**
 * Largest token count of one request blis-ts accepts from any input (flags, spec distributions, traces): every
 * token is an element of the request's token array, so a typo such as 2147483648 would exhaust memory long before
 * it could be simulated, and no served model has a context this long.
 */
export const MAX_REQUEST_TOKENS = 10_000_000;
