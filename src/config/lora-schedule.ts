/**
 * The LoRA placement schedule (`--lora-placement-schedule`; upstream's `scheduled` creation policy and its
 * placement-schedule file, inference-sim after the pinned commit: cmd/lora_schedule.go,
 * sim/lora/creation/scheduled.go). One entry a line:
 *
 *     <t_us> <idx>=<adapter>[,<adapter>...][;<idx>=<adapter>...]
 *
 * e.g. `1000000 1=sql,legal;0=med`: from t = 1 s, instance 1 is to hold `sql` and `legal` and instance 0 `med`.
 * Blank lines and lines starting with `#` are skipped. Times are whole microseconds, >= 0 and strictly
 * increasing (the entry in force at t is the latest one at or before t, so an out-of-order file would apply
 * the wrong placement). Every problem is an error at `file:line:col`: the file is the experiment's independent
 * variable, and a dropped line would silently make it another experiment.
 *
 * The text is read through the house's input checks (src/format/: size cap, byte-order mark, binary refused).
 */
import { BlisError } from '../domain/errors.js';
import { checkNotBinary, stripBom } from '../format/csv.js';
import { checkTextSize } from '../format/yaml.js';

/** One timed placement: instance index → the adapters it is to hold from `atUs` on (ids sorted, unique). */
export interface PlacementEntry {
  readonly atUs: number;
  readonly placement: ReadonlyMap<number, readonly string[]>;
  /** 1-based line of the entry in its file (for later checks' messages). */
  readonly line: number;
}

export class LoraScheduleError extends BlisError {
  constructor(message: string, where: { file?: string; line?: number; col?: number; field?: string } = {}) {
    super('LORA_SCHEDULE', message, where);
    this.name = 'LoraScheduleError';
  }
}

const ID = /^[^\s,;=#]+$/;

/**
 * Parses a placement-schedule file (the grammar above).
 * @throws LoraScheduleError at `file:line:col` naming the problem and the fix; an empty schedule is refused.
 */
export function parseLoraSchedule(input: string, file: string): PlacementEntry[] {
  checkTextSize(input, file);
  const fail = (line: number, col: number, problem: string, fix: string): never => {
    throw new LoraScheduleError(`${file}:${line}:${col}: ${problem}; ${fix}`, { file, line, col, field: '--lora-placement-schedule' });
  };
  checkNotBinary(input, file, fail);
  const lines = stripBom(input).split('\n');
  const out: PlacementEntry[] = [];
  for (let li = 0; li < lines.length; li++) {
    const line = li + 1;
    const raw = (lines[li] as string).replace(/\r$/, '');
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    const sp = text.search(/\s/);
    if (sp < 0) fail(line, lead + 1, `want "<t_us> <instance>=<adapter>[,...][;...]", got only ${JSON.stringify(text.slice(0, 40))}`, 'write a time in microseconds, a space, then the placement, e.g. 1000000 1=my-adapter');
    const stamp = text.slice(0, sp);
    if (!/^\d+$/.test(stamp)) {
      const problem = stamp.startsWith('-') && /^-\d+$/.test(stamp) ? `time ${stamp} is negative` : `time ${JSON.stringify(stamp.slice(0, 40))} is not a whole number of microseconds`;
      fail(line, lead + 1, problem, 'write the entry\'s simulated time as an integer number of microseconds >= 0');
    }
    const atUs = Number(stamp);
    if (!Number.isSafeInteger(atUs)) fail(line, lead + 1, `time ${stamp} is too large`, 'use a time below 2^53 µs');
    const prev = out[out.length - 1];
    if (prev !== undefined && atUs <= prev.atUs) {
      fail(line, lead + 1, `time ${atUs} does not increase past line ${prev.line}'s ${prev.atUs}`, 'list entries in strictly increasing time (the latest entry at or before now is the one in force)');
    }
    const specStart = lead + sp + (text.slice(sp).length - text.slice(sp).trimStart().length);
    const spec = text.slice(sp).trimStart();
    const placement = new Map<number, string[]>();
    let at = specStart;
    for (const chunk of spec.split(';')) {
      const col = at + 1 + (chunk.length - chunk.trimStart().length);
      at += chunk.length + 1;
      const c = chunk.trim();
      if (c === '') continue;
      const eq = c.indexOf('=');
      if (eq < 0) fail(line, col, `placement ${JSON.stringify(c.slice(0, 40))} has no "="`, 'write <instance index>=<adapter>[,<adapter>...]');
      const idxText = c.slice(0, eq).trim();
      if (!/^\d+$/.test(idxText) || !Number.isSafeInteger(Number(idxText))) fail(line, col, `instance index ${JSON.stringify(idxText.slice(0, 40))} is not a whole number >= 0`, 'name the instance by its index (0 = the first instance)');
      const idx = Number(idxText);
      if (placement.has(idx)) fail(line, col, `instance ${idx} appears twice in one entry`, 'list all of an instance\'s adapters in one <idx>=a,b group');
      const ids = c.slice(eq + 1).split(',').map((s) => s.trim());
      const seen = new Set<string>();
      for (const id of ids) {
        if (id === '') fail(line, col, `instance ${idx}: an empty adapter id`, 'remove the stray comma or name the adapter');
        if (!ID.test(id)) fail(line, col, `instance ${idx}: adapter id ${JSON.stringify(id.slice(0, 40))} holds a space, "=" or "#"`, 'use the adapter ids --lora-config declares');
        if (seen.has(id)) fail(line, col, `instance ${idx}: adapter "${id}" is listed twice`, 'list each adapter once per instance');
        seen.add(id);
      }
      placement.set(idx, [...seen].sort());
    }
    if (placement.size === 0) fail(line, specStart + 1, 'the entry places no adapter', 'remove the line or name an instance and its adapters (an empty entry would read as a decision)');
    out.push({ atUs, placement, line });
  }
  if (out.length === 0) fail(1, 1, 'the schedule has no entries', 'add lines "<t_us> <instance>=<adapter>,...", or drop --lora-placement-schedule');
  return out;
}

/**
 * Checks a parsed schedule against the run: every adapter declared in --lora-config, every instance index
 * below the number of instances at start, no instance given more adapters than its slots.
 * @throws LoraScheduleError at the entry's line.
 */
export function checkLoraSchedule(entries: readonly PlacementEntry[], file: string, declared: readonly string[], capacity: number, numInstances: number): void {
  const known = new Set(declared);
  for (const e of entries) {
    const fail = (problem: string, fix: string): never => {
      throw new LoraScheduleError(`${file}:${e.line}:1: ${problem}; ${fix}`, { file, line: e.line, col: 1, field: '--lora-placement-schedule' });
    };
    for (const [idx, ids] of e.placement) {
      if (idx >= numInstances) fail(`instance index ${idx} is out of range (the run starts ${numInstances} instance(s), indexes 0..${numInstances - 1})`, 'use an index below --num-instances');
      for (const id of ids) if (!known.has(id)) fail(`adapter "${id}" is not declared in --lora-config (declared: ${[...known].sort().join(', ') || 'none'})`, 'declare it under lora.adapters or fix the name');
      if (ids.length > capacity) fail(`instance ${idx} is given ${ids.length} adapters but holds ${capacity} (adapter_capacity)`, 'place at most adapter_capacity adapters per instance, or raise --lora-adapter-capacity');
    }
  }
}

/**
 * The schedule of one instance: one (time, adapters) step per entry, [] where the entry does not name it (the
 * entry in force then asks nothing of it: loads it had not started yet are dropped, as upstream's diff
 * against the entry in force drops them). Empty when no entry names the instance.
 */
export function instanceSchedule(entries: readonly PlacementEntry[], idx: number): { atUs: number; ids: readonly string[] }[] {
  if (!entries.some((e) => e.placement.has(idx))) return [];
  return entries.map((e) => ({ atUs: e.atUs, ids: e.placement.get(idx) ?? [] }));
}
