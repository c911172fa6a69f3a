/**
 * The instance scheduler control point (policy-search-design §5) and its built-in implementations.
 *
 * A scheduler orders the wait queue at the start of every step, may choose which waiting requests join the
 * batch (and cap their prefill chunk), may choose the preemption victim, and hears about every arrival. The
 * engine keeps the vLLM mechanics: continuing requests first, then admissions; it enforces the seat limit, the
 * token budget and KV allocation, and rejects a decision that names a request it cannot use.
 *
 * The built-ins (reference blis-cluster.md §6) are orderings only, all stable sorts with ids compared as byte
 * strings like Go's `<`; their hooks are null so the step loop pays nothing for them.
 */
import type { Request } from '../domain/request.js';
import { BlisError } from '../domain/errors.js';

type Compare = ((a: Request, b: Request) => number) | null;

function byArrivalThenId(a: Request, b: Request): number {
  if (a.arrivalTime !== b.arrivalTime) return a.arrivalTime < b.arrivalTime ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export const SCHEDULERS = {
  fcfs: null,
  'priority-fcfs': (a, b) => (a.priority !== b.priority ? (a.priority < b.priority ? -1 : 1) : byArrivalThenId(a, b)),
  sjf: (a, b) => (a.inputLen !== b.inputLen ? a.inputLen - b.inputLen : byArrivalThenId(a, b)),
  'reverse-priority': (a, b) => (a.priority !== b.priority ? (a.priority > b.priority ? -1 : 1) : byArrivalThenId(a, b)),
} as const satisfies Record<string, Compare>;

export type SchedulerName = keyof typeof SCHEDULERS;
export const SCHEDULER_NAMES = Object.keys(SCHEDULERS) as SchedulerName[];

export const PREEMPTION_POLICIES = { fcfs: 'fcfs', priority: 'priority' } as const;
export type PreemptionPolicy = keyof typeof PREEMPTION_POLICIES;

/** What a scheduler sees at a decision. The arrays are live views: read them during the call only. */
export interface SchedulerContext {
  readonly instanceId: string;
  readonly clock: number;
  /** The wait queue, head first (after this step's ordering). */
  readonly waiting: readonly Request[];
  readonly running: readonly Request[];
  readonly maxBatchSize: number;
  readonly maxTokenBudget: number;
  readonly kvFreeBlocks: number;
  readonly kvTotalBlocks: number;
  readonly blockSize: number;
}

/**
 * The waiting requests to admit this step, in order, each with an optional prefill-chunk cap (0 = as many
 * tokens as the budget allows). Requests the budget or the KV cache cannot take this step stay waiting; a
 * request that is not waiting, a duplicate, more requests than free seats, or a negative / non-integer cap
 * or a cap above the token budget is an error of the policy.
 */
export interface BatchChoice {
  readonly requests: readonly Request[];
  readonly chunks: readonly number[] | null;
}

export interface InstanceScheduler {
  readonly name: string;
  /** Stable wait-queue ordering applied at the start of each step; null keeps arrival order. */
  readonly order: Compare;
  /** Called when a request enters the wait queue (after the enqueue guards). */
  readonly onRequestArrival: ((req: Request, ctx: SchedulerContext) => void) | null;
  /** Chooses the admissions of a step; null = vLLM's greedy admission from the queue head. */
  readonly makeBatch: ((ctx: SchedulerContext) => BatchChoice) | null;
  /** Chooses the preemption victim among `ctx.running`; null = the preemption policy's choice. */
  readonly selectPreemptionVictim: ((ctx: SchedulerContext) => Request) | null;
}

/** The built-in ordering scheduler of the given name. */
export function builtinScheduler(name: SchedulerName): InstanceScheduler {
  return { name, order: SCHEDULERS[name], onRequestArrival: null, makeBatch: null, selectPreemptionVictim: null };
}

/** A policy decision the engine cannot carry out (the control point and the reason). */
export class SchedulerDecisionError extends BlisError {
  constructor(readonly scheduler: string, readonly hook: string, detail: string) {
    super('POLICY_DECISION', `scheduler policy ${scheduler}: ${hook}: ${detail}`);
    this.name = 'SchedulerDecisionError';
  }
}
