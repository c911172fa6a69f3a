/**
 * Per-tenant in-flight accounting for fair-share budgets (reference blis-cluster.md §2.3). The cluster owns
 * one tracker and updates it from its handlers: `onStart` at routing injection (every sub-request of a PD
 * request counts), `onComplete` on every terminal state and gateway eviction. The admission decorator
 * (`tenantBudget` in admission.ts) only reads it.
 */
import { RoutingConfigError, RoutingErrorCode } from './errors.js';
import type { TenantBudgetView } from './admission.js';

export class TenantTracker implements TenantBudgetView {
  private readonly budgets: ReadonlyMap<string, number>;
  private readonly inFlight = new Map<string, number>();
  /** Cluster-wide in-flight slots (instances × max-num-seqs), at least 1. */
  readonly totalCapacity: number;

  /**
   * @param budgets fraction of the cluster's slots per tenant, each in [0, 1]; a tenant without an entry is
   *   unlimited.
   */
  constructor(budgets: Readonly<Record<string, number>> | ReadonlyMap<string, number>, totalCapacity: number) {
    const entries = budgets instanceof Map ? [...budgets.entries()] : Object.entries(budgets);
    // Sorted so that, with several bad entries, the one reported does not depend on insertion order.
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [tenant, v] of entries) {
      if (!(Number.isFinite(v) && v >= 0 && v <= 1)) {
        throw new RoutingConfigError(
          RoutingErrorCode.InvalidParameter,
          `tenant_budgets.${tenant}`,
          `budget for tenant ${JSON.stringify(tenant)} is ${v}; must be in [0, 1]`,
        );
      }
    }
    this.budgets = new Map(entries);
    this.totalCapacity = totalCapacity < 1 ? 1 : totalCapacity;
  }

  /**
   * True when the tenant has a budget and its in-flight count strictly exceeds budget × capacity; so a budget
   * of 0 still lets one request in at a time. The empty tenant is never over budget.
   */
  isOverBudget(tenantId: string): boolean {
    if (tenantId === '') return false;
    const budget = this.budgets.get(tenantId);
    if (budget === undefined) return false;
    return (this.inFlight.get(tenantId) ?? 0) > budget * this.totalCapacity;
  }

  onStart(tenantId: string): void {
    if (tenantId === '') return;
    this.inFlight.set(tenantId, (this.inFlight.get(tenantId) ?? 0) + 1);
  }

  /** Decrements, never below zero. */
  onComplete(tenantId: string): void {
    if (tenantId === '') return;
    const n = this.inFlight.get(tenantId) ?? 0;
    if (n > 0) this.inFlight.set(tenantId, n - 1);
  }

  inFlightOf(tenantId: string): number {
    return this.inFlight.get(tenantId) ?? 0;
  }
}
