"""Driven by bench/frameworks.js: evaluations per minute through the OpenEvolve evaluator and the GEPA adapter.

Prints one JSON object: per path (OpenEvolve cascade, GEPA one-example evaluations; warm server and, for
comparison, one CLI process per evaluation) the number of distinct candidates, the wall time, evaluations per
minute and the median per evaluation, and the wall time of the first cascade (server start and cold JIT included).
"""

import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INITIAL = (ROOT / "integrations" / "openevolve" / "example" / "initial_program.js").read_text(encoding="utf-8")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def variant(i, tag):
    return INITIAL + "\n// %s candidate %d\n" % (tag, i)


def openevolve(n, tag):
    ev = load("bench_oe_%s" % tag, ROOT / "integrations" / "openevolve" / "evaluator.py")
    times = []
    with tempfile.TemporaryDirectory(prefix="blis-bench-oe-") as d:
        start = time.perf_counter()
        for i in range(n):
            path = Path(d) / ("p%d.js" % i)
            path.write_text(variant(i, tag), encoding="utf-8")
            t = time.perf_counter()
            m1 = ev.evaluate_stage1(str(path))
            m1 = m1 if isinstance(m1, dict) else m1.metrics
            if m1["combined_score"] >= 0.3:  # the example config's cascade threshold
                ev.evaluate_stage2(str(path))
            times.append(time.perf_counter() - t)
        wall = time.perf_counter() - start
    return {"candidates": n, "wall_s": wall, "per_minute": 60 * n / wall, "first_s": times[0], "median_s": statistics.median(times)}


def gepa(n, tag):
    ad = load("bench_gepa_%s" % tag, ROOT / "integrations" / "gepa" / "adapter.py")
    adapter = ad.BlisGEPAAdapter()
    examples = adapter.examples()
    times = []
    start = time.perf_counter()
    for i in range(n):
        t = time.perf_counter()
        batch = adapter.evaluate([examples[i % len(examples)]], {"routing": variant(i, tag)})
        assert batch.scores[0] > 0, batch
        times.append(time.perf_counter() - t)
    wall = time.perf_counter() - start
    return {"candidates": n, "wall_s": wall, "per_minute": 60 * n / wall, "first_s": times[0], "median_s": statistics.median(times)}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    cold_n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    stamp = "%d" % time.time_ns()
    out = {}
    os.environ.pop("BLIS_WARM", None)
    out["openevolve_warm"] = openevolve(n, "warm" + stamp)
    out["gepa_warm"] = gepa(n, "warm" + stamp)
    os.environ["BLIS_WARM"] = "0"
    out["openevolve_cli"] = openevolve(cold_n, "cli" + stamp)
    out["gepa_cli"] = gepa(cold_n, "cli" + stamp)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
