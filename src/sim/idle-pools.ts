/**
 * "No silent surprises" (issue 29): after a run, a warning for every pool whose members were routed unevenly
 * enough that some received no request at all, naming the option that changes it. The reference routes the
 * same way and prints nothing; the simulation itself is untouched (warnings go to stderr / `warnings`).
 */
import type { ClusterSimulator } from '../cluster/cluster.js';
import { PoolRole, roleName } from '../cluster/pd/pools.js';

/** What the warning needs besides the finished cluster. */
export interface IdlePoolContext {
  /** `--routing-policy` (the main policy every pool routes with unless it has its own scorers). */
  readonly routingPolicy: string;
  /** `--semantics corrected` (each P/D pool routes with its own policy instance: D5). */
  readonly corrected: boolean;
  /** The P/D pools route with `--prefill-routing-scorers` / `--decode-routing-scorers` (not the main policy). */
  readonly poolScorers?: { readonly prefill: boolean; readonly decode: boolean };
  /** The instances come from a deployment file (where a pod without a P/D role serves whole requests). */
  readonly deployment?: boolean;
  /** What decides P/D splits: `--pd-decider`'s value, or a description of the bundle's section. */
  readonly decider?: string;
}

/** A pool this small or this lightly used may leave members idle by chance: no warning. */
const MIN_REQUESTS_PER_MEMBER = 2;

function listIds(ids: readonly string[]): string {
  return ids.length <= 4 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;
}

/**
 * Warnings for pools (P/D role x model; the whole cluster without pools) in which some instances received no
 * request while the pool received at least two per member, and for instances left without a P/D role. Runs
 * with an instance lifecycle (autoscaler, node pools) are skipped: their instances come and go.
 */
export function idlePoolWarnings(cs: ClusterSimulator, ctx: IdlePoolContext): string[] {
  if (cs.lifecycle !== null || cs.instances.length < 2) return [];
  const pd = cs.pd;
  const groups = new Map<string, { role: number; model: string; ids: string[]; counts: number[] }>();
  const roleless: string[] = [];
  for (let i = 0; i < cs.instances.length; i++) {
    const inst = cs.instances[i]!;
    const role = pd === null ? PoolRole.None : pd.role(i);
    if (pd !== null && role === PoolRole.None && ctx.deployment !== true) {
      roleless.push(inst.id);
      continue;
    }
    // Encode pods run no prefill or decode in the reference (D10): they never receive requests by design.
    if (role === PoolRole.Encode) continue;
    const model = cs.facts[i]?.model ?? '';
    const key = `${role}\u0000${model}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { role, model, ids: [], counts: [] }));
    g.ids.push(inst.id);
    g.counts.push(inst.metrics.requests.length);
  }
  const out: string[] = [];
  const models = new Set([...groups.values()].map((g) => g.model));
  const routedToDecode = [...groups.values()].some((g) => (g.role & PoolRole.Decode) !== 0 && g.counts.some((c) => c > 0));
  for (const g of groups.values()) {
    const n = g.ids.length;
    const total = g.counts.reduce((a, b) => a + b, 0);
    if (g.role === PoolRole.Prefill && total === 0 && routedToDecode) {
      const decider = ctx.decider ?? 'never';
      out.push(`the prefill pool${models.size > 1 && g.model !== '' ? ` of ${g.model}` : ''} (${listIds(g.ids)}) received no requests: the P/D decider (${decider}) split none, so the decode pods served every request whole; --pd-decider always or prefix-threshold splits requests`);
      continue;
    }
    if (n < 2 || total < MIN_REQUESTS_PER_MEMBER * n) continue;
    const idle = g.ids.filter((_, k) => g.counts[k] === 0);
    if (idle.length === 0) continue;
    const pool = pd === null ? 'instances' : `${roleName(g.role)} pods`;
    const ofModel = models.size > 1 && g.model !== '' ? ` of ${g.model}` : '';
    out.push(`${idle.length} of ${n} ${pool}${ofModel} received no requests (${listIds(idle)}) while the others received ${total}: ${remedy(g.role, pd !== null, ctx)}`);
  }
  if (roleless.length > 0) {
    out.push(`${roleless.length} of ${cs.instances.length} instances have no P/D role and are never routed (${listIds(roleless)}): --num-instances exceeds --prefill-instances + --decode-instances + --prefill-decode-instances + --encode-instances; lower --num-instances or give the pools more instances`);
  }
  return out;
}

function remedy(role: number, pools: boolean, ctx: IdlePoolContext): string {
  const scorers = role === PoolRole.Prefill ? ctx.poolScorers?.prefill : role === PoolRole.Decode ? ctx.poolScorers?.decode : false;
  if (scorers === true) {
    const flag = role === PoolRole.Prefill ? '--prefill-routing-scorers' : '--decode-routing-scorers';
    return `the pool routes by ${flag}; change its weights (a load scorer such as queue-depth spreads requests)`;
  }
  if (pools && !ctx.corrected && ctx.routingPolicy === 'round-robin') {
    return 'the prefill and decode calls share one round-robin counter, as in the reference (docs/reference-differences.md D5); --semantics corrected gives each pool its own counter, or choose another --routing-policy (least-loaded, weighted)';
  }
  return `the routing policy (${ctx.routingPolicy}) sent them nothing; --routing-policy least-loaded or round-robin spreads requests over every instance (with weighted, --routing-scorers sets what it favours)`;
}
