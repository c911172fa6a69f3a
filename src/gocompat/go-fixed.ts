/**
 * Go's `%.Nf`, shared by every layer that prints numbers the way the reference does (report sections,
 * decision-trace reasons, error messages).
 */
const TIE_PROBE_DIGITS = 25;

/**
 * Go's `%.Nf`. Go rounds the exact binary value half-to-even; JS `toFixed` rounds an exact tie away from zero
 * (0.8125 at 3 places: Go "0.812", JS "0.813"). A tie needs the exact expansion to stop at digit N+1 with a
 * 5; any double that is not such a tie differs from one well before the probe depth, so a wider toFixed
 * reveals it.
 */
export function goFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const abs = Math.abs(x);
  if (digits <= 22) {
    // Most values are nowhere near a tie: x·10^N (computed with a relative error below 2^-52) is then far from
    // k + 1/2, and toFixed alone is right. Only near-ties pay for the exact probe below (it is ~10x slower, and
    // decision reasons format a number per routing).
    const y = abs * 10 ** digits;
    if (Math.abs(y - Math.floor(y) - 0.5) > 1e-9 * (y + 1)) return sign + abs.toFixed(digits);
  }
  const wide = abs.toFixed(digits + TIE_PROBE_DIGITS);
  const cut = wide.length - TIE_PROBE_DIGITS;
  if (/^50*$/.test(wide.slice(cut))) {
    const kept = wide.slice(0, cut).replace(/\.$/, '');
    const last = kept.charCodeAt(kept.length - 1) - 48;
    if (last % 2 === 0) return sign + kept;
  }
  return sign + abs.toFixed(digits);
}

