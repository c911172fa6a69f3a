/**
 * Code policies: a sandboxed JavaScript program behind each control-point interface (docs/policies.md).
 *
 * The user's source is compiled together with a small trailer of ours (appended, so the user's line numbers
 * are kept) that hands each call a seeded `state.rng` (`intn(n)`, `float()`) backed by the simulator's
 * partitioned random streams through `__host`; routing draws from the router's own stream, so a code policy
 * that breaks ties like the built-ins reproduces them exactly. Everything else crosses as plain data
 * (view.ts) and every result is checked before the simulator acts on it: a malformed decision or an
 * out-of-range target is a {@link PolicyRuntimeError}, never a silently wrong simulation.
 */
import type { Request } from '../../domain/request.js';
import type { BatchChoice, InstanceScheduler, SchedulerContext } from '../../instance/scheduler.js';
import { clampScaleDecision, type AutoScaleContext, type AutoScalePolicy } from '../../routing/autoscale.js';
import type { DisaggregationDecider } from '../../routing/disaggregation.js';
import type { EncodeContext, EncodeDecider, EncodeDecision } from '../../routing/encode-decider.js';
import type { AdmissionDecision, AdmissionPolicy, PriorityPolicy, RouterState, RoutingDecision, RoutingPolicy } from '../../routing/types.js';
import { SandboxError, kindText, type SandboxEngine, type SandboxProgram } from '../../sandbox/types.js';
import { PolicyRuntimeError } from '../errors.js';
import { disaggregationView, encodeView } from '../pd-view.js';
import type { PolicyBuildContext } from '../templates/build.js';
import type { PolicySpec } from '../spec.js';
import { requestView, schedRequestView, schedulerView, stateView, type ControlPoint } from '../view.js';

type CodeSpec = Extract<PolicySpec, { type: 'code' }>;

/** The trailer appended to the user's source: the wrappers the host calls. */
function trailer(entry: string, point: ControlPoint): string {
  const rng = 'const $blisRng = Object.freeze({ intn(n) { return __host.rngIntn(n); }, float() { return __host.rngFloat(); } });';
  if (point === 'scheduler') {
    return `\n;${rng}
function $blisHooks() { return [typeof ${entry} === 'function', typeof selectPreemptionVictim === 'function', typeof onRequestArrival === 'function']; }
function $blisMakeBatch(ctx) { ctx.rng = $blisRng; return ${entry}(ctx); }
function $blisVictim(ctx) { ctx.rng = $blisRng; return selectPreemptionVictim(ctx); }
function $blisArrival(req, ctx) { ctx.rng = $blisRng; onRequestArrival(req, ctx); return null; }\n`;
  }
  if (point === 'autoscale') return `\n;${rng}\nfunction $blisCall(ctx) { ctx.rng = $blisRng; return ${entry}(ctx); }\n`;
  return `\n;${rng}\nfunction $blisCall(request, state) { state.rng = $blisRng; return ${entry}(request, state); }\n`;
}

const ENTRIES: Readonly<Record<ControlPoint, readonly string[]>> = {
  admission: ['$blisCall'],
  priority: ['$blisCall'],
  routing: ['$blisCall'],
  autoscale: ['$blisCall'],
  disaggregation: ['$blisCall'],
  encode: ['$blisCall'],
  scheduler: ['$blisHooks', '$blisMakeBatch', '$blisVictim', '$blisArrival'],
};

/** Compiles a code spec into a fresh program (its own top-level state) with the point's random stream. */
export function compileCode(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext | null): SandboxProgram {
  const rng = ctx === null ? null : spec.point === 'routing' ? ctx.routerRng : ctx.rngFor(spec.point);
  return engine.compile(spec.source + trailer(spec.entrypoint, spec.point), {
    // A scheduler defines any of its three hooks ($blisHooks tells which); the others need their entry point.
    entrypoints: spec.point === 'scheduler' ? ENTRIES.scheduler : [spec.entrypoint, ...ENTRIES[spec.point]],
    limits: spec.limits,
    label: `the ${spec.point} policy (${spec.where})`,
    hostFunctions: {
      rngIntn: (n) => (rng === null || !(n >= 1) ? 0 : rng.intn(Math.min(Math.floor(n), 2 ** 31 - 1))),
      rngFloat: () => (rng === null ? 0 : rng.float64()),
    },
  });
}

function label(spec: CodeSpec): string {
  return `code (${spec.engine} engine) at ${spec.where}`;
}

/** Calls the program, turning sandbox failures into a PolicyRuntimeError naming the point and the call. */
class Caller {
  calls = 0;
  constructor(
    readonly spec: CodeSpec,
    readonly program: SandboxProgram,
  ) {}

  call(entry: string, args: readonly unknown[], what: string): unknown {
    this.calls++;
    try {
      return this.program.call(entry, args);
    } catch (e) {
      if (e instanceof SandboxError) {
        throw new PolicyRuntimeError(this.spec.point, label(this.spec), e.kind, this.calls, `${what}: ${kindText(e.kind)}: ${e.detail.replace(/\$blis\w+/g, this.spec.entrypoint)} (${e.code}${e.kind === 'budget' || e.kind === 'memory' ? '; fix the policy or raise limits.instructions / limits.memory_bytes' : ''})`);
      }
      throw e;
    }
  }

  bad(what: string, detail: string): never {
    throw new PolicyRuntimeError(this.spec.point, label(this.spec), 'decision', this.calls, `${what}: ${detail}`);
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function reasonOf(c: Caller, v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') c.bad(what, `reason must be text, got ${JSON.stringify(v)}`);
  return (v).slice(0, 200);
}

export function codeAdmission(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): AdmissionPolicy {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  const admit: AdmissionDecision = { admitted: true, reason: '' };
  return {
    name: `code:${spec.entrypoint}`,
    admit(req: Request, state: RouterState): AdmissionDecision {
      const what = `${spec.entrypoint}(${req.id}) at t=${state.clock}`;
      const r = c.call('$blisCall', [requestView(req, ctx.blockSize), stateView(req, state)], what);
      if (r === 'admit' || r === true) return admit;
      if (r === 'reject' || r === false) return { admitted: false, reason: `${spec.entrypoint}: reject` };
      if (isObj(r)) {
        const action = r['action'] ?? ('delayUs' in r ? 'delay' : undefined);
        const reason = reasonOf(c, r['reason'], what);
        if (action === 'admit') return admit;
        if (action === 'reject') return { admitted: false, reason: reason || `${spec.entrypoint}: reject` };
        if (action === 'delay') {
          const d = r['delayUs'];
          if (typeof d !== 'number' || !(d >= 1) || d > 3.6e12) c.bad(what, `delayUs must be a number of µs in [1, 3.6e12], got ${JSON.stringify(d)}`);
          return { admitted: false, reason: reason || `${spec.entrypoint}: delay`, delayUs: Math.ceil(d as number) };
        }
      }
      return c.bad(what, `expected 'admit', 'reject' or {delayUs: N}, got ${JSON.stringify(r)?.slice(0, 120)}`);
    },
  };
}

export function codePriority(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): PriorityPolicy {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  return {
    name: `code:${spec.entrypoint}`,
    prioritize(req, state) {
      const what = `${spec.entrypoint}(${req.id}) at t=${state.clock}`;
      const r = c.call('$blisCall', [requestView(req, ctx.blockSize), stateView(req, state)], what);
      const score = typeof r === 'number' ? r : isObj(r) ? r['score'] : undefined;
      if (typeof score !== 'number' || !Number.isFinite(score)) c.bad(what, `expected a finite score or {score, hints}, got ${JSON.stringify(r)?.slice(0, 120)}`);
      let hints: Record<string, string | number | boolean> | null = null;
      if (isObj(r) && r['hints'] !== undefined && r['hints'] !== null) {
        const h = r['hints'];
        if (!isObj(h) || Object.values(h).some((v) => !['string', 'number', 'boolean'].includes(typeof v))) c.bad(what, 'hints must map names to text, numbers or booleans');
        hints = { ...(h as Record<string, string | number | boolean>) };
      }
      return { score: score as number, hints };
    },
  };
}

export function codeRouting(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): RoutingPolicy {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  return {
    name: `code:${spec.entrypoint}`,
    route(req, state): RoutingDecision {
      const snaps = state.snapshots;
      const what = `${spec.entrypoint}(${req.id}) at t=${state.clock}`;
      const r = c.call('$blisCall', [requestView(req, ctx.blockSize), stateView(req, state)], what);
      const t = isObj(r) ? r['target'] : r;
      let target = -1;
      if (typeof t === 'string') target = snaps.findIndex((s) => s.id === t);
      else if (typeof t === 'number' && Number.isInteger(t) && t >= 0 && t < snaps.length) target = t;
      if (target < 0) {
        c.bad(what, `target ${JSON.stringify(t)?.slice(0, 80)} is not a routable instance; return an id from state.instances (${snaps.map((s) => s.id).join(', ')}) or its index`);
      }
      let scores: Map<string, number> | null = null;
      if (isObj(r) && r['scores'] !== undefined && r['scores'] !== null) {
        const sc = r['scores'];
        if (!isObj(sc)) c.bad(what, 'scores must map instance ids to numbers');
        scores = new Map();
        for (const s of snaps) {
          const v = (sc as Record<string, unknown>)[s.id];
          if (v === undefined) continue;
          if (typeof v !== 'number' || !Number.isFinite(v)) c.bad(what, `score of ${s.id} must be a finite number`);
          scores.set(s.id, v as number);
        }
        for (const k of Object.keys(sc)) if (!snaps.some((s) => s.id === k)) c.bad(what, `scores names ${k}, which is not a routable instance`);
      }
      const reason = isObj(r) ? reasonOf(c, r['reason'], what) : '';
      const id = (snaps[target] as { id: string }).id;
      return { target, targetId: id, reason: reason || `${spec.entrypoint} -> ${id}`, scores, breakdown: null };
    },
  };
}

export function codeAutoscale(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): AutoScalePolicy {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  return {
    name: `code:${spec.entrypoint}`,
    evaluate(a: AutoScaleContext) {
      const what = `${spec.entrypoint}(${a.configId}) at t=${a.clock}`;
      const r = c.call('$blisCall', [JSON.parse(JSON.stringify(a)) as unknown], what);
      if (typeof r === 'number' && Number.isFinite(r)) return clampScaleDecision(a, r, `${spec.entrypoint}: ${r} replicas`);
      if (isObj(r)) {
        const reason = reasonOf(c, r['reason'], what);
        if (typeof r['targetReplicas'] === 'number' && Number.isFinite(r['targetReplicas'])) return clampScaleDecision(a, r['targetReplicas'], reason);
        const action = r['action'];
        if (action === 'up' || action === 'down' || action === 'none') {
          const by = r['by'] ?? 1;
          if (typeof by !== 'number' || !Number.isInteger(by) || by < 0) c.bad(what, `by must be a non-negative integer, got ${JSON.stringify(by)}`);
          const delta = action === 'up' ? (by as number) : action === 'down' ? -(by as number) : 0;
          return clampScaleDecision(a, a.currentReplicas + delta, reason);
        }
      }
      return c.bad(what, `expected {action: up|down|none, by?}, {targetReplicas: N} or a number, got ${JSON.stringify(r)?.slice(0, 120)}`);
    },
  };
}

export function codeDisaggregation(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): DisaggregationDecider {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  return {
    name: `code:${spec.entrypoint}`,
    decide(req, dctx) {
      const what = `${spec.entrypoint}(${req.id}) at t=${dctx.state.clock}`;
      const v = disaggregationView(req, dctx);
      const r = c.call('$blisCall', [v.request, v.state], what);
      if (typeof r === 'boolean') return { disaggregate: r, reason: `${spec.entrypoint}: ${r ? 'disaggregate' : 'prefill locally'}` };
      if (!isObj(r) || typeof r['disaggregate'] !== 'boolean') {
        return c.bad(what, `expected true, false or {disaggregate: true|false, decodeInstance?, reason?}, got ${JSON.stringify(r)?.slice(0, 120)}`);
      }
      const disaggregate = r['disaggregate'];
      const reason = reasonOf(c, r['reason'], what) || `${spec.entrypoint}: ${disaggregate ? 'disaggregate' : 'prefill locally'}`;
      const t = r['decodeInstance'];
      if (t === undefined || t === null) return { disaggregate, reason };
      const snaps = dctx.state.snapshots;
      const k = typeof t === 'string' ? snaps.findIndex((s) => s.id === t) : typeof t === 'number' && Number.isInteger(t) && t >= 0 && t < snaps.length ? t : -1;
      if (k < 0) c.bad(what, `decodeInstance ${JSON.stringify(t)?.slice(0, 80)} is not a routable decode pod; return an id from state.instances (${snaps.map((s) => s.id).join(', ')}) or its index`);
      return { disaggregate, reason, decodeOverride: (snaps[k] as { id: string }).id };
    },
  };
}

export function codeEncode(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): EncodeDecider {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  const decide = (req: Request, decodeId: string, ectx: EncodeContext): EncodeDecision => {
    const what = `${spec.entrypoint}(${req.id}) at t=${ectx.clock}`;
    const v = encodeView(req, decodeId, ectx, ctx.blockSize);
    const r = c.call('$blisCall', [v.request, v.state], what);
    if (typeof r === 'boolean') return { encode: r, reason: `${spec.entrypoint}: ${r ? 'encode' : 'skip'}` };
    if (!isObj(r) || typeof r['encode'] !== 'boolean') return c.bad(what, `expected true, false or {encode: true|false, reason?}, got ${JSON.stringify(r)?.slice(0, 120)}`);
    return { encode: r['encode'], reason: reasonOf(c, r['reason'], what) || `${spec.entrypoint}: ${r['encode'] ? 'encode' : 'skip'}` };
  };
  return {
    name: `code:${spec.entrypoint}`,
    decide,
    // The encode stage calls decide; this form (no pool state) serves callers without one.
    shouldEncode: (req, decodeId) => decide(req, decodeId, { encodeState: () => ({ snapshots: [], clock: 0 }), clock: 0 }).encode,
  };
}

/** One scheduler per instance, each with its own program (no channel between instances). */
export function codeScheduler(spec: CodeSpec, engine: SandboxEngine, ctx: PolicyBuildContext): InstanceScheduler {
  const c = new Caller(spec, compileCode(spec, engine, ctx));
  const hooks = c.call('$blisHooks', [], 'hook discovery') as [boolean, boolean, boolean];
  if (!hooks.some(Boolean)) c.bad('load', `defines none of ${spec.entrypoint}, selectPreemptionVictim, onRequestArrival`);
  const byId = (list: readonly Request[], id: unknown, what: string, where: string): Request => {
    const r = typeof id === 'string' ? list.find((x) => x.id === id) : undefined;
    if (r === undefined) c.bad(what, `${JSON.stringify(id)?.slice(0, 80)} is not a ${where} request id`);
    return r as Request;
  };
  return {
    name: `code:${spec.entrypoint}`,
    order: null,
    onRequestArrival: hooks[2]
      ? (req: Request, sc: SchedulerContext) => {
          c.call('$blisArrival', [schedRequestView(req, sc.clock), schedulerView(sc)], `onRequestArrival(${req.id}) at t=${sc.clock}`);
        }
      : null,
    makeBatch: hooks[0]
      ? (sc: SchedulerContext): BatchChoice => {
          const what = `${spec.entrypoint}() on ${sc.instanceId} at t=${sc.clock}`;
          const r = c.call('$blisMakeBatch', [schedulerView(sc)], what);
          const list = Array.isArray(r) ? r : isObj(r) && Array.isArray(r['requests']) ? r['requests'] : null;
          if (list === null) c.bad(what, `expected a list of waiting request ids (or {id, chunk}) or {requests: [...]}, got ${JSON.stringify(r)?.slice(0, 120)}`);
          const requests: Request[] = [];
          const chunks: number[] = [];
          let anyChunk = false;
          for (const item of list as unknown[]) {
            if (isObj(item)) {
              requests.push(byId(sc.waiting, item['id'], what, 'waiting'));
              const ch = item['chunk'] ?? 0;
              if (typeof ch !== 'number') c.bad(what, `chunk must be a number of tokens, got ${JSON.stringify(ch)}`);
              chunks.push(ch as number);
              anyChunk = true;
            } else {
              requests.push(byId(sc.waiting, item, what, 'waiting'));
              chunks.push(0);
            }
          }
          return { requests, chunks: anyChunk ? chunks : null };
        }
      : null,
    selectPreemptionVictim: hooks[1]
      ? (sc: SchedulerContext): Request => {
          const what = `selectPreemptionVictim() on ${sc.instanceId} at t=${sc.clock}`;
          const r = c.call('$blisVictim', [schedulerView(sc)], what);
          return byId(sc.running, isObj(r) ? r['id'] : r, what, 'running');
        }
      : null,
  };
}
