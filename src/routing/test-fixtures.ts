/**
 * Shared inputs for the routing tests. The scenario generators (tokens, snapshots, in-flight bookkeeping)
 * are deliberately simple integer formulas so the same inputs could be fed to the reference implementation
 * to obtain the expected decisions in reference-vectors.test.ts.
 */
import { Request } from '../domain/request.js';
import type { RoutingPolicy, RoutingSnapshot } from './types.js';
import { routingSnapshot } from './types.js';

export function makeRequest(id: string, tokens: readonly number[] = [], fields: Partial<Pick<Request, 'sloClass' | 'tenantId'>> = {}): Request {
  const req = new Request(id, Int32Array.from(tokens), new Int32Array(0), 0);
  if (fields.sloClass !== undefined) req.sloClass = fields.sloClass;
  if (fields.tenantId !== undefined) req.tenantId = fields.tenantId;
  return req;
}

/** A request carrying a LoRA adapter id (the domain Request has no such field yet; see requestAdapter). */
export function makeAdapterRequest(id: string, adapter: string): Request {
  return Object.assign(makeRequest(id), { adapter });
}

/** 1..n, the sequential prompt the reference tests use. */
export function seqTokens(n: number, start = 1): number[] {
  return Array.from({ length: n }, (_, i) => start + i);
}

export function snaps(...specs: Array<[string, Partial<Omit<RoutingSnapshot, 'id'>>?]>): RoutingSnapshot[] {
  return specs.map(([id, f]) => routingSnapshot(id, f ?? {}));
}

/** Scenario prompt i: one of three 48-token shared prefixes (3 blocks of 16), then 16..40 unique tokens. */
export function scenarioTokens(i: number): number[] {
  const g = i % 3;
  const out: number[] = [];
  for (let j = 0; j < 48; j++) out.push(g * 1000 + j);
  const n = 16 + (i % 4) * 8;
  for (let j = 0; j < n; j++) out.push(100000 + i * 100 + j);
  return out;
}

/** Scenario snapshots at step i: live in-flight counts, plus formula-driven queue/batch/KV when `withLoad`. */
export function scenarioSnapshots(i: number, inFlight: readonly number[], withLoad: boolean): RoutingSnapshot[] {
  return inFlight.map((f, k) =>
    routingSnapshot(
      `instance_${k}`,
      withLoad
        ? {
            inFlightRequests: f,
            queueDepth: (i * 7 + k * 3) % 5,
            batchSize: (i + k) % 3,
            kvUtilization: ((i * 13 + k * 29) % 100) / 100,
          }
        : { inFlightRequests: f },
    ),
  );
}

export interface ScenarioResult {
  readonly targets: number[];
  readonly reasons: string[];
  /** Composite scores of the first 8 decisions, in instance order (weighted only). */
  readonly scores: number[][];
}

/**
 * Routes n scenario requests; the chosen instance's in-flight count goes up by one, and every 4th step all
 * counts drop by one (floored at 0), standing in for completions.
 */
export function runScenario(policy: RoutingPolicy, n: number, numInstances: number, withLoad: boolean): ScenarioResult {
  const inFlight = new Array<number>(numInstances).fill(0);
  const result: ScenarioResult = { targets: [], reasons: [], scores: [] };
  for (let i = 0; i < n; i++) {
    const req = makeRequest(`request_${i}`, scenarioTokens(i));
    const snapshots = scenarioSnapshots(i, inFlight, withLoad);
    const d = policy.route(req, { snapshots, clock: i * 1000 });
    result.targets.push(d.target);
    result.reasons.push(d.reason);
    if (i < 8 && d.scores !== null) {
      const scores = d.scores;
      result.scores.push(snapshots.map((s) => scores.get(s.id) as number));
    }
    inFlight[d.target] = (inFlight[d.target] as number) + 1;
    if (i % 4 === 3) for (let k = 0; k < numInstances; k++) inFlight[k] = Math.max(0, (inFlight[k] as number) - 1);
  }
  return result;
}

/** The scenario cache: instance k holds 2 + len%3 blocks of group-k prompts; instance 3 one block of long ones. */
export function scenarioCachedBlocks(instanceId: string, req: Request): number {
  if (!instanceId.startsWith('instance_')) return 0;
  const k = Number(instanceId.slice('instance_'.length));
  const first = req.inputTokens[0] ?? 0;
  if (Math.floor(first / 1000) === k) return 2 + (req.inputLen % 3);
  if (k === 3 && req.inputLen > 80) return 1;
  return 0;
}
