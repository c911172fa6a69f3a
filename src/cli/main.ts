/**
 * The `blis` command line. The only module that exits or touches process streams (through {@link Io}).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import type { SimulationObserver } from './commands.js';
import { registerComposeCommand, registerConvertCommand } from './convert-command.js';
import { registerPoliciesCommand } from './policies-command.js';
import { registerEvaluateCommands } from './evaluate-command.js';
import { registerSweepCommands } from './sweep-command.js';
import { registerReportCommands } from './report-command.js';
import { EXIT_INTERNAL, EXIT_USAGE, RunFailure, UsageError, isCodedError } from './errors.js';
import { readFlags, registerFlags } from './flags.js';
import { examplesText } from './help-examples.js';
import type { CommandName } from './flags-io.js';
import { LOG_LEVELS, ioAtLevel, processIo, type Io, type LogLevel } from './io.js';

// bin/blis.js takes the process streams from here: dist/cli/main.js is the CLI's one bundle entry point.
export { processIo };
import { oneLine, showValue } from '../domain/errors.js';

/** The I/O commands: a simulated server, a load generator for real servers, and their comparison. */
const IO_COMMANDS: readonly [CommandName, string][] = [
  ['serve', 'serve a simulated instance over vLLM\'s OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions, /metrics), paced to wall time'],
  ['observe', 'send a workload to an OpenAI-compatible server (vLLM, SGLang, blis serve) and record a TraceV2 trace'],
  ['calibrate', 'compare an observed trace with its replay (blis replay --results-path): MAPE, Pearson r, quality per metric'],
];

/**
 * The subcommand `argv` invokes (`blis help run` names run too), or null. Only its flags are registered:
 * building the option objects of every command cost more than the rest of `blis --help`.
 */
function invoked(argv: readonly string[]): string | null {
  const i = argv.findIndex((a) => !a.startsWith('-'));
  if (i < 0) return null;
  return argv[i] === 'help' ? (argv[i + 1] ?? null) : (argv[i] as string);
}

/** The package version (package.json sits at the root above src/ and dist/, whichever bundle chunk this is in). */
export function packageVersion(): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.slice(0, Math.max(here.lastIndexOf('/dist/'), here.lastIndexOf('/src/')));
  const pkg = createRequire(import.meta.url)(`${root}/package.json`) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

function program(io: Io, onAction: (name: CommandName, cmd: Command) => Promise<void>, wanted: string | null): Command {
  const root = new Command('blis')
    .description('blis-ts: deterministic discrete-event simulator of LLM inference serving clusters')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  const run = root.command('run').description('simulate a generated workload (default: the distribution workload) on one or more instances');
  // `blis completion` lists every command's flags: it registers them all.
  if (wanted === 'run' || wanted === 'completion') registerFlags(run, 'run');
  run.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  run.action(async () => onAction('run', run));
  const replay = root.command('replay').description('replay a TraceV2 trace (--trace-header, --trace-data) through the simulator');
  if (wanted === 'replay' || wanted === 'completion') registerFlags(replay, 'replay');
  replay.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  replay.action(async () => onAction('replay', replay));
  for (const [name, description] of IO_COMMANDS) {
    const c = root.command(name).description(description);
    if (wanted === name || wanted === 'completion') registerFlags(c, name);
    c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
    c.action(async () => onAction(name, c));
  }
  registerConvertCommand(root, io);
  registerComposeCommand(root, io);
  registerPoliciesCommand(root, io);
  registerEvaluateCommands(root, io);
  registerReportCommands(root, io);
  registerSweepCommands(root, io);
  const completion = root.command('completion').description('print a shell completion script (bash, zsh or fish) for every command and flag').argument('<shell>', 'bash, zsh or fish');
  completion.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  completion.action(async (shell: string) => {
    const { SHELLS, completionScript } = await import('./completion.js');
    if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError('bad-flag', `blis completion: the shell must be one of ${SHELLS.join(', ')}; got ${showValue(shell)}`);
    io.stdout(completionScript(root, shell as 'bash' | 'zsh' | 'fish'));
  });
  addLogFlag(root);
  unquoteDefaults(root);
  addExamples(root, '');
  return root;
}

/** Two or three examples after every command's --help (help-examples.ts). */
function addExamples(cmd: Command, path: string): void {
  for (const sub of cmd.commands) {
    const p = path === '' ? sub.name() : `${path} ${sub.name()}`;
    const text = examplesText(p);
    if (text !== '') sub.addHelpText('after', text);
    addExamples(sub, p);
  }
}

/** `--help` shows numeric defaults (and lists of numbers) as numbers (`default: 30`), not as the strings commander holds (`"30"`). */
function unquoteDefaults(cmd: Command): void {
  for (const o of cmd.options) {
    if (o.defaultValueDescription === undefined && typeof o.defaultValue === 'string' && /^-?\d+(\.\d+)?(e-?\d+)?(,-?\d+(\.\d+)?(e-?\d+)?)*$/i.test(o.defaultValue)) o.defaultValueDescription = o.defaultValue;
  }
  for (const sub of cmd.commands) unquoteDefaults(sub);
}

/**
 * Every command takes `--log` (the simulation and I/O commands through their flag tables): an internal error's
 * message says "rerun with --log debug", so each command must accept it.
 */
function addLogFlag(cmd: Command): void {
  for (const sub of cmd.commands) {
    if (!sub.options.some((o) => o.long === '--log')) {
      sub.addOption(new Option('--log <level>', 'stderr diagnostics: debug adds the stack of an internal error').choices(['debug', 'info', 'warn', 'error']).default('warn'));
    }
    addLogFlag(sub);
  }
}

/** Runs the CLI on `argv` (without node and script); returns the exit code. */
export async function main(argv: readonly string[], io: Io = processIo, observe?: SimulationObserver): Promise<number> {
  try {
    const root = program(io, async (name, cmd) => {
      const flags = readFlags(cmd, name);
      const level = flags.str('log');
      if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError('bad-flag', `--log must be one of ${LOG_LEVELS.join(', ')}; got ${showValue(level)}`);
      const out = ioAtLevel(io, level as LogLevel);
      const t0 = performance.now();
      out.logDebug?.(`blis ${name}: ${argv.length} arguments`);
      // Every command's implementation is loaded only when it runs: `blis --help` needs none of them.
      if (name === 'run') await (await import('./commands.js')).runCommand(flags, out, observe);
      else if (name === 'replay') await (await import('./commands.js')).replayCommand(flags, out, observe);
      else if (name === 'serve') await (await import('./serve-command.js')).serveCommand(flags, out);
      else if (name === 'observe') await (await import('./observe-command.js')).observeCommand(flags, out);
      else await (await import('./calibrate-command.js')).calibrateCommand(flags, out);
      out.logDebug?.(`blis ${name}: finished in ${(performance.now() - t0).toFixed(0)} ms`);
    }, invoked(argv));
    if (argv.length === 0) {
      // A bare `blis` is a usage error: the help goes to stderr so nothing lands in a redirected stdout.
      io.info?.(root.helpInformation().trimEnd());
      io.error('a command is required (see the list above, or blis <command> --help)');
      return EXIT_USAGE;
    }
    await root.parseAsync([...argv], { from: 'user' });
    await io.flush?.();
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return flushed(io);
      // Commander puts its suggestion on a line of its own: one line here, with a space.
      io.error(oneLine(`${e.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')} (see blis --help)`));
      return EXIT_USAGE;
    }
    if (isCodedError(e)) {
      io.error(oneLine(e.message));
      return e instanceof RunFailure ? e.exitCode : EXIT_USAGE;
    }
    if (isStdoutError(e)) {
      io.error(stdoutFailure(e));
      return EXIT_USAGE;
    }
    return reportInternal(e, argv, io);
  }
}

/** A write to stdout failed (reported by {@link Io.flush}): the output could not be delivered. */
function isStdoutError(e: unknown): e is Error & { code?: unknown } {
  return e instanceof Error && 'syscall' in e && (e as { syscall?: unknown }).syscall === 'write';
}

function stdoutFailure(e: Error & { code?: unknown }): string {
  if (e.code === 'EPIPE') return 'stdout was closed before the output was written (EPIPE)';
  return `cannot write to stdout: ${e.message}`;
}

async function flushed(io: Io): Promise<number> {
  try {
    await io.flush?.();
    return 0;
  } catch (e) {
    if (!isStdoutError(e)) throw e;
    io.error(stdoutFailure(e));
    return EXIT_USAGE;
  }
}

/**
 * An exception that is not a {@link BlisError}: a bug. One line (the stack only with `--log debug`), exit 70
 * (EX_SOFTWARE), so a caller can tell "bad input" (2) from "blis-ts failed" (70).
 */
export function reportInternal(e: unknown, argv: readonly string[], io: Io): number {
  const debug = argv.some((a, i) => a === '--log=debug' || (a === '--log' && argv[i + 1] === 'debug'));
  const first = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
  io.error(oneLine(`internal: ${first} (a bug in blis-ts; rerun with --log debug for the stack and report it)`));
  if (debug && e instanceof Error && e.stack !== undefined) (io.logDebug ?? io.info)?.(e.stack);
  return EXIT_INTERNAL;
}
