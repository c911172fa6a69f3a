/**
 * Closed-loop sessions (blis-cluster.md §9.5): generation of round-0 requests and blueprints, the SessionManager
 * that produces follow-up rounds during a run, and the session invariants INV-10 / INV-11.
 */
export type { SessionBlueprint, SessionState, SessionWorkload, ToolCallSpec } from './types.js';
export { SessionManager } from './manager.js';
export type { SessionLog } from './manager.js';
export { generateWorkload, BLUEPRINT_SEED_OFFSET, CONCURRENCY_SEED_OFFSET } from './workload.js';
export { checkSessionCausality, checkSessionCompleteness } from './invariants.js';
export type { SessionViolation } from './invariants.js';
