/**
 * Output files, all or nothing. Every path is checked when it is declared — before the simulation or the
 * observation starts — so a mistyped directory fails in a second instead of after the work. At the end each file
 * is written to a temporary name in its own directory and only when every one of them is complete are they
 * renamed over their targets; on any failure the temporaries are removed and no target is touched. Commands
 * write stdout after {@link OutputSet.commit} returns, so stdout never announces files that were not written.
 *
 * Special files (/dev/null, /dev/stdout, a FIFO) cannot be replaced by a rename: they are written in place,
 * after every temporary succeeded.
 */
import { closeSync, lstatSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';

/** A file's contents: one string, or chunks produced while writing (large per-request outputs). */
export type Content = string | Iterable<string>;

/** One declared output: the flag that named it, the path as given, and where it is actually written. */
export interface OutputFile {
  readonly flag: string;
  readonly path: string;
  /** The file the rename replaces (symbolic links resolved), or the special file written in place. */
  readonly target: string;
  readonly special: boolean;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function fail(flag: string, p: string, problem: string): never {
  throw new UsageError('io', `${flag}: cannot write ${p}: ${problem}`);
}

let probes = 0;

/** A temporary name beside `target`, hidden and unique to this process. */
function tempName(target: string, tag: string): string {
  probes++;
  return path.join(path.dirname(target), `.${path.basename(target)}.${tag}-${process.pid}-${probes}`);
}

/**
 * Checks that `p` can be written as the output `flag` names: not a directory, in a directory that exists and
 * accepts new files (tested by creating and removing a file there, which also holds for root and for read-only
 * mounts, where permission bits say nothing).
 * @throws UsageError naming the flag, the path and the fix.
 */
export function checkOutputPath(flag: string, p: string): OutputFile {
  if (p.endsWith('/') || p.endsWith(path.sep)) fail(flag, p, 'the path ends with a separator, so it names a directory; give a file name');
  let target = path.resolve(p);
  try {
    const link = lstatSync(target);
    if (link.isSymbolicLink()) target = realpathSync(target);
    const st = statSync(target);
    if (st.isDirectory()) fail(flag, p, 'it is a directory; give a file name inside it');
    if (!st.isFile()) return { flag, path: p, target, special: true };
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if ((e as { code?: unknown }).code !== 'ENOENT') fail(flag, p, describe(e));
  }
  const dir = path.dirname(target);
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') fail(flag, p, `the directory ${path.dirname(p)} does not exist; create it first`);
    fail(flag, p, describe(e));
  }
  if (!st.isDirectory()) fail(flag, p, `${path.dirname(p)} is not a directory`);
  const probe = tempName(target, 'probe');
  try {
    closeSync(openSync(probe, 'wx'));
    unlinkSync(probe);
  } catch (e) {
    fail(flag, p, `its directory does not accept new files (${describe(e)})`);
  }
  return { flag, path: p, target, special: false };
}

/**
 * `--trace-output PREFIX` writes PREFIX.yaml and PREFIX.csv. A prefix ending in a separator (or `.`, `..`) names
 * a directory, and would write hidden `dir/.yaml` files: it is refused.
 */
export function checkTracePrefix(flag: string, prefix: string): [OutputFile, OutputFile] {
  const base = path.basename(prefix);
  if (prefix.endsWith('/') || prefix.endsWith(path.sep) || base === '' || base === '.' || base === '..') {
    throw new UsageError('io', `${flag} takes a file prefix (it writes PREFIX.yaml and PREFIX.csv), but "${prefix}" names a directory; give e.g. ${path.join(prefix, 'trace')}`);
  }
  return [checkOutputPath(flag, `${prefix}.yaml`), checkOutputPath(flag, `${prefix}.csv`)];
}

/** An input file of a command: the flag (or label) that named it and the path as given. */
export interface InputFile {
  readonly flag: string;
  readonly path: string;
}

/** Where a path leads: the real path (of the file, or of its directory plus its name for a new file) and, for an existing file, its device and inode (hard links). */
interface FileIdentity {
  readonly real: string;
  readonly dev: number;
  readonly ino: number;
}

function identify(p: string): FileIdentity {
  const abs = path.resolve(p);
  try {
    const real = realpathSync(abs);
    const st = statSync(real);
    return { real, dev: st.dev, ino: st.ino };
  } catch {
    try {
      return { real: path.join(realpathSync(path.dirname(abs)), path.basename(abs)), dev: -1, ino: -1 };
    } catch {
      return { real: abs, dev: -1, ino: -1 };
    }
  }
}

function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.real === b.real || (a.ino !== -1 && a.dev === b.dev && a.ino === b.ino);
}

/**
 * The one check that a command's outputs overwrite none of its inputs and none of each other: an output that
 * resolves (symbolic links followed, hard links compared by device and inode) to an input or to an earlier
 * output is refused before any work, so the input stays untouched. Special outputs (/dev/null, a FIFO) are
 * written in place and skipped. Commands call it once their outputs are declared, with the inputs their flags
 * name, and again from their file readers for every input found later (a bundle's code file, a sweep's spec).
 * @throws UsageError `--out FILE is also the --in input; write the output elsewhere`.
 */
export function checkInputsAndOutputs(outputs: readonly (OutputFile | null)[], inputs: readonly InputFile[] = []): void {
  const seen: [OutputFile, FileIdentity][] = [];
  for (const f of outputs) {
    if (f === null || f.special) continue;
    const id = identify(f.target);
    const other = seen.find(([, o]) => sameFile(o, id));
    if (other !== undefined) throw new UsageError('io', `${f.flag} ${f.path} is also the ${other[0].flag} output; write the output elsewhere`);
    seen.push([f, id]);
  }
  if (seen.length === 0) return;
  for (const input of inputs) {
    if (input.path === '' || input.path === '-') continue;
    const id = identify(input.path);
    const hit = seen.find(([, o]) => sameFile(o, id));
    if (hit !== undefined) throw new UsageError('io', `${hit[0].flag} ${hit[0].path} is also the ${input.flag} input; write the output elsewhere`);
  }
}

/** Writes `content` to the open file `fd` in blocks of about 1 MiB. */
function writeAll(fd: number, content: Content): void {
  if (typeof content === 'string') {
    writeBuffer(fd, Buffer.from(content, 'utf8'));
    return;
  }
  let pending: string[] = [];
  let size = 0;
  for (const chunk of content) {
    pending.push(chunk);
    size += chunk.length;
    if (size >= 1 << 20) {
      writeBuffer(fd, Buffer.from(pending.join(''), 'utf8'));
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) writeBuffer(fd, Buffer.from(pending.join(''), 'utf8'));
}

function writeBuffer(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

function writeFileAt(file: string, content: Content, flags: string): void {
  const fd = openSync(file, flags, 0o666);
  try {
    writeAll(fd, content);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes every `[file, content]` pair, all or nothing (see the module comment).
 * @throws UsageError naming the flag and path of the first file that could not be written; no target changed.
 */
export function commitOutputs(entries: readonly (readonly [OutputFile, Content])[]): void {
  const temps: [OutputFile, string][] = [];
  const cleanup = (): void => {
    for (const [, t] of temps) {
      try {
        unlinkSync(t);
      } catch {
        // already gone
      }
    }
  };
  let current: OutputFile | null = null;
  try {
    for (const [f, content] of entries) {
      if (f.special) continue;
      current = f;
      const t = tempName(f.target, 'tmp');
      temps.push([f, t]);
      writeFileAt(t, content, 'wx');
    }
    for (const [f, content] of entries) {
      if (!f.special) continue;
      current = f;
      writeFileAt(f.target, content, 'w');
    }
    for (const [f, t] of temps) {
      current = f;
      renameSync(t, f.target);
    }
  } catch (e) {
    cleanup();
    // Only the file system's own errors are about the output; anything else (a failing renderer) is a bug.
    if (e instanceof UsageError || current === null || typeof (e as { syscall?: unknown }).syscall !== 'string') throw e;
    fail(current.flag, current.path, describe(e));
  }
}
