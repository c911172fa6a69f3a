/**
 * Instance schedulers: wait-queue orderings applied at the start of every step (reference
 * blis-cluster.md §6). All are stable sorts; ids compare as byte strings like Go's `<`.
 */
import type { Request } from '../domain/request.js';

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
