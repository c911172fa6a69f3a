// A routing candidate for `blis evaluate --candidate examples/route.js --control-point routing`:
// the least loaded of the instances holding the longest cached prefix.
function route(request, state) {
  const best = Math.max(...state.instances.map((x) => x.cachedPrefixBlocks));
  const pool = state.instances.filter((x) => x.cachedPrefixBlocks === best);
  const minLoad = Math.min(...pool.map((x) => x.load));
  return pool.find((x) => x.load === minLoad).id;
}
