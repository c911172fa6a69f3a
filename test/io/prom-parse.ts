/**
 * A strict parser of the Prometheus text exposition format (0.0.4) for tests: every line must be a HELP,
 * TYPE, comment, blank or sample line; samples must belong to the family declared by the latest TYPE; names,
 * labels and values must be well formed; histograms must have cumulative buckets ending in +Inf = _count.
 * Any violation throws with the line number.
 */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PromFamily {
  readonly name: string;
  type: string;
  help: string;
  readonly samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(s: string, line: number): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`line ${line}: bad value "${s}"`);
  return Number(s);
}

function parseLabels(s: string, line: number): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = s.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (s[eq + 1] !== '"') throw new Error(`line ${line}: label ${name} value not quoted`);
    let j = eq + 2;
    let v = '';
    for (;;) {
      const c = s[j];
      if (c === undefined) throw new Error(`line ${line}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = s[j + 1];
        if (n === 'n') v += '\n';
        else if (n === '\\' || n === '"') v += n;
        else throw new Error(`line ${line}: bad escape \\${n ?? ''}`);
        j += 2;
        continue;
      }
      v += c;
      j++;
    }
    if (name in out) throw new Error(`line ${line}: duplicate label ${name}`);
    out[name] = v;
    j++;
    if (j < s.length) {
      if (s[j] !== ',') throw new Error(`line ${line}: expected ',' between labels`);
      j++;
    }
    i = j;
  }
  return out;
}

function belongs(sample: string, fam: PromFamily): boolean {
  if (sample === fam.name) return fam.type !== 'histogram';
  if (fam.type === 'histogram') return [`${fam.name}_bucket`, `${fam.name}_count`, `${fam.name}_sum`].includes(sample);
  if (fam.type === 'summary') return [`${fam.name}_count`, `${fam.name}_sum`].includes(sample);
  return false;
}

function checkHistogram(f: PromFamily): void {
  const series = new Map<string, { les: [number, number][]; count: number | null }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const e = series.get(key) ?? { les: [], count: null };
    series.set(key, e);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      e.les.push([parseValue(le, 0), s.value]);
    } else if (s.name.endsWith('_count')) e.count = s.value;
  }
  for (const [key, e] of series) {
    for (let i = 1; i < e.les.length; i++) {
      const prev = e.les[i - 1] as [number, number];
      const cur = e.les[i] as [number, number];
      if (!(cur[0] > prev[0])) throw new Error(`${f.name}${key}: le not increasing`);
      if (cur[1] < prev[1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    const last = e.les[e.les.length - 1];
    if (last === undefined || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (e.count !== last[1]) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} != _count ${String(e.count)}`);
  }
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, PromFamily>();
  let current: PromFamily | null = null;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((raw, idx) => {
    const n = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (m === null) return;
      const [, kw, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`line ${n}: bad metric name "${name}"`);
      let fam = families.get(name);
      if (fam === undefined) {
        fam = { name, type: 'untyped', help: '', samples: [] };
        families.set(name, fam);
      } else if (fam.samples.length > 0) throw new Error(`line ${n}: ${kw} for ${name} after its samples`);
      if (kw === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`line ${n}: unknown type "${rest}"`);
        fam.type = rest;
      } else fam.help = rest;
      current = fam;
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (m === null) throw new Error(`line ${n}: malformed sample "${raw}"`);
    const [, name, labelText, value] = m as unknown as [string, string, string | undefined, string];
    const fam = current;
    if (fam === null || !belongs(name, fam)) throw new Error(`line ${n}: sample ${name} outside its family's TYPE block`);
    fam.samples.push({ name, labels: labelText === undefined ? {} : parseLabels(labelText, n), value: parseValue(value, n) });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}
