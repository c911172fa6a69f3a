// A scheduler control point (docs/policies.md), named by examples/bundle.yaml: shortest prompt first, in
// chunks of 256 tokens; when KV runs out, the running request with the longest prompt is preempted.
function makeBatch(ctx) {
  const free = ctx.maxBatchSize - ctx.running.length;
  return ctx.waiting
    .slice()
    .sort((a, b) => a.inputTokens - b.inputTokens || a.arrivalUs - b.arrivalUs)
    .slice(0, Math.max(0, free))
    .map((r) => ({ id: r.id, chunk: 256 }));
}

function selectPreemptionVictim(ctx) {
  let v = ctx.running[0];
  for (const r of ctx.running) if (r.inputTokens > v.inputTokens) v = r;
  return v.id;
}
