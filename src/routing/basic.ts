/** The policies the single-instance path needs; the cluster issue adds the rest behind the same contracts. */
import type { AdmissionPolicy, RoutingPolicy } from './types.js';

export function alwaysAdmit(): AdmissionPolicy {
  return { name: 'always-admit', admit: () => ({ admitted: true, reason: '' }) };
}

/** Cycles through the routable instances in order; the counter advances once per decision. */
export function roundRobin(): RoutingPolicy {
  let counter = 0;
  return {
    name: 'round-robin',
    route: (_req, state) => {
      const n = state.instances.length;
      const target = counter % n;
      counter++;
      return { target, reason: `round-robin[${target}]`, scores: null };
    },
  };
}
