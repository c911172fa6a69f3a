/**
 * One contract suite per control point, run against every built-in, every template (with its defaults), a
 * decision tree and a code policy in each sandbox engine. The routing and admission suites drive the
 * implementations directly over a fixed scenario; the scheduler suite runs each one inside a small cluster
 * and checks every invariant; autoscale policies are probed over a grid of contexts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SloPriorityMap } from '../../src/domain/slo.js';
import { GoRand } from '../../src/gocompat/go-rand.js';
import { main } from '../../src/cli/main.js';
import { preparePolicies, type BuiltPolicies } from '../../src/policy/build.js';
import { parsePolicyBundle } from '../../src/policy/bundle.js';
import type { PolicyBuildContext } from '../../src/policy/templates/build.js';
import { TEMPLATES } from '../../src/policy/templates/catalog.js';
import type { ControlPoint } from '../../src/policy/view.js';
import type { AutoScaleContext, AutoScalePolicy } from '../../src/routing/autoscale.js';
import { AUTOSCALE_POLICIES, makeAutoscalePolicy } from '../../src/routing/autoscale-policies.js';
import { ADMISSION_POLICY_NAMES, makeAdmissionPolicy, makeRoutingPolicy, ROUTING_POLICY_NAMES } from '../../src/routing/registry.js';
import { makeRequest, scenarioCachedBlocks, scenarioSnapshots, scenarioTokens } from '../../src/routing/test-fixtures.js';
import type { AdmissionPolicy, PriorityPolicy, RouterState, RoutingPolicy } from '../../src/routing/types.js';
import { checkRun } from '../parity/invariant-hook.js';

const ENGINES = ['fast', 'strict'] as const;

function ctx(seed = 7n): PolicyBuildContext {
  const router = new GoRand(seed);
  const others = new Map<string, GoRand>();
  return {
    blockSize: 16,
    routerRng: router,
    rngFor: (p) => {
      let g = others.get(p);
      if (g === undefined) others.set(p, (g = new GoRand(seed + BigInt(p.length))));
      return g;
    },
    cachedBlocks: scenarioCachedBlocks,
    priorities: new SloPriorityMap(),
  };
}

/** A bundle text with one evolvable section, built into fresh policies by `make()`. */
interface Subject<T> {
  readonly label: string;
  readonly make: () => T;
}

async function evolvable(point: ControlPoint, yaml: string): Promise<(seed?: bigint) => BuiltPolicies> {
  const b = parsePolicyBundle(yaml, `${point}.yaml`);
  const prepared = await preparePolicies(b.evolvable);
  return (seed = 7n) => prepared.build(ctx(seed));
}

function code(point: ControlPoint, engine: string, source: string): string {
  return `${point}:\n  type: code\n  engine: ${engine}\n  source: |\n${source.split('\n').map((l) => `    ${l}`).join('\n')}\n`;
}

const templatesOf = (point: ControlPoint): string[] => TEMPLATES.filter((t) => t.point === point).map((t) => t.name);

function states(n: number, instances = 4): { req: ReturnType<typeof makeRequest>; state: RouterState }[] {
  const inFlight = new Array<number>(instances).fill(0);
  const out = [];
  for (let i = 0; i < n; i++) {
    const snaps = scenarioSnapshots(i, inFlight, i % 2 === 0).slice(0, instances);
    out.push({ req: makeRequest(`r${i}`, scenarioTokens(i), { sloClass: ['critical', 'standard', 'batch', 'sheddable', ''][i % 5] as string, tenantId: i % 3 === 0 ? 'a' : 'b' }), state: { snapshots: snaps, clock: i * 1000 } });
    const t = i % instances;
    inFlight[t] = (inFlight[t] as number) + 1;
  }
  return out;
}

describe('routing contract', () => {
  const subjects: Subject<RoutingPolicy>[] = [];
  beforeAll(async () => {
    for (const name of ROUTING_POLICY_NAMES) {
      subjects.push({ label: name, make: () => makeRoutingPolicy(name, { scorers: null, blockSize: 16, rng: new GoRand(7n), cachedBlocks: scenarioCachedBlocks }) });
    }
    for (const t of templatesOf('routing')) {
      const b = await evolvable('routing', `routing: {type: parameterized, template: ${t}, parameters: {}}\n`);
      subjects.push({ label: `template ${t}`, make: () => b().routing as RoutingPolicy });
    }
    const tree = await evolvable('routing', 'routing:\n  type: decision_tree\n  tree:\n    if: {feature: cluster.maxCachedPrefixBlocks, op: ">", value: 0}\n    then: {route: {maximize: instance.cachedPrefixBlocks, filter: {feature: instance.load, op: "<", value: 50}}}\n    else: {route: {scorers: {queue-depth: 1, kv-utilization: 1}}}\n');
    subjects.push({ label: 'tree', make: () => tree().routing as RoutingPolicy });
    for (const e of ENGINES) {
      const c = await evolvable('routing', code('routing', e, 'function route(r, s) {\n  let best = 0;\n  s.instances.forEach((x, i) => { if (x.load < s.instances[best].load) best = i; });\n  return { target: best, reason: "min load", scores: Object.fromEntries(s.instances.map((x) => [x.id, -x.load])) };\n}'));
      subjects.push({ label: `code (${e})`, make: () => c().routing as RoutingPolicy });
    }
  });

  it('every implementation: a valid target whose id matches, one instance handled, inputs untouched, deterministic', () => {
    expect(subjects.length).toBeGreaterThan(10);
    for (const s of subjects) {
      const run = (): string[] => {
        const p = s.make();
        return states(60).map(({ req, state }) => {
          const before = JSON.stringify(state.snapshots);
          const d = p.route(req, state);
          expect(JSON.stringify(state.snapshots), s.label).toBe(before);
          expect(Number.isInteger(d.target) && d.target >= 0 && d.target < state.snapshots.length, s.label).toBe(true);
          expect(d.targetId, s.label).toBe(state.snapshots[d.target]?.id);
          expect(typeof d.reason, s.label).toBe('string');
          if (d.scores !== null) for (const id of d.scores.keys()) expect(state.snapshots.some((x) => x.id === id), s.label).toBe(true);
          return d.targetId;
        });
      };
      expect(run(), s.label).toEqual(run());
      const one = s.make().route(makeRequest('solo', scenarioTokens(1)), { snapshots: scenarioSnapshots(1, [0], true).slice(0, 1), clock: 0 });
      expect(one.target, s.label).toBe(0);
    }
  });
});

describe('admission contract', () => {
  const subjects: Subject<AdmissionPolicy>[] = [];
  beforeAll(async () => {
    const priorities = new SloPriorityMap();
    for (const name of ADMISSION_POLICY_NAMES) {
      subjects.push({ label: name, make: () => makeAdmissionPolicy(name, { tokenBucketCapacity: 60, tokenBucketRefillRate: 200, tierShedThreshold: 2, tierShedMinPriority: 3, gaieQdThreshold: 0, gaieKvThreshold: 0, priorities }) });
    }
    for (const t of templatesOf('admission')) {
      const b = await evolvable('admission', `admission: {type: parameterized, template: ${t}, parameters: {}}\n`);
      subjects.push({ label: `template ${t}`, make: () => b().admission as AdmissionPolicy });
    }
    const tree = await evolvable('admission', 'admission:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokens, op: ">", value: 40}\n    then: {action: reject, reason: long}\n    else:\n      if: {feature: cluster.maxQueueDepth, op: ">=", value: 3}\n      then: {action: delay, delay_us: 500}\n      else: {action: admit}\n');
    subjects.push({ label: 'tree', make: () => tree().admission as AdmissionPolicy });
    for (const e of ENGINES) {
      const c = await evolvable('admission', code('admission', e, 'function admit(r, s) {\n  if (r.inputTokens > 40) return "reject";\n  if (s.instances.some((x) => x.queueDepth >= 3)) return { delayUs: 500, reason: "busy" };\n  return "admit";\n}'));
      subjects.push({ label: `code (${e})`, make: () => c().admission as AdmissionPolicy });
    }
  });

  it('every implementation: admit, reject or a positive delay; inputs untouched; deterministic', () => {
    for (const s of subjects) {
      const run = (): string[] => {
        const p = s.make();
        return states(60).map(({ req, state }) => {
          const before = JSON.stringify(state.snapshots);
          const d = p.admit(req, state);
          expect(JSON.stringify(state.snapshots), s.label).toBe(before);
          expect(typeof d.admitted, s.label).toBe('boolean');
          expect(typeof d.reason, s.label).toBe('string');
          if (d.delayUs !== undefined && d.delayUs > 0) expect(d.admitted, s.label).toBe(false);
          return `${String(d.admitted)}:${d.delayUs ?? 0}`;
        });
      };
      expect(run(), s.label).toEqual(run());
    }
  });
  it('the tree and the code implement the same rule', () => {
    const outs = subjects.filter((s) => s.label === 'tree' || s.label.startsWith('code')).map((s) => {
      const p = s.make();
      return states(60).map(({ req, state }) => {
        const d = p.admit(req, state);
        return `${String(d.admitted)}:${d.delayUs ?? 0}`;
      });
    });
    expect(outs).toHaveLength(3);
    expect(outs[1]).toEqual(outs[0]);
    expect(outs[2]).toEqual(outs[0]);
  });
});

describe('priority contract', () => {
  const subjects: Subject<PriorityPolicy>[] = [];
  beforeAll(async () => {
    for (const t of templatesOf('priority')) {
      const b = await evolvable('priority', `priority: {type: parameterized, template: ${t}, parameters: {}}\n`);
      subjects.push({ label: `template ${t}`, make: () => b().priority as PriorityPolicy });
    }
    const tree = await evolvable('priority', 'priority:\n  type: decision_tree\n  tree:\n    if: {feature: request.sloClass, op: "==", value: critical}\n    then: {priority: 10, hints: {lane: fast}}\n    else: {priority: 1}\n');
    subjects.push({ label: 'tree', make: () => tree().priority as PriorityPolicy });
    for (const e of ENGINES) {
      const c = await evolvable('priority', code('priority', e, 'function prioritize(r) { return r.sloClass === "critical" ? { score: 10, hints: { lane: "fast" } } : 1; }'));
      subjects.push({ label: `code (${e})`, make: () => c().priority as PriorityPolicy });
    }
  });
  it('every implementation: a finite score, plain hints, deterministic', () => {
    for (const s of subjects) {
      const run = (): string[] => {
        const p = s.make();
        return states(40).map(({ req, state }) => {
          const d = p.prioritize(req, state);
          expect(Number.isFinite(d.score), s.label).toBe(true);
          if (d.hints !== null) for (const v of Object.values(d.hints)) expect(['string', 'number', 'boolean'], s.label).toContain(typeof v);
          return `${d.score}:${JSON.stringify(d.hints)}`;
        });
      };
      expect(run(), s.label).toEqual(run());
    }
  });
});

describe('scheduler contract', () => {
  const variants: [string, string][] = [
    ...['fcfs', 'priority-fcfs', 'sjf', 'reverse-priority'].map((n): [string, string] => [n, `scheduler: ${n}\n`]),
    ...templatesOf('scheduler').map((t): [string, string] => [`template ${t}`, `scheduler: {type: parameterized, template: ${t}, parameters: {}}\n`]),
    ['template chunked_admission (capped)', 'scheduler: {type: parameterized, template: chunked_admission, parameters: {chunk_tokens: 64, max_admissions_per_step: 2}}\n'],
    ['tree', 'scheduler:\n  type: decision_tree\n  tree:\n    if: {feature: request.inputTokens, op: "<", value: 300}\n    then: {priority: 2}\n    else: {priority: 1}\n'],
    ...ENGINES.map((e): [string, string] => [`code (${e})`, code('scheduler', e, 'function makeBatch(ctx) {\n  const free = ctx.maxBatchSize - ctx.running.length;\n  return ctx.waiting.slice().sort((a, b) => a.inputTokens - b.inputTokens || a.arrivalUs - b.arrivalUs).slice(0, Math.max(0, free)).map((r) => ({ id: r.id, chunk: 256 }));\n}\nfunction selectPreemptionVictim(ctx) {\n  let v = ctx.running[0];\n  for (const r of ctx.running) if (r.inputTokens > v.inputTokens) v = r;\n  return v.id;\n}')]),
  ];
  for (const [label, yaml] of variants) {
    it(`${label}: every request ends in one counted state, invariants hold, deterministic`, async () => {
      const file = `${process.env['TMPDIR'] ?? '/tmp'}/blis-sched-${label.replace(/\W+/g, '_')}.yaml`;
      const { writeFileSync } = await import('node:fs');
      writeFileSync(file, yaml);
      const argv = ['run', '--model', 'meta-llama/llama-3.1-8b-instruct', '--num-requests', '120', '--rate', '40', '--num-instances', '2', '--total-kv-blocks', '300', '--max-num-seqs', '16', '--policy-config', file, '--log', 'error'];
      const outs: string[] = [];
      for (let k = 0; k < 2; k++) {
        let stdout = '';
        let err = '';
        const code2 = await main(argv, { stdout: (t) => (stdout += t), warn: () => undefined, error: (t) => (err += t) }, (cs, reqs, setup, sessions) => checkRun(cs, reqs, setup, sessions));
        expect(code2, err).toBe(0);
        const doc = JSON.parse(stdout) as { simulation_metrics: { completed_requests: number; injected_requests: number } };
        expect(doc.simulation_metrics.completed_requests).toBe(120);
        outs.push(stdout);
      }
      expect(outs[1]).toBe(outs[0]);
    });
  }
});

describe('autoscale contract', () => {
  const subjects: Subject<AutoScalePolicy>[] = [];
  beforeAll(async () => {
    for (const t of templatesOf('autoscale')) {
      const b = await evolvable('autoscale', `autoscale: {type: parameterized, template: ${t}, parameters: {}}\n`);
      subjects.push({ label: `template ${t}`, make: () => b().autoscale as AutoScalePolicy });
    }
    const tree = await evolvable('autoscale', 'autoscale:\n  type: decision_tree\n  tree:\n    if: {feature: deployment.avgQueueDepth, op: ">", value: 5}\n    then: {scale: up, by: 2}\n    else: {if: {feature: deployment.avgQueueDepth, op: "<", value: 1}, then: {scale: down}, else: {scale: none}}\n');
    subjects.push({ label: 'tree', make: () => tree().autoscale as AutoScalePolicy });
    for (const name of AUTOSCALE_POLICIES) subjects.push({ label: `built-in ${name}`, make: () => makeAutoscalePolicy(name) });
    for (const e of ENGINES) {
      const c = await evolvable('autoscale', code('autoscale', e, 'function evaluate(ctx) {\n  if (ctx.metrics.avgQueueDepth > 5) return { action: "up", by: 2, reason: "queue" };\n  if (ctx.metrics.avgQueueDepth < 1) return { action: "down" };\n  return { targetReplicas: ctx.currentReplicas };\n}'));
      subjects.push({ label: `code (${e})`, make: () => c().autoscale as AutoScalePolicy });
    }
  });
  it('every implementation: a target within [min, max] and an action consistent with it, deterministic', () => {
    const grid: AutoScaleContext[] = [];
    for (const current of [1, 2, 5, 8]) {
      for (const q of [0, 0.5, 3, 9, 50]) {
        for (const since of [0, 120e6]) {
          grid.push({ configId: 'd', currentReplicas: current, minReplicas: 1, maxReplicas: 8, metrics: { avgQueueDepth: q, avgUtilization: q / 10, requestRate: 10, sloAttainment: {}, avgLatencyMs: 100, p99LatencyMs: 300 }, loadHistory: [], pendingRequests: q * current, clock: 1e9, timeSinceLastScaleUs: since,
            replicas: Array.from({ length: current }, (_, k) => ({ instanceId: `i${k}`, variant: { gpuType: 'H100', tp: 1 }, kvUtilization: q / 10, queueDepth: q, inFlight: q, batchSize: Math.min(256, q * 20), maxBatchSize: 256, costPerHour: 0, totalKvCapacityTokens: 100_000, kvTokensInUse: Math.min(100_000, q * 10_000) })),
            pendingReplicas: 0, pendingCapacityTokens: 0 });
        }
      }
    }
    for (const s of subjects) {
      const run = (): string[] => {
        const p = s.make();
        return grid.map((c) => {
          const d = p.evaluate(c);
          expect(d.targetReplicas >= c.minReplicas && d.targetReplicas <= c.maxReplicas, s.label).toBe(true);
          expect(d.action, s.label).toBe(d.targetReplicas > c.currentReplicas ? 'up' : d.targetReplicas < c.currentReplicas ? 'down' : 'none');
          return `${d.action}:${d.targetReplicas}`;
        });
      };
      expect(run(), s.label).toEqual(run());
    }
  });
});
