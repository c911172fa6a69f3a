/**
 * The shared parity case p16 (tier-shed + tenant budgets from a policy bundle): parse its policy.yaml, merge
 * it with the policy flags of its recorded argv, and check the result against what the case's notes state.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePolicyBundle } from './bundle.js';
import { resolvePolicySettings } from './resolve.js';
import type { FlagSetting, PolicyFlags } from './resolve.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const parityRoot = path.resolve(projectRoot, '../shared/parity');
const caseDir = existsSync(parityRoot)
  ? readdirSync(parityRoot).filter((d) => d.startsWith('p16-')).map((d) => path.join(parityRoot, d))[0]
  : undefined;

interface CaseArgs {
  readonly argv: readonly string[];
  readonly notes: string;
}

const STRING_FLAGS = ['admission-policy', 'routing-policy', 'routing-scorers', 'scheduler', 'preemption-policy', 'dispatch-order', 'slo-targets'] as const;
const NUMBER_FLAGS = ['token-bucket-capacity', 'token-bucket-refill-rate', 'lora-scorer-weight'] as const;

/** The policy flags present in an argv, all explicit (they were typed on the command line). */
function policyFlags(argv: readonly string[]): PolicyFlags {
  const out: Record<string, FlagSetting<string | number | boolean>> = {};
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]?.replace(/^--/, '') ?? '';
    const next = argv[i + 1] ?? '';
    if ((STRING_FLAGS as readonly string[]).includes(name)) out[name] = { value: next, explicit: true };
    if ((NUMBER_FLAGS as readonly string[]).includes(name)) out[name] = { value: Number(next), explicit: true };
    if (name === 'flow-control') out[name] = { value: true, explicit: true };
  }
  return out;
}

function argValue(argv: readonly string[], flag: string): string {
  const i = argv.indexOf(flag);
  const v = i < 0 ? undefined : argv[i + 1];
  if (v === undefined) throw new Error(`argv has no ${flag}`);
  return v;
}

function noteNumber(notes: string, re: RegExp): number {
  const m = re.exec(notes);
  if (m?.[1] === undefined) throw new Error(`notes do not match ${re}`);
  return Number(m[1]);
}

describe.skipIf(caseDir === undefined)(`parity p16 policy bundle (${caseDir ?? 'skipped: ../shared/parity/p16-* not found next to the project'})`, () => {
  const dir = caseDir ?? '';
  const read = (f: string): string => readFileSync(path.join(dir, f), 'utf8');

  for (const argsFile of ['args.json', 'replay_args.json']) {
    it(`resolves ${argsFile} + policy.yaml to the settings its notes describe`, () => {
      const args = JSON.parse(read(argsFile)) as CaseArgs;
      const main = JSON.parse(read('args.json')) as CaseArgs;
      const notes = main.notes;
      expect(argValue(args.argv, '--policy-config')).toBe('policy.yaml');
      const bundle = parsePolicyBundle(read('policy.yaml'), 'policy.yaml');
      const r = resolvePolicySettings(bundle, policyFlags(args.argv));

      expect(r.admission.policy).toBe('tier-shed');
      expect(r.sources.admissionPolicy).toBe('bundle');
      expect(r.admission.tierShedThreshold).toBe(noteNumber(notes, /tier_shed_threshold (\d+)/));
      expect(r.admission.tierShedMinPriority).toBe(noteNumber(notes, /tier_shed_min_priority (\d+)/));
      expect(r.sloPriorityOverrides).toEqual(new Map([['batch', noteNumber(notes, /batch: (-?\d+)/)]]));
      const budget = noteNumber(notes, /tenant-bulk: ([\d.]+)/);
      expect(r.tenantBudgets).toEqual(new Map([['tenant-bulk', budget]]));
      expect(r.scheduler).toBe(/scheduler ([\w-]+) from the bundle/.exec(notes)?.[1]);
      expect(r.sources.scheduler).toBe('bundle');
      // Routing comes from the explicit flag; no weighted scorers.
      expect(r.routing).toEqual({ policy: argValue(args.argv, '--routing-policy'), scorers: [] });
      expect(r.sources.routingPolicy).toBe('flag');
      expect(r.preemptionPolicy).toBe('fcfs');
      expect(r.sloTargets).toBeNull();
      expect(r.warnings).toEqual([]);

      // The notes' in-flight cap: budget × num-instances × max-num-seqs.
      const cap = budget * Number(argValue(args.argv, '--num-instances')) * Number(argValue(args.argv, '--max-num-seqs'));
      expect(cap).toBeCloseTo(noteNumber(notes, /= ([\d.]+) requests in flight/), 12);
    });
  }
});
