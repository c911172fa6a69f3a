/**
 * `blis report RESULT.json [-o FILE.html]` and `blis compare A.json B.json [...] [--report FILE.html]`. The
 * report layer (and its charting libraries) is loaded only when one of these runs.
 */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { UsageError } from './errors.js';
import type { Io } from './io.js';
import { checkInputsAndOutputs, checkOutputPath, commitOutputs, type OutputFile } from './outputs.js';
import { readInputFile } from './read-input.js';
import { showValue } from '../domain/errors.js';

/** Saved results can carry full decision traces: allow more than the default input cap. */
const MAX_RESULT_BYTES = 1024 * 1024 * 1024;

function read(file: string, output: OutputFile | null): string {
  checkInputsAndOutputs([output], [{ flag: 'result', path: file }]);
  return readInputFile(file, 'result', MAX_RESULT_BYTES);
}

/** Labels for the results: file names without .json, made unique by a #n suffix. */
export function labels(files: readonly string[]): string[] {
  const base = files.map((f) => path.basename(f).replace(/\.json$/i, ''));
  return base.map((b, i) => (base.filter((x) => x === b).length > 1 ? `${b}#${i + 1}` : b));
}

async function loadAll(files: readonly string[], output: OutputFile | null): Promise<import('../report/index.js').ResultView[]> {
  const { loadResult } = await import('../report/index.js');
  const names = labels(files);
  return files.map((f, i) => {
    const text = read(f, output);
    return loadResult(text, f, names[i] as string);
  });
}

export function registerReportCommands(root: Command, io: Io): void {
  const r = root
    .command('report')
    .description('draw a saved result (blis run/replay JSON output, best saved with --report-data, or a blis evaluate result) as one self-contained HTML file')
    .argument('<result>', 'the saved result JSON')
    .option('-o, --output <file>', 'the HTML file to write (default: the result\'s name with .html; - = stdout)');
  r.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  r.action(async (result: string, o: { output?: string }) => {
    if (!/\.json$/i.test(result) && o.output === undefined) throw new UsageError('bad-flag', `${result}: name the output with -o FILE.html (the default replaces a .json extension)`);
    const out = o.output ?? result.replace(/\.json$/i, '.html');
    const file = out === '-' ? null : checkOutputPath('--output', out);
    const [view] = await loadAll([result], file);
    const { renderResultReport } = await import('../report/index.js');
    const html = await renderResultReport(view as import('../report/index.js').ResultView);
    if (file === null) io.stdout(html);
    else {
      commitOutputs([[file, html]]);
      io.info?.(`wrote ${out}`);
    }
  });

  const c = root
    .command('compare')
    .description('compare runs, replays or evaluation results side by side: every shared metric with deltas against the first (table or JSON), and optionally an HTML report with overlaid CDFs and timelines')
    .argument('<results...>', 'two or more saved results (the first is the baseline)')
    .addOption(new Option('--format <format>', 'stdout format: table or json').default('table'))
    .option('--report <file>', 'also write an HTML report (overlaid latency CDFs and cluster timelines need results saved with --report-data)');
  c.exitOverride().configureOutput({ writeOut: (t) => io.stdout(t), writeErr: () => undefined });
  c.action(async (results: string[], o: { format: string; report?: string }) => {
    if (o.format !== 'table' && o.format !== 'json') throw new UsageError('bad-flag', `--format must be table or json, got ${showValue(o.format)}`);
    if (results.length < 2) throw new UsageError('bad-flag', 'blis compare needs at least two results, e.g. blis compare a.json b.json');
    const report = o.report === undefined ? null : checkOutputPath('--report', o.report);
    const views = await loadAll(results, report);
    const rep = await import('../report/index.js');
    const cmp = rep.compareResults(views);
    // The report is written before anything is printed: a failure leaves stdout empty.
    if (report !== null) commitOutputs([[report, await rep.renderComparisonReport(cmp, views)]]);
    io.stdout(o.format === 'json' ? rep.formatComparisonJson(cmp) : rep.formatComparisonText(cmp));
  });
}
