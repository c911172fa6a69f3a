/**
 * E/P/D encode-pool invariants, from the requests' own states and the configured decider (never from the
 * counters they check):
 *   - INV-1 term: `encode_routing_rejections` equals the requests whose outcome is an encode rejection, and the
 *     Anomaly Counters line says so;
 *   - no request or half runs on an encode pod (corrected semantics' encode jobs are not requests);
 *   - a split request's encode pod is an encode-pool member, chosen iff the decider says so;
 *   - every request that reached the encode stage (routed to a decode pod, split, or lost at encode routing)
 *     and that the decider picks went through the encode pool exactly once: routed there or rejected there.
 * A policy-bundle decider may read the encode pool, so its choices cannot be re-derived from the request: they
 * are read from its recorded decisions (with a decision trace), and without one those checks are skipped.
 */
import { hasRole, PoolRole } from '../../src/cluster/pd/pools.js';
import { makeEncodeDecider } from '../../src/routing/encode-decider.js';
import { buildReport } from '../../src/sim/report.js';
import { topLevel, type Classification, type InvariantContext } from './context.js';

export function checkEncode(ctx: InvariantContext, cls: Classification): string[] {
  const { cs, requests, setup } = ctx;
  const v: string[] = [];
  const rejected = requests.filter((r) => r.outcome === 'encode_rejected');
  if (cs.encodeRoutingRejections !== rejected.length) v.push(`INV-1 encode: encode_routing_rejections=${cs.encodeRoutingRejections} but ${rejected.length} requests were lost at encode routing`);
  const stage = cs.pd?.encode ?? null;
  const name = setup.pd?.encodeDecider ?? null;
  if (stage === null || name === null) {
    if (rejected.length > 0 || cs.encodeRoutingRejections > 0) v.push('INV-1 encode: encode routing rejections without an encode pool');
    return v;
  }
  const pd = cs.pd as NonNullable<typeof cs.pd>;
  let decider: { shouldEncode(r: { id: string }, d: string): boolean } | null = makeEncodeDecider(name);
  if (stage.decider.decide !== undefined) {
    const said = new Map(stage.decisions.map((d) => [d.requestId, d.encode]));
    decider = setup.policy?.traceDecisions === true ? { shouldEncode: (r) => said.get(r.id) === true } : null;
  }
  cs.instances.forEach((inst, i) => {
    if (pd.role(i) === PoolRole.Encode && inst.metrics.requests.length > 0) v.push(`E/P/D: encode pod ${inst.id} ran ${inst.metrics.requests.length} requests`);
  });
  for (const r of rejected) {
    if (decider !== null && !decider.shouldEncode(r, '')) v.push(`E/P/D: ${r.id} lost at encode routing although the ${name} decider would not encode it`);
    if (r.assignedInstance !== '') v.push(`E/P/D: ${r.id} lost at encode routing but routed to ${r.assignedInstance}`);
  }
  for (const p of pd.parents) {
    const wants = decider?.shouldEncode(p.req, '') ?? p.encodeIndex >= 0;
    if (wants !== p.encodeIndex >= 0) v.push(`E/P/D: split request ${p.id} encode pod index ${p.encodeIndex} but the ${name} decider says ${wants}`);
    if (p.encodeIndex >= 0 && !hasRole(pd.role(p.encodeIndex), PoolRole.Encode)) v.push(`E/P/D: ${p.id} encoded on ${cs.instances[p.encodeIndex]?.id}, not an encode pod`);
  }
  // Redirect drains route a request again (through the encode stage again): the count is then a lower bound.
  const reached = decider === null ? stage.routed + cs.encodeRoutingRejections : requests.filter((r) => decider.shouldEncode(r, '') && (cls.split.has(r) || r.outcome === 'encode_rejected' || (topLevel(r) && r.assignedInstance !== '') || pd.encoding(r))).length;
  const seen = stage.routed + cs.encodeRoutingRejections;
  if (cs.drainRedirected === 0 ? seen !== reached : seen < reached) v.push(`E/P/D: ${reached} requests reached the encode stage with the ${name} decider, but ${stage.routed} were routed there and ${cs.encodeRoutingRejections} rejected`);
  const lines = buildReport(cs).sections.find((s) => s.header === 'Anomaly Counters');
  const line = lines?.kind === 'text' ? lines.lines.find((l) => l.startsWith('Encode Routing Rejections:')) : undefined;
  const want = rejected.length > 0 ? `Encode Routing Rejections: ${rejected.length}` : undefined;
  if (line !== want) v.push(`INV-1 encode: Anomaly Counters say ${line ?? '(no encode line)'}, requests say ${want ?? 'none'}`);
  return v;
}
