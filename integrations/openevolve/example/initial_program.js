// blis-ts routing policy evolved by OpenEvolve (integrations/openevolve/README in example/README.md).
//
// Contract (docs/policies.md): route(request, state) is called once per request and returns an instance id,
// its index in state.instances, or {target, reason?}. It runs in a deterministic sandbox: no I/O, no Date,
// no Math.random (use state.rng.intn(n) / state.rng.float()); top-level variables persist within one run.
//
// This starting point is deliberately mediocre: plain least-loaded routing that ignores prefix caching, so
// requests sharing a system prompt scatter over the instances and recompute their prefixes.

// EVOLVE-BLOCK-START
function route(request, state) {
  let best = state.instances[0];
  for (const inst of state.instances) {
    if (inst.load < best.load) best = inst;
  }
  return { target: best.id, reason: `least loaded (load ${best.load})` };
}
// EVOLVE-BLOCK-END
