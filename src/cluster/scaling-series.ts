/**
 * Time-series probes for the dynamic parts of a cluster: replicas as the autoscaler moves them, P/D pool
 * membership and KV transfers. They read counters the cluster keeps anyway, so sampling changes nothing.
 */
import type { ClusterSimulator } from './cluster.js';
import { InstanceState } from './autoscaler/lifecycle.js';
import { hasRole, PoolRole } from './pd/pools.js';
import { SERIES_NAMES, type SeriesProbe } from './timeseries.js';

/** Live (not terminated) instances, and those of them taking traffic. */
function replicaCounts(cs: ClusterSimulator): { live: number; routable: number } {
  const lc = cs.lifecycle;
  if (lc === null) return { live: cs.instances.length, routable: cs.instances.length };
  let live = 0;
  let routable = 0;
  for (let i = 0; i < lc.states.length; i++) {
    if (lc.states[i] !== InstanceState.Terminated) live++;
    if (lc.routable(i)) routable++;
  }
  return { live, routable };
}

/**
 * `replicas` (live instances: loading, warming up, active or draining) and, with instance lifecycles,
 * `replicas_routable`; with P/D pools,
 * `pool.prefill` / `pool.decode` (live members; a shared-role pod counts in both) and `pd.*` transfer series.
 * Replaces the built-in replica probe, which counts every instance ever added.
 */
export function scalingProbes(cs: ClusterSimulator): SeriesProbe[] {
  const probes: SeriesProbe[] = cs.lifecycle === null
    ? [{ columns: [{ name: SERIES_NAMES.replicas, kind: 'gauge' }], read: (_clock, out) => { out[0] = cs.instances.length; } }]
    : [{
      columns: [{ name: SERIES_NAMES.replicas, kind: 'gauge' }, { name: 'replicas_routable', kind: 'gauge' }],
      read: (_clock, out) => {
        const c = replicaCounts(cs);
        out[0] = c.live;
        out[1] = c.routable;
      },
    }];
  const pd = cs.pd;
  if (pd === null) return probes;
  const P = SERIES_NAMES.poolPrefix;
  const D = SERIES_NAMES.pdPrefix;
  probes.push({
    columns: [
      { name: `${P}prefill`, kind: 'gauge' },
      { name: `${P}decode`, kind: 'gauge' },
      { name: `${D}transfers_started`, kind: 'counter' },
      { name: `${D}transfers_completed`, kind: 'counter' },
      { name: `${D}transfers_active`, kind: 'gauge' },
      { name: `${D}decode_pending`, kind: 'gauge' },
    ],
    read: (_clock, out) => {
      const lc = cs.lifecycle;
      let prefill = 0;
      let decode = 0;
      for (let i = 0; i < cs.instances.length; i++) {
        if (lc !== null && lc.state(i) === InstanceState.Terminated) continue;
        const role = pd.role(i);
        if (hasRole(role, PoolRole.Prefill)) prefill++;
        if (hasRole(role, PoolRole.Decode)) decode++;
      }
      out[0] = prefill;
      out[1] = decode;
      out[2] = pd.transfersInitiated;
      out[3] = pd.transfersCompleted;
      out[4] = pd.activeTransfers;
      out[5] = pd.pendingDecode;
    },
  });
  return probes;
}
