/**
 * What `blis policies` prints: every control point with its contract, every template with its parameters
 * (ranges, defaults, descriptions) and every decision-tree feature — one JSON document that tools, searches
 * and docs agree on.
 */
import { DEFAULT_SANDBOX_LIMITS } from '../sandbox/types.js';
import { FEATURES } from './features.js';
import { TEMPLATES } from './templates/catalog.js';
import { CONTROL_POINTS, DEFAULT_ENTRYPOINTS, type ControlPoint } from './view.js';

const CONTRACTS: Readonly<Record<ControlPoint, { signature: string; returns: string; description: string }>> = {
  admission: {
    signature: 'admit(request, state)',
    returns: "'admit' | 'reject' | {delayUs: N, reason?} | {action: 'admit'|'reject'|'delay', delayUs?, reason?}",
    description: 'Decides at arrival whether a request enters the cluster; a DELAY re-runs admission after N µs (counted as delayed meanwhile, at most 100 delays per request).',
  },
  priority: {
    signature: 'prioritize(request, state)',
    returns: 'score | {score, hints?}',
    description: 'Scores an admitted request (higher = more urgent); the score replaces the SLO class as the instance scheduling priority and the hints reach the instance scheduler.',
  },
  routing: {
    signature: 'route(request, state)',
    returns: 'instance id | index | {target, reason?, scores?: {id: number}}',
    description: 'Picks the instance that serves the request; state.rng is the router\'s own tie-break stream.',
  },
  scheduler: {
    signature: 'makeBatch(ctx) / selectPreemptionVictim(ctx) / onRequestArrival(request, ctx)',
    returns: 'makeBatch: [id | {id, chunk}] of waiting requests to admit this step; selectPreemptionVictim: a running request id',
    description: 'Per instance: chooses which waiting requests join the batch (and caps their first chunk) and which running request is preempted; the engine enforces seats, the token budget and KV allocation.',
  },
  autoscale: {
    signature: 'evaluate(ctx)',
    returns: '{action: up|down|none, by?} | {targetReplicas} | number',
    description: 'Decides a deployment\'s replica count: called by the autoscaler on every tick and trigger, per scaling target (docs/deployments.md).',
  },
  disaggregation: {
    signature: 'decide(request, state)',
    returns: 'boolean | {disaggregate: boolean, decodeInstance?: id | index, reason?}',
    description: 'The P/D decider: after the decode routing chose a decode pod (state.selected), decides whether the prefill runs on a prefill pod (KV transferred) or locally on that decode pod; state.instances is the decode pool, state.prefillInstances the prefill pool (docs/deployments.md).',
  },
  encode: {
    signature: 'shouldEncode(request, state)',
    returns: 'boolean | {encode: boolean, reason?}',
    description: 'The E/P/D encode decider: after the P/D decider, decides whether the request goes through the encode pool first; state.instances is the encode pool, state.decodeInstance the chosen decode pod (docs/deployments.md).',
  },
};

export function policyCatalog(): Record<string, unknown> {
  return {
    control_points: CONTROL_POINTS.map((p) => ({
      name: p,
      ...CONTRACTS[p],
      default_entrypoint: DEFAULT_ENTRYPOINTS[p],
      representations: ['parameterized', 'decision_tree', 'code'],
    })),
    templates: TEMPLATES.map((t) => ({
      name: t.name,
      control_point: t.point,
      description: t.description,
      ...(t.example === undefined ? {} : { example: t.example }),
      parameters: t.parameters.map((p) => ({
        name: p.name,
        type: p.type,
        ...(p.min === undefined ? {} : { min: p.min }),
        ...(p.max === undefined ? {} : { max: p.max }),
        ...(p.values === undefined ? {} : { values: p.values }),
        default: p.default,
        description: p.description,
        ...(p.search === undefined ? {} : { search_range: p.search }),
      })),
    })),
    features: FEATURES.map((f) => ({ name: f.name, type: f.type, control_points: f.points, scope: f.scope, description: f.description })),
    sandbox: {
      engines: ['fast', 'strict'],
      default_limits: { instructions: DEFAULT_SANDBOX_LIMITS.instructions, memory_bytes: DEFAULT_SANDBOX_LIMITS.memoryBytes },
    },
  };
}
