/**
 * The fenced blocks of the markdown docs, and the shell commands in them, for test/docs/examples.test.ts.
 *
 * A block may be preceded (on the nearest non-blank line) by a directive, an HTML comment the rendered page
 * hides: `<!-- doc-test: skip (why) -->` leaves it out of the test, saying why (it needs a Redis server, a real
 * vLLM, an LLM endpoint; or it is an excerpt of output).
 */
import { readFileSync } from 'node:fs';

export interface DocBlock {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string (`sh`, `yaml`, ... or '' for none). */
  readonly lang: string;
  /** The block's text, de-indented to its fence's indentation, ending in a newline. */
  readonly text: string;
  /** The reason given by a `skip` directive, or null. */
  readonly skip: string | null;
}

const DIRECTIVE = /^<!--\s*doc-test:\s*skip\s*\((.+)\)\s*-->$/;

/** Every fenced block of `file` (read from `root`). */
export function docBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(`${root}/${file}`, 'utf8').split('\n');
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] as string);
    if (open === null) continue;
    const indent = open[1] as string;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++) body.push((lines[j] as string).startsWith(indent) ? (lines[j] as string).slice(indent.length) : (lines[j] as string));
    if (j >= lines.length) throw new Error(`${file}:${i + 1}: the fence is never closed`);
    let k = i - 1;
    while (k >= 0 && (lines[k] as string).trim() === '') k--;
    const directive = k >= 0 ? DIRECTIVE.exec((lines[k] as string).trim()) : null;
    if (k >= 0 && directive === null && /doc-test/.test(lines[k] as string)) throw new Error(`${file}:${k + 1}: a malformed doc-test directive (want <!-- doc-test: skip (reason) -->)`);
    out.push({ file, line: i + 1, lang: open[2] as string, text: `${body.join('\n')}\n`, skip: directive === null ? null : (directive[1] as string) });
    i = j;
  }
  return out;
}

/** One shell command: its words, and the file its stdout is redirected to (`> FILE`), if any. */
export interface ShellCommand {
  readonly words: string[];
  readonly stdoutTo: string | null;
  /** The command as written (continuations joined), for messages. */
  readonly source: string;
}

/**
 * The commands of a shell block. `prompted`: only lines starting with `$ ` are commands (the other lines are
 * their output), as in the worked examples that show what a command prints. Continuation lines (ending in `\`)
 * are joined, `# comments` dropped, and `a && b` gives two commands.
 */
export function shellCommands(text: string, prompted: boolean): ShellCommand[] {
  const logical: string[] = [];
  let open: string | null = null;
  for (const raw of text.split('\n')) {
    if (open !== null) {
      open += ` ${raw.trim()}`;
    } else if (prompted) {
      if (!raw.startsWith('$ ')) continue;
      open = raw.slice(2);
    } else {
      if (raw.trim() === '' || raw.trim().startsWith('#')) continue;
      open = raw;
    }
    if (open.endsWith('\\')) {
      open = open.slice(0, -1).trimEnd();
    } else {
      logical.push(open.trim());
      open = null;
    }
  }
  if (open !== null) logical.push(open.trim());
  const out: ShellCommand[] = [];
  for (const line of logical) {
    let words: string[] = [];
    for (const w of [...words0(line), '&&']) {
      if (w !== '&&') {
        words.push(w);
        continue;
      }
      const at = words.indexOf('>');
      out.push({ words: at < 0 ? words : words.slice(0, at), stdoutTo: at < 0 ? null : (words[at + 1] ?? null), source: line });
      words = [];
    }
  }
  return out;
}

/** The words of one command line: quotes ('...' and "...") respected, an unquoted `#` after a space ends the line. */
function words0(line: string): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur ??= '';
    } else if (/\s/.test(ch)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else if (ch === '#' && cur === null) {
      break;
    } else {
      cur = (cur ?? '') + ch;
    }
  }
  if (quote !== null) throw new Error(`unclosed quote in: ${line}`);
  if (cur !== null) words.push(cur);
  return words;
}
