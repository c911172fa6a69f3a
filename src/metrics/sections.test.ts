import { describe, expect, it } from 'vitest';
import { computePerModelMetrics, computePerSloDistributions, computePerTenantMetrics, computeSessionMetrics } from './breakdowns.js';
import { perModelLines, perSloLines, perTenantLines, sessionLines } from './sections.js';
import { done } from '../../test/metrics/outcomes.js';

describe('Per-SLO Metrics text', () => {
  const two = computePerSloDistributions([
    done('a', 1000, 20000, { sloClass: 'critical', itlMean: 9.125 }),
    done('b', 3000, 40000, { sloClass: 'critical', itlMean: 10.5 }),
    done('c', 500, 5000, { itlMean: 1 }),
  ]);
  it('prints every class, sorted, mean and p99 %.2f in ticks', () => {
    // critical: TTFT mean 2000, p99 = 1000 + 0.99·2000 = 2980; ITL mean 9.8125 → "9.81" (half-even on the exact binary)
    expect(perSloLines(two, false)).toEqual([
      '  critical:',
      '    TTFT: mean=2000.00 p99=2980.00 (n=2)',
      '    ITL:  mean=9.81 p99=10.49 (n=2)',
      '    E2E:  mean=30000.00 p99=39800.00 (n=2)',
      '  default:',
      '    TTFT: mean=500.00 p99=500.00 (n=1)',
      '    ITL:  mean=1.00 p99=1.00 (n=1)',
      '    E2E:  mean=5000.00 p99=5000.00 (n=1)',
    ]);
  });
  it('is suppressed for one class unless goodput is configured, and for none', () => {
    const one = computePerSloDistributions([done('a', 1, 2)]);
    expect(perSloLines(one, false)).toBeNull();
    expect(perSloLines(one, true)?.[0]).toBe('  default:');
    expect(perSloLines(new Map(), true)).toBeNull();
  });
});

describe('Per-Model Metrics text', () => {
  it('prints p50/p99 and throughput per model', () => {
    const m = computePerModelMetrics([done('a', 100, 1000, { model: 'm1', outputLen: 3 })], 2_000_000);
    expect(perModelLines(m)).toEqual(['  m1:', '    TTFT: p50=100.00 p99=100.00 (n=1)', '    E2E:  p50=1000.00 p99=1000.00 (n=1)', '    Throughput: 0.50 req/s, 1.50 tok/s']);
    expect(perModelLines(null)).toBeNull();
  });
});

describe('Per-Tenant Metrics text', () => {
  it('prints counts per tenant and Jain %.4f', () => {
    const t = computePerTenantMetrics([done('a', 1, 2, { tenantId: 'b', outputLen: 3 }), done('b', 1, 2, { tenantId: 'a', outputLen: 1 })]);
    expect(perTenantLines(t)).toEqual(['  a: requests=1, tokens=1', '  b: requests=1, tokens=3', '  Jain Fairness Index: 0.8000']);
    expect(perTenantLines(null)).toBeNull();
  });
});

describe('Session Metrics text', () => {
  it('prints the count and only the non-empty distributions', () => {
    const s = computeSessionMetrics([done('r', 2500, 10_000, { sessionId: 's', arrivalTime: 1_000_000 })]);
    expect(sessionLines(s)).toEqual([
      '  Sessions: 1',
      '  TTFT cold (round 0): mean=2.50 p50=2.50 p95=2.50 p99=2.50 ms (n=1)',
      '  Session duration:    mean=10.00 p50=10.00 p95=10.00 p99=10.00 ms (n=1)',
    ]);
    const w = computeSessionMetrics([done('r', 1500, 2000, { sessionId: 's', roundIndex: 2 })]);
    expect(sessionLines(w)).toEqual(['  Sessions: 1', '  TTFT warm (round≥1): mean=1.50 p50=1.50 p95=1.50 p99=1.50 ms (n=1)']);
    expect(sessionLines(null)).toBeNull();
  });
});
