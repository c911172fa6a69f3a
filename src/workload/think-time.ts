/**
 * Think-time distribution strings (`--think-time-dist` of `blis replay` and `blis observe`), as the reference's
 * `ParseThinkTimeDist` reads them (blis-cluster.md §9.3):
 *
 *   lognormal:mu=<log-seconds>,sigma=<positive>[,min=<time>][,max=<time>]
 *   constant:value=<time>
 *
 * Times take a `us`, `ms` or `s` suffix; a bare number is milliseconds (like `--think-time-ms`). Lognormal
 * parameters are in log-seconds and shifted by ln(1e6) to draw microseconds; a constant of 0 yields 1 µs (the
 * constant sampler never returns less than 1).
 */
import { BlisError } from '../domain/errors.js';
import { goInt64 } from '../gocompat/go-math.js';
import { goLog } from '../gocompat/go-rand.js';
import { goParseFloat } from '../gocompat/go-parse.js';
import { ConstantSampler, LognormalSampler, type LengthSampler } from './spec/length.js';

export class ThinkTimeError extends BlisError {
  constructor(message: string, field: string) {
    super('bad-think-time', message, { field });
    this.name = 'ThinkTimeError';
  }
}

const FORMS = 'lognormal:mu=<log-s>,sigma=<s>[,min=<time>][,max=<time>] or constant:value=<time> (times take us, ms or s; a bare number is ms)';

/** "k=v,k=v" → map; blanks around items are trimmed, empty items skipped, duplicate keys refused. */
function parseParams(text: string, fail: (m: string) => never): Map<string, string> {
  const out = new Map<string, string>();
  if (text.trim() === '') return out;
  for (const raw of text.split(',')) {
    const kv = raw.trim();
    if (kv === '') continue;
    const eq = kv.indexOf('=');
    if (eq < 0) fail(`invalid parameter "${kv}": expected key=value`);
    const key = kv.slice(0, eq);
    if (out.has(key)) fail(`duplicate key "${key}"`);
    out.set(key, kv.slice(eq + 1));
  }
  return out;
}

function float(text: string, what: string, fail: (m: string) => never): number {
  try {
    return goParseFloat(text);
  } catch {
    return fail(`invalid ${what} "${text}": not a number`);
  }
}

/** A time with an optional us/ms/s suffix (bare = ms) in whole µs, truncated as Go's int64() does. */
export function parseTimeToMicros(text: string, what: string, fail: (m: string) => never): number {
  let body = text;
  let scale = 1_000;
  if (text.endsWith('us')) {
    body = text.slice(0, -2);
    scale = 1;
  } else if (text.endsWith('ms')) {
    body = text.slice(0, -2);
  } else if (text.endsWith('s')) {
    body = text.slice(0, -1);
    scale = 1_000_000;
  }
  const v = float(body, what, (m) => fail(body === text ? m : `invalid ${what} "${text}": not a number with a us, ms or s suffix`));
  if (!(v >= 0) || !Number.isFinite(v)) fail(`${what} must be a non-negative finite time, got "${text}"`);
  const us = goInt64(v * scale);
  // Go would wrap such values silently; nothing sensible is that long.
  if (!Number.isSafeInteger(us)) fail(`${what} "${text}" is too large`);
  return us;
}

/**
 * The sampler a think-time string describes.
 * @param flag the option it came from (named in errors).
 * @throws ThinkTimeError naming the option, the bad part and the accepted forms.
 */
export function parseThinkTimeDist(spec: string, flag = '--think-time-dist'): LengthSampler {
  const fail = (m: string): never => {
    throw new ThinkTimeError(`${flag} "${spec}": ${m}; expected ${FORMS}`, flag);
  };
  const colon = spec.indexOf(':');
  if (colon < 0) fail('missing "type:" prefix');
  const type = spec.slice(0, colon);
  const params = parseParams(spec.slice(colon + 1), fail);
  const need = (key: string): string => {
    const v = params.get(key);
    if (v === undefined) fail(`${type} requires parameter "${key}"`);
    return v as string;
  };
  switch (type) {
    case 'lognormal': {
      const muText = need('mu');
      const sigmaText = need('sigma');
      const mu = float(muText, 'mu', fail);
      if (!Number.isFinite(mu)) fail(`mu must be a finite number, got "${muText}"`);
      const sigma = float(sigmaText, 'sigma', fail);
      if (!Number.isFinite(sigma) || !(sigma > 0)) fail(`sigma must be a finite positive number, got "${sigmaText}"`);
      const minText = params.get('min');
      const maxText = params.get('max');
      const min = minText === undefined ? 0 : parseTimeToMicros(minText, 'min', fail);
      const max = maxText === undefined ? 0 : parseTimeToMicros(maxText, 'max', fail);
      if (min > 0 && max > 0 && min > max) fail(`min (${min} µs) must be <= max (${max} µs)`);
      // mu is in log-seconds; the sampler draws µs.
      return new LognormalSampler(mu + goLog(1e6), sigma, min, max);
    }
    case 'constant':
      return new ConstantSampler(parseTimeToMicros(need('value'), 'value', fail));
    default:
      return fail(`unsupported type "${type}" (supported: lognormal, constant)`);
  }
}
