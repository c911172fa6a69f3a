/**
 * `blis convert preset|inference-perf|servegen`: print a spec v2 YAML on stdout (the conversions themselves are
 * pure functions in src/workload/profiles/convert.ts; servegen-files.ts reads a ServeGen directory). Bad input ends as one `error:` line and exit 2, through
 * the coded errors main.ts reports.
 */
import { Command, Option } from 'commander';
import { UsageError } from './errors.js';
import { checkIntText, parseFloatFlag, parseIntFlag } from '../sim/options.js';
import type { Io } from './io.js';
import { SEMANTICS, isSemantics } from '../domain/semantics.js';
import { showValue } from '../domain/errors.js';
import { readInputFile } from './read-input.js';

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
    .description('convert a preset, an inference-perf spec or a ServeGen data directory to a workload spec v2 YAML (printed on stdout)');
  convert.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  convert.action(() => {
    throw new UsageError('bad-flag', 'blis convert needs a subcommand: preset, inference-perf or servegen (see blis convert --help)');
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
}
