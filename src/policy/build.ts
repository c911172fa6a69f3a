/**
 * From a bundle's evolvable sections to control-point implementations. `preparePolicies` runs once per
 * configuration (it loads the sandbox engines and compiles every code policy to report errors early, at the
 * bundle's file:line); the factory it returns builds fresh policies for each simulation, so no state — a code
 * policy's top-level variables included — leaks from one run into the next.
 */
import type { InstanceScheduler } from '../instance/scheduler.js';
import type { AutoScalePolicy } from '../routing/autoscale.js';
import type { DisaggregationDecider } from '../routing/disaggregation.js';
import type { EncodeDecider } from '../routing/encode-decider.js';
import type { AdmissionPolicy, PriorityPolicy, RoutingPolicy } from '../routing/types.js';
import { loadSandboxEngine } from '../sandbox/index.js';
import { WallClockExceeded, withWallClock } from '../sandbox/watchdog.js';
import { SandboxError, type HostFunction, type SandboxEngine, type SandboxEngineName, type SandboxOptions, type SandboxProgram } from '../sandbox/types.js';
import { codeAdmission, codeAutoscale, codeDisaggregation, codeEncode, codePriority, codeRouting, codeScheduler, compileCode } from './code/adapters.js';
import { PolicyConfigError, PolicyRuntimeError, WallClockError } from './errors.js';
import type { EvolvablePolicies, PolicySpec } from './spec.js';
import {
  buildTemplateAdmission,
  buildTemplateAutoscale,
  buildTemplateDisaggregation,
  buildTemplateEncode,
  buildTemplatePriority,
  buildTemplateRouting,
  buildTemplateScheduler,
  type PolicyBuildContext,
} from './templates/build.js';
import { treeAdmission, treeAutoscale, treeDisaggregation, treeEncode, treePriority, treeRouting, treeScheduler } from './tree/adapters.js';

export interface BuiltPolicies {
  readonly admission: AdmissionPolicy | null;
  readonly priority: PriorityPolicy | null;
  readonly routing: RoutingPolicy | null;
  /** One scheduler per instance (code schedulers each get their own program). */
  readonly scheduler: ((instanceIndex: number) => InstanceScheduler) | null;
  readonly autoscale: AutoScalePolicy | null;
  /** The P/D decider (replaces --pd-decider's built-in). */
  readonly disaggregation: DisaggregationDecider | null;
  /** The E/P/D encode decider (replaces --encode-decider's built-in). */
  readonly encode: EncodeDecider | null;
}

/** Builds the policies of one simulation. */
export type PolicyFactory = (ctx: PolicyBuildContext) => BuiltPolicies;

export interface PreparedPolicies {
  readonly evolvable: EvolvablePolicies;
  readonly build: PolicyFactory;
  /** Whether any control point is an evolvable policy (the cluster then keeps the richer router state). */
  readonly active: boolean;
}

type CodeSpec = Extract<PolicySpec, { type: 'code' }>;

/**
 * Compiles every code section once (errors at the bundle's line), loading only the engines in use. A fast-engine
 * program's top level runs here: with `wallClockMs` > 0 each such compile runs under the wall-clock backstop
 * (sandbox/watchdog.ts), past which it throws a SandboxError `budget`; with `callWallClockMs` > 0 also under
 * the per-call limit (the top level is one call), whichever is shorter.
 */
export async function preparePolicies(ev: EvolvablePolicies, engineOverride: SandboxEngineName | null = null, wallClockMs = 0, callWallClockMs = 0): Promise<PreparedPolicies> {
  const perCall = callWallClockMs > 0 && !(wallClockMs > 0 && wallClockMs <= callWallClockMs);
  const topLevelMs = perCall ? callWallClockMs : wallClockMs;
  const engines = new Map<SandboxEngineName, SandboxEngine>();
  const specs: Partial<Record<string, PolicySpec>> = {};
  const trials = new Map<string, Trial>();
  for (const [point, spec0] of Object.entries(ev.specs)) {
    let spec = spec0;
    if (spec.type === 'code' && engineOverride !== null) spec = { ...spec, engine: engineOverride };
    specs[point] = spec;
    if (spec.type !== 'code') continue;
    if (!engines.has(spec.engine)) engines.set(spec.engine, await loadSandboxEngine(spec.engine));
    const engine = engines.get(spec.engine) as SandboxEngine;
    const codeSpec = spec;
    let trial: Trial | null;
    try {
      trial = spec.engine === 'fast' ? withWallClock(topLevelMs, () => checkCompiles(codeSpec, engine), topLevelMs, perCall ? callWallClockMs : null) : checkCompiles(spec, engine);
    } catch (e) {
      if (e instanceof WallClockExceeded) throw new WallClockError(`${point} policy (${spec.sourceLabel}), its top level: ${e.detail}`, e.perCall);
      throw e;
    }
    if (trial !== null) trials.set(point, trial);
  }
  const engineOf = (s: CodeSpec): SandboxEngine => {
    const engine = engines.get(s.engine) as SandboxEngine;
    const trial = trials.get(s.point);
    if (trial === undefined) return engine;
    // The first build takes over the trial program (compiling it again is most of a short run's fixed cost).
    trials.delete(s.point);
    return { name: engine.name, compile: (source, options) => trial.adopt(source, options) ?? engine.compile(source, options) };
  };
  const build: PolicyFactory = (ctx) => {
    const a = specs['admission'];
    const p = specs['priority'];
    const r = specs['routing'];
    const s = specs['scheduler'];
    const x = specs['autoscale'];
    const dg = specs['disaggregation'];
    const en = specs['encode'];
    return {
      admission: a === undefined ? null : a.type === 'code' ? codeAdmission(a, engineOf(a), ctx) : a.type === 'decision_tree' ? treeAdmission(a.tree, ctx) : buildTemplateAdmission(a.template, a.parameters, ctx),
      priority: p === undefined ? null : p.type === 'code' ? codePriority(p, engineOf(p), ctx) : p.type === 'decision_tree' ? treePriority(p.tree, ctx) : buildTemplatePriority(p.template, p.parameters, ctx),
      routing: r === undefined ? null : r.type === 'code' ? codeRouting(r, engineOf(r), ctx) : r.type === 'decision_tree' ? treeRouting(r.tree, ctx) : buildTemplateRouting(r.template, r.parameters, ctx),
      scheduler: s === undefined ? null : s.type === 'code' ? () => codeScheduler(s, engineOf(s), ctx) : s.type === 'decision_tree' ? ((t) => () => t)(treeScheduler(s.tree)) : ((t) => () => t)(buildTemplateScheduler(s.template, s.parameters)),
      autoscale: x === undefined ? null : x.type === 'code' ? codeAutoscale(x, engineOf(x), ctx) : x.type === 'decision_tree' ? treeAutoscale(x.tree) : buildTemplateAutoscale(x.template, x.parameters),
      disaggregation: dg === undefined ? null : dg.type === 'code' ? codeDisaggregation(dg, engineOf(dg), ctx) : dg.type === 'decision_tree' ? treeDisaggregation(dg.tree) : buildTemplateDisaggregation(dg.template, dg.parameters),
      encode: en === undefined ? null : en.type === 'code' ? codeEncode(en, engineOf(en), ctx) : en.type === 'decision_tree' ? treeEncode(en.tree, ctx) : buildTemplateEncode(en.template, en.parameters),
    };
  };
  return { evolvable: ev, build, active: Object.keys(specs).length > 0 };
}

/**
 * A trial-compiled program the first simulation may use instead of compiling the same source again. It is the
 * program a fresh compile would give only if its top level asked the host for nothing (no random draws: the
 * trial had no stream to draw from), and only before any call; its host functions forward to the ones the
 * adopting compile passes (bound to that simulation's random streams).
 */
class Trial {
  private forward: Readonly<Record<string, HostFunction>> = {};
  hostCalls = 0;
  program: SandboxProgram | null = null;

  constructor(readonly source: string) {}

  /** Host functions for the trial compile: counted, and forwarded once adopted. */
  hostFunctions(trialFns: Readonly<Record<string, HostFunction>>): Record<string, HostFunction> {
    this.forward = trialFns;
    const out: Record<string, HostFunction> = {};
    for (const name of Object.keys(trialFns)) {
      out[name] = (...args: number[]) => {
        this.hostCalls++;
        return (this.forward[name] as HostFunction)(...args);
      };
    }
    return out;
  }

  /** The trial program for a compile of the same source with the same host function names, or null. */
  adopt(source: string, options: SandboxOptions): SandboxProgram | null {
    const prog = this.program;
    this.program = null;
    const fns = options.hostFunctions ?? {};
    if (prog === null || this.hostCalls > 0 || source !== this.source || Object.keys(fns).join() !== Object.keys(this.forward).join()) return null;
    this.forward = fns;
    return prog;
  }
}

/**
 * A trial compile: syntax errors, missing entry points and failing top-level code, at the bundle's line.
 * Returns the program for the first build to adopt (null for a scheduler, whose trial calls it).
 */
function checkCompiles(spec: CodeSpec, engine: SandboxEngine): Trial | null {
  try {
    let trial: Trial | null = null;
    const recording: SandboxEngine = {
      name: engine.name,
      compile: (source, options) => {
        trial = new Trial(source);
        return engine.compile(source, { ...options, hostFunctions: trial.hostFunctions(options.hostFunctions ?? {}) });
      },
    };
    const prog = compileCode(spec, recording, null);
    if (spec.point === 'scheduler') {
      const hooks = prog.call('$blisHooks', []) as boolean[];
      if (!hooks.some(Boolean)) {
        throw new SandboxError('entrypoint', spec.engine, null, 0, `a code scheduler defines ${spec.entrypoint}, selectPreemptionVictim or onRequestArrival; none found`);
      }
      prog.dispose();
      return null;
    }
    const t = trial as Trial | null;
    if (t === null || t.hostCalls > 0) {
      prog.dispose();
      return null;
    }
    t.program = prog;
    return t;
  } catch (e) {
    if (!(e instanceof SandboxError) && !(e instanceof PolicyRuntimeError)) throw e;
    const detail = e instanceof SandboxError ? e.detail : e.message;
    const kind = e instanceof SandboxError ? e.kind : 'decision';
    // Point at the offending line in the bundle (inline source) or the code file, when the engine says which.
    let [file, line, col] = spec.where.split(':') as [string, string, string];
    const at = /\((\d+):(\d+)\)|line (\d+)/.exec(detail);
    if (at !== null) {
      const userLines = spec.source.replace(/\n+$/, '').split('\n').length;
      const l = Math.min(Number(at[1] ?? at[3]), userLines);
      if (spec.sourceLine > 0) [line, col] = [String(spec.sourceLine + l - 1), '1'];
      else [file, line, col] = [spec.sourceLabel, String(l), String(Number(at[2] ?? 0) + 1)];
    }
    const fix = kind === 'syntax' ? 'fix the JavaScript syntax'
      : kind === 'entrypoint' ? `define function ${spec.entrypoint}(...) at top level, or set entrypoint: to the name you used`
      : kind === 'forbidden' ? 'policies cannot import modules or use async code, generators or regular expressions (docs/policies.md lists what the sandbox provides)'
      : 'top-level code must finish within the budget';
    throw new PolicyConfigError('POLICY_CODE', { file, pos: { line: Number(line), col: Number(col) } }, `${spec.point}.${spec.sourceLine > 0 ? 'source' : 'file'}`,
      `${spec.engine} engine: ${kind === 'entrypoint' ? 'missing entry point' : kind}: ${detail.replace(/\$blis\w+/g, spec.entrypoint)}${spec.sourceLine > 0 ? ` (the source starts at ${spec.sourceLabel})` : ` (in ${spec.sourceLabel})`}`, fix);
  }
}
