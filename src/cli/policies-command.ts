/**
 * `blis policies`: the control points, templates and decision-tree features as one JSON document.
 * `blis policies export --format llm-d --policy-config FILE`: a bundle's weighted-scorer routing as llm-d's
 * EndpointPickerConfig YAML (src/policy/export-llmd.ts), on stdout or in --output.
 */
import path from 'node:path';
import { Option, type Command } from 'commander';
import { showValue } from '../domain/errors.js';
import { UsageError } from './errors.js';
import type { Io } from './io.js';
import { checkOutputPath, commitOutputs } from './outputs.js';
import { readInputFile } from './read-input.js';
import { parseIntFlag } from '../sim/options.js';

interface ExportFlags {
  readonly format?: string;
  readonly policyConfig: string;
  readonly output?: string;
  readonly apiVersion?: string;
  readonly snapshotRefreshInterval?: string;
  readonly cacheSignalDelay?: string;
}

export function registerPoliciesCommand(root: Command, io: Io): void {
  const c = root
    .command('policies')
    .description('list the policy control points, parameterized templates (parameters, ranges, defaults) and decision-tree features as JSON; policies export: a bundle\'s routing as a real router\'s configuration');
  c.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  c.action(async () => {
    // Loaded on demand: the catalog pulls in the template and feature tables.
    const { policyCatalog } = await import('../policy/catalog.js');
    io.stdout(`${JSON.stringify(policyCatalog(), null, 2)}\n`);
  });
  const e = c
    .command('export')
    .description('write a policy bundle\'s weighted-scorer routing (a --policy-config file, or the best bundle of blis search --best) as the configuration of llm-d\'s endpoint picker (EndpointPickerConfig YAML); what llm-d cannot express is an error naming it')
    .requiredOption('--format <name>', 'target router: llm-d (the gateway-api-inference-extension endpoint picker)')
    .requiredOption('--policy-config <file>', 'the policy bundle (YAML or JSON) to export')
    .option('--output <file>', 'write the YAML to this file instead of stdout')
    .addOption(new Option('--api-version <version>', 'the EndpointPickerConfig apiVersion to write: inference.networking.x-k8s.io/v1alpha1 (default), config.apix.gateway-api-inference-extension.sigs.k8s.io/v1alpha1 or llm-d.ai/v1'))
    .option('--snapshot-refresh-interval <us>', 'the run\'s router signal refresh (µs), when it was not the default: the export says which EPP flag sets it')
    .option('--cache-signal-delay <us>', 'the run\'s prefix-cache signal delay (µs), when it was not the default: the export says what llm-d does instead');
  e.exitOverride().configureOutput({ writeOut: (s) => io.stdout(s), writeErr: () => undefined });
  e.action(async (o: ExportFlags) => {
    if (o.format !== 'llm-d') throw new UsageError('bad-flag', `--format ${showValue(o.format ?? '')} is not a router blis-ts exports to; use --format llm-d`);
    const out = o.output === undefined ? null : checkOutputPath('--output', o.output);
    const text = readInputFile(o.policyConfig, '--policy-config');
    const [{ parsePolicyBundle }, { exportLlmd }] = await Promise.all([import('../policy/bundle.js'), import('../policy/export-llmd.js')]);
    // A code policy's file is read relative to the bundle, as a run reads it (the export then refuses it by name).
    const dir = path.dirname(o.policyConfig);
    const bundle = parsePolicyBundle(text, o.policyConfig, { readFile: (p) => readInputFile(path.isAbsolute(p) ? p : path.join(dir, p), `--policy-config ${o.policyConfig}: code file`) });
    for (const w of bundle.warnings) io.warn(w);
    const r = exportLlmd(bundle, {
      file: o.policyConfig,
      ...(o.apiVersion === undefined ? {} : { apiVersion: o.apiVersion }),
      ...(o.snapshotRefreshInterval === undefined ? {} : { snapshotRefreshIntervalUs: parseIntFlag('--snapshot-refresh-interval', o.snapshotRefreshInterval) }),
      ...(o.cacheSignalDelay === undefined ? {} : { cacheSignalDelayUs: parseIntFlag('--cache-signal-delay', o.cacheSignalDelay) }),
    });
    for (const w of r.warnings) io.warn(w);
    if (out === null) io.stdout(r.yaml);
    else commitOutputs([[out, r.yaml]]);
  });
}
