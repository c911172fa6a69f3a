/**
 * Admission policies (reference blis-cluster.md §2.1, §2.3). Rejection reasons are the reference's strings;
 * they go into decision traces verbatim.
 */
import type { Request } from '../domain/request.js';
import { SloPriorityMap } from '../domain/slo.js';
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import { goFixed } from '../gocompat/go-text.js';
import type { AdmissionDecision, AdmissionPolicy, RouterState } from './types.js';
import { effectiveLoad } from './types.js';

const ADMIT: AdmissionDecision = Object.freeze({ admitted: true, reason: '' });

function reject(reason: string): AdmissionDecision {
  return { admitted: false, reason };
}

function invalid(field: string, message: string): RoutingConfigError {
  return new RoutingConfigError(RoutingErrorCode.InvalidParameter, field, message);
}

export function alwaysAdmit(): AdmissionPolicy {
  return { name: 'always-admit', admit: () => ADMIT };
}

/** Rejects everything (a pathological template for tests and experiments). */
export function rejectAll(): AdmissionPolicy {
  const no = reject('reject-all');
  return { name: 'reject-all', admit: () => no };
}

/**
 * Rate limiting in input tokens. The bucket starts full and refills lazily on each call by
 * `elapsed × rate / 1e6` (capped at capacity), where `elapsed` is measured from the last refill — initially
 * time 0, so a first call at t > 0 refills a bucket that is already full. A request costs its input length;
 * it is admitted only if that many tokens are available (no partial debit), so one longer than the capacity
 * is always rejected.
 */
export function tokenBucket(capacity: number, refillRatePerSec: number): AdmissionPolicy {
  if (!(Number.isFinite(capacity) && capacity > 0)) {
    throw invalid('token-bucket-capacity', `token-bucket capacity must be a finite value > 0, got ${capacity}; set --token-bucket-capacity to a positive number`);
  }
  if (!(Number.isFinite(refillRatePerSec) && refillRatePerSec > 0)) {
    throw invalid('token-bucket-refill-rate', `token-bucket refill rate must be a finite value > 0, got ${refillRatePerSec}; set --token-bucket-refill-rate to a positive number`);
  }
  let tokens = capacity;
  let lastRefill = 0;
  return {
    name: 'token-bucket',
    admit(req: Request, state: RouterState): AdmissionDecision {
      const elapsed = state.clock - lastRefill;
      if (elapsed > 0) {
        tokens = Math.min(capacity, tokens + (elapsed * refillRatePerSec) / 1e6);
        lastRefill = state.clock;
      }
      const cost = req.inputLen;
      if (tokens >= cost) {
        tokens -= cost;
        return ADMIT;
      }
      return reject('insufficient tokens');
    },
  };
}

/**
 * Sheds low-priority classes under overload: when the busiest routable instance's effective load exceeds
 * `threshold` (strictly), classes with priority below `minPriority` are rejected. No instances ⇒ no overload.
 */
export function tierShed(threshold: number, minPriority: number, priorities: SloPriorityMap = new SloPriorityMap()): AdmissionPolicy {
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw invalid('tier_shed_threshold', `tier-shed overload threshold must be an integer >= 0, got ${threshold}`);
  }
  return {
    name: 'tier-shed',
    admit(req: Request, state: RouterState): AdmissionDecision {
      let maxLoad = 0;
      for (const s of state.snapshots) maxLoad = Math.max(maxLoad, effectiveLoad(s));
      if (maxLoad <= threshold) return ADMIT;
      const priority = priorities.priority(req.sloClass);
      if (priority < minPriority) {
        return reject(`tier-shed: class=${req.sloClass} priority=${priority} < min=${minPriority} load=${maxLoad}`);
      }
      return ADMIT;
    },
  };
}

/** Defaults of GAIE's utilization saturation detector. */
export const GAIE_DEFAULT_QD_THRESHOLD = 5;
export const GAIE_DEFAULT_KV_THRESHOLD = 0.8;

/**
 * GAIE/llm-d legacy admission: non-sheddable classes (priority >= 0) always pass; sheddable ones are rejected
 * when the pool saturation — the mean over instances of max(QD/qdThreshold, KVUtil/kvThreshold), 1.0 with no
 * instances — is >= 1.
 */
export function gaieLegacy(
  qdThreshold: number = GAIE_DEFAULT_QD_THRESHOLD,
  kvThreshold: number = GAIE_DEFAULT_KV_THRESHOLD,
  priorities: SloPriorityMap = new SloPriorityMap(),
): AdmissionPolicy {
  if (!(Number.isFinite(qdThreshold) && qdThreshold > 0)) {
    throw invalid('gaie_qd_threshold', `gaie-legacy queue-depth threshold must be > 0, got ${qdThreshold}`);
  }
  if (!(Number.isFinite(kvThreshold) && kvThreshold > 0 && kvThreshold <= 1.0)) {
    throw invalid('gaie_kv_threshold', `gaie-legacy KV-utilization threshold must be in (0, 1.0], got ${kvThreshold}`);
  }
  const saturation = (state: RouterState): number => {
    const snaps = state.snapshots;
    if (snaps.length === 0) return 1.0;
    let total = 0;
    for (const s of snaps) total += Math.max(s.queueDepth / qdThreshold, s.kvUtilization / kvThreshold);
    return total / snaps.length;
  };
  return {
    name: 'gaie-legacy',
    admit(req: Request, state: RouterState): AdmissionDecision {
      if (!priorities.isSheddable(req.sloClass)) return ADMIT;
      const sat = saturation(state);
      if (sat >= 1.0) return reject(`gaie-saturated: class=${req.sloClass} saturation=${goFixed(sat, 2)}`);
      return ADMIT;
    },
  };
}

/** What the tenant-budget decorator asks of the cluster's tenant tracker. */
export interface TenantBudgetView {
  isOverBudget(tenantId: string): boolean;
}

/**
 * Per-tenant budgets as a decorator: a sheddable request of an over-budget tenant is rejected with
 * "tenant-budget-shed" before the inner policy sees it (so an inner policy with side effects, such as the
 * flow-control gateway queue, never enqueues it); everything else is the inner policy's decision.
 */
export function tenantBudget(inner: AdmissionPolicy, tracker: TenantBudgetView, priorities: SloPriorityMap = new SloPriorityMap()): AdmissionPolicy {
  const shed = reject('tenant-budget-shed');
  return {
    name: inner.name,
    admit(req: Request, state: RouterState): AdmissionDecision {
      if (tracker.isOverBudget(req.tenantId) && priorities.isSheddable(req.sloClass)) return shed;
      return inner.admit(req, state);
    },
  };
}
