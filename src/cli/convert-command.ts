/**
 * `blis convert preset|inference-perf|servegen`: print a spec v2 YAML on stdout (the conversions themselves are
 * pure functions in src/workload/profiles/convert.ts; servegen-files.ts reads a ServeGen directory). Bad input ends as one `error:` line and exit 2, through
 * the coded errors main.ts reports. `blis convert otel|weka` write a TraceV2 pair for `blis replay` instead
 * (src/workload/agentic/; agentic-files.ts reads the input).
 */
import { Command, Option } from 'commander';
import { UsageError } from './errors.js';
import { checkIntText, parseFloatFlag, parseIntFlag } from '../sim/options.js';
import type { Io } from './io.js';
import { SEMANTICS, isSemantics } from '../domain/semantics.js';
import { showValue } from '../domain/errors.js';
import { readInputFile } from './read-input.js';
import { checkTracePrefix, commitOutputs, checkInputsAndOutputs } from './outputs.js';
import { goParseDuration } from '../gocompat/go-parse.js';

function number(flag: string, text: string): number {
  return parseFloatFlag(flag, text);
}

function integer(flag: string, text: string): number {
  return parseIntFlag(flag, text);
}

function seed(text: string): bigint {
  checkIntText('--seed', text.trim());
  const v = BigInt(text.trim());
  if (v > 2n ** 63n - 1n || v < -(2n ** 63n)) throw new UsageError('bad-flag', `--seed is out of the int64 range: ${text}`);
  return v;
}

function readFileText(path: string, flag: string): string {
  return readInputFile(path, flag);
}

function leaf(parent: Command, name: string, description: string, io: Io): Command {
  const c = parent.command(name).description(description);
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  return c;
}

/** Adds `compose`: several specs' clients merged into one spec, printed on stdout. */
export function registerComposeCommand(root: Command, io: Io): void {
  const c = root
    .command('compose')
    .description('merge the client lists of several workload specs v2 into one (rates re-weighted by each spec\'s share), printed as YAML on stdout');
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  c.requiredOption('--from <file>', 'a workload spec v2 YAML (repeat for each spec)', (v: string, prev: string[] = []) => [...prev, v]);
  c.option('--semantics <mode>', 'reference (default): keep only the clients and the first spec\'s category, as the reference does (stderr lists what was dropped); corrected: also keep cohorts, goodput targets, load profiles, and the seed, horizon and num_requests of the first spec that sets each, and refuse specs of different categories', 'reference');
  c.action(async (o: { from: string[]; semantics: string }) => {
    if (!isSemantics(o.semantics)) throw new UsageError('bad-flag', `--semantics must be ${SEMANTICS.join(' or ')}, got ${showValue(o.semantics)}`);
    const { composeSpecsYaml } = await import('../workload/profiles/convert.js');
    const sources = o.from.map((file) => ({ file, text: readFileText(file, '--from') }));
    io.stdout(composeSpecsYaml(sources, { corrected: o.semantics === 'corrected', warn: (m) => io.warn(m) }));
  });
}

/** Adds `convert` and its subcommands to the root program. */
export function registerConvertCommand(root: Command, io: Io): void {
  const convert = root
    .command('convert')
    .description('convert a preset, an inference-perf spec or a ServeGen data directory to a workload spec v2 YAML (printed on stdout), or agentic traces (otel, weka) to a TraceV2 pair for blis replay');
  convert.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  convert.action(() => {
    throw new UsageError('bad-flag', 'blis convert needs a subcommand: preset, inference-perf, servegen, otel or weka (see blis convert --help)');
  });

  const preset = leaf(convert, 'preset', 'the one-client spec that generates exactly the requests of `blis run --workload NAME`', io);
  preset
    .requiredOption('--name <value>', 'distribution, chatbot, contentgen, summarization or multidoc')
    .option('--rate <value>', 'requests per second', '1.0')
    .option('--num-requests <value>', 'number of requests', '100')
    .option('--seed <value>', 'workload seed written into the spec (blis run\'s default)', '42')
    .option('--timeout <value>', 'per-request timeout in seconds written into the spec (<= 0: none)', '300')
    .option('--prefix-tokens <value>', 'shared prefix tokens (prefix group "shared"); default: the preset\'s')
    .addOption(new Option('--defaults-filepath <value>', 'accepted for compatibility; blis-ts embeds the presets').default('defaults.yaml'));
  // The converters load the spec parser (YAML and schema libraries): imported only when a conversion runs.
  preset.action(async (o: Record<string, string | undefined>) => {
    const { convertPreset } = await import('../workload/profiles/convert.js');
    const prefix = o['prefixTokens'];
    io.stdout(
      convertPreset({
        name: o['name'] ?? '',
        rate: number('--rate', o['rate'] ?? ''),
        numRequests: integer('--num-requests', o['numRequests'] ?? ''),
        seed: seed(o['seed'] ?? ''),
        timeoutSecs: number('--timeout', o['timeout'] ?? ''),
        ...(prefix === undefined ? {} : { prefixTokens: integer('--prefix-tokens', prefix) }),
      }),
    );
  });

  const ip = leaf(convert, 'inference-perf', 'expand a spec\'s inference_perf block into explicit clients (rates equivalent in distribution)', io);
  ip.requiredOption('--spec <value>', 'workload spec YAML with an inference_perf section');
  ip.action(async (o: Record<string, string | undefined>) => {
    const { convertInferencePerf } = await import('../workload/profiles/convert.js');
    const path = o['spec'] ?? '';
    io.stdout(convertInferencePerf(readFileText(path, '--spec'), path));
  });

  const sg = leaf(convert, 'servegen', 'a ServeGen data directory (chunk-<id>-trace.csv + chunk-<id>-dataset.json) as cohorts per period and SLO class', io);
  sg.requiredOption('--path <value>', 'ServeGen data directory')
    .option('--window-duration-seconds <value>', 'duration of each period (s)', '600')
    .option('--drain-timeout-seconds <value>', 'gap between periods (s)', '180')
    .option('--time <value>', 'only one period: midnight, morning or afternoon')
    .option('--semantics <mode>', 'reference (default): refuse Poisson-only windows, as the reference cannot convert them; corrected: convert them as Poisson', 'reference');
  sg.action(async (o: Record<string, string | undefined>) => {
    const [{ convertServeGen }, { readServeGenDir }] = await Promise.all([import('../workload/profiles/convert.js'), import('./servegen-files.js')]);
    const dir = o['path'] ?? '';
    const window = integer('--window-duration-seconds', o['windowDurationSeconds'] ?? '');
    const drain = integer('--drain-timeout-seconds', o['drainTimeoutSeconds'] ?? '');
    const semantics = o['semantics'] ?? 'reference';
    if (!isSemantics(semantics)) throw new UsageError('bad-flag', `--semantics must be ${SEMANTICS.join(' or ')}, got ${showValue(semantics)}`);
    io.stdout(convertServeGen(readServeGenDir(dir, '--path'), { dir, windowDurationSecs: window, drainTimeoutSecs: drain, time: o['time'] ?? '', warn: (m) => io.warn(m), ...(semantics === 'corrected' ? { corrected: true } : {}) }));
  });
  registerAgenticConverters(convert, io);
}

/** `--max-think-time` as µs: a Go duration (15s, 500ms) or a bare number of seconds; >= 0. */
function thinkCap(text: string): number {
  const t = text.trim();
  let us: number;
  if (/^\d+(\.\d+)?$/.test(t)) us = Math.round(Number(t) * 1e6);
  else {
    let ns: bigint;
    try {
      ns = goParseDuration(t);
    } catch {
      throw new UsageError('bad-flag', `--max-think-time must be a duration such as 15s, 500ms or 0, got ${showValue(text)}`);
    }
    if (ns < 0n) throw new UsageError('bad-flag', `--max-think-time must be >= 0, got ${showValue(text)}`);
    us = Number(ns / 1000n);
  }
  return us;
}

function agenticLeaf(convert: Command, name: 'otel' | 'weka', description: string, io: Io): void {
  const c = leaf(convert, name, description, io);
  c.requiredOption('--input <path>', name === 'otel' ? 'OTel trace: a JSON file ({"spans": [...]} or an OTLP JSON export), a .jsonl file (one document a line) or a directory of them' : 'WekaTrace JSONL file (one session a line), or a directory of *.json / *.jsonl')
    .requiredOption('--trace-output <prefix>', 'writes <prefix>.yaml and <prefix>.csv (a TraceV2 pair for blis replay)')
    .option('--context-growth <mode>', 'accumulate (each round stored as the delta to the previous prompt plus output, header session_context_growth: accumulate) or independent (each round\'s whole prompt)', 'accumulate')
    .option('--max-think-time <duration>', name === 'otel' ? 'cap on each gap between consecutive calls of a session (0 = none)' : 'cap on each recomputed think time (0 = none: Weka gaps are real away-from-keyboard times)', name === 'otel' ? '15s' : '0')
    .option('--min-rounds <n>', 'skip sessions with fewer usable LLM calls', '1')
    .option('--skip-incomplete', 'drop LLM calls without token counts (with a warning) instead of refusing the input');
  if (name === 'otel') {
    c.option('--include-errors', 'keep LLM calls whose span status is an error (status code 2)')
      .option('--keep-offsets', 'start each session at its recorded offset from the input\'s first call (default: every session at 0), so fixed-accumulate replays the recorded overlap');
  }
  c.action(async (o: Record<string, string | boolean | undefined>) => {
    const growth = String(o['contextGrowth']);
    if (growth !== 'accumulate' && growth !== 'independent') throw new UsageError('bad-flag', `--context-growth must be accumulate or independent, got ${showValue(growth)}`);
    const minRounds = integer('--min-rounds', String(o['minRounds']));
    if (minRounds < 1) throw new UsageError('bad-flag', `--min-rounds must be >= 1, got ${minRounds}`);
    const maxThinkTimeUs = thinkCap(String(o['maxThinkTime']));
    const input = String(o['input']);
    const outs = checkTracePrefix('--trace-output', String(o['traceOutput']));
    checkInputsAndOutputs(outs, [{ flag: '--input', path: input }]);
    const [{ readAgenticDocuments }, { agenticTrace }, reader, { formatTraceHeaderYaml }, { formatTraceCsv }] = await Promise.all([
      import('./agentic-files.js'),
      import('../workload/agentic/encode.js'),
      name === 'otel' ? import('../workload/agentic/otel.js').then((m) => m.readOtelSessions) : import('../workload/agentic/weka.js').then((m) => m.readWekaSessions),
      import('../workload/tracev2-yaml.js'),
      import('../workload/tracev2-csv.js'),
    ]);
    const docs = readAgenticDocuments(input, '--input');
    const sessions = reader(docs, { maxThinkTimeUs, minRounds, skipIncomplete: o['skipIncomplete'] === true, includeErrors: o['includeErrors'] === true, keepOffsets: o['keepOffsets'] === true, warn: (m) => io.warn(m) });
    if (sessions.length === 0) throw new UsageError('bad-flag', `--input ${input}: no usable session found (${name === 'otel' ? 'no LLM call spans with token counts' : 'no main-agent turns'}); check the file, or lower --min-rounds`);
    const trace = agenticTrace(sessions, growth);
    commitOutputs([[outs[0], formatTraceHeaderYaml(trace.header)], [outs[1], formatTraceCsv(trace.records, trace.header.mode)]]);
    io.info?.(`wrote ${trace.records.length} requests of ${sessions.length} sessions to ${String(o['traceOutput'])}.yaml and .csv`);
  });
}

/** Adds `convert otel` and `convert weka` (agentic session traces → TraceV2 files). */
export function registerAgenticConverters(convert: Command, io: Io): void {
  agenticLeaf(convert, 'otel', 'OpenTelemetry traces of LLM calls (gen_ai.* spans; OTLP JSON or upstream\'s agent-trace JSON) to a TraceV2 pair of agentic sessions for blis replay', io);
  agenticLeaf(convert, 'weka', 'SemiAnalysis WekaTrace JSONL (one agent session a line) to a TraceV2 pair of agentic sessions for blis replay', io);
}
