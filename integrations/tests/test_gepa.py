"""The GEPA adapter and the optimize_anything evaluator (integrations/gepa, GEPA 0.1.4 contracts) on the real CLI.

Runs ``node bin/blis.js`` from the repository root (build first: ``npm run build``), or ``BLIS_CMD`` when set.
Every evaluation is one 500-request run of one example (well under a second of simulation).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
GEPA_DIR = REPO / "integrations" / "gepa"
ROUTE = "function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n"
BROKEN = "function route(request, state) {\n  return state.instances[0].id +;\n}\n"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _blis_cmd() -> list:
    override = os.environ.get("BLIS_CMD", "").strip()
    return shlex.split(override) if override else ["node", str(REPO / "bin" / "blis.js")]


def setUpModule() -> None:  # noqa: N802 -- unittest's name
    """Fails the module early, with the fix, when the CLI cannot evaluate (not built)."""
    try:
        res = subprocess.run(_blis_cmd() + ["suites"], cwd=str(REPO), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError("cannot run blis (%s): build it with `npm run build` or set BLIS_CMD" % e)
    if res.returncode != 0 or "routing-prefix-heavy" not in res.stdout:
        raise RuntimeError("`blis suites` failed (exit %s): %s -- build with `npm run build` or set BLIS_CMD" % (res.returncode, res.stderr.strip()[:500]))


adapter_mod = _load("blis_gepa_adapter_under_test", GEPA_DIR / "adapter.py")
oa = _load("blis_gepa_oa_under_test", GEPA_DIR / "oa_evaluator.py")


def _clean_env() -> Any:
    env = {k: v for k, v in os.environ.items() if k not in ("BLIS_EVAL_URL", "BLIS_SUITE", "BLIS_CONTROL_POINT")}
    env["BLIS_TIMEOUT_S"] = "120"
    return mock.patch.dict(os.environ, env, clear=True)


class GEPAAdapterTest(unittest.TestCase):
    """BlisGEPAAdapter.evaluate / make_reflective_dataset return GEPA's documented shapes and never raise."""

    def setUp(self) -> None:
        patcher = _clean_env()
        patcher.start()
        self.addCleanup(patcher.stop)
        self.adapter = adapter_mod.BlisGEPAAdapter()

    def test_protocol_attributes(self) -> None:
        self.assertIsNone(adapter_mod.BlisGEPAAdapter.propose_new_texts)
        self.assertIsNone(self.adapter.propose_new_texts)
        self.assertEqual(self.adapter.suite, "routing-prefix-heavy")
        self.assertEqual(self.adapter.examples(), ["steady@1", "steady@2", "hot@3", "hot@4"])

    def test_evaluate_with_traces(self) -> None:
        batch = ["steady@1", {"example_id": "hot@3"}]
        result = self.adapter.evaluate(batch, {"routing": ROUTE}, capture_traces=True)
        self.assertEqual(len(result.outputs), 2)
        self.assertEqual(len(result.scores), 2)
        self.assertEqual(result.num_metric_calls, 2)
        for s in result.scores:
            self.assertIsInstance(s, float)
            self.assertGreater(s, 0.0)
            self.assertLessEqual(s, 1.0)
        self.assertIsNotNone(result.trajectories)
        self.assertEqual(len(result.trajectories), 2)
        self.assertEqual([t["example_id"] for t in result.trajectories], ["steady@1", "hot@3"])
        self.assertTrue(result.trajectories[0]["feedback"].strip())
        self.assertIsNotNone(result.objective_scores)
        self.assertEqual(len(result.objective_scores), 2)
        for d in result.objective_scores:
            self.assertTrue(d)
            for k, v in d.items():
                self.assertIsInstance(k, str)
                self.assertIsInstance(v, float)
                self.assertTrue(0.0 <= v <= 1.0)
        self.assertEqual(set(result.objective_scores[0]), set(result.objective_scores[1]))
        json.dumps(result.outputs)
        json.dumps(result.trajectories)

    def test_evaluate_without_traces(self) -> None:
        result = self.adapter.evaluate(["steady@2"], {"routing": ROUTE})
        self.assertIsNone(result.trajectories)
        self.assertEqual(len(result.scores), 1)

    def test_bad_examples_and_candidates_score_zero_without_raising(self) -> None:
        batch = ["steady@1", "nope@3", "garbage", 42, {"scenario": "steady", "seed": 2}]
        result = self.adapter.evaluate(batch, {"routing": BROKEN}, capture_traces=True)
        self.assertEqual(result.scores, [0.0] * 5)
        self.assertEqual(len(result.trajectories), 5)
        self.assertIn("syntax", result.trajectories[0]["error"].lower())
        self.assertIn("nope@3", result.trajectories[1]["error"])
        self.assertIn("scenario@seed", result.trajectories[2]["error"])
        self.assertIn("not an example", result.trajectories[3]["error"])
        self.assertEqual(result.trajectories[4]["example_id"], "steady@2")
        unknown = self.adapter.evaluate(["steady@1"], {"nonsense": "x"}, capture_traces=True)
        self.assertEqual(unknown.scores, [0.0])
        self.assertIn("nonsense", unknown.trajectories[0]["error"])

    def test_bundle_component(self) -> None:
        bundle = "routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {cache_affinity_weight: 3}\n"
        result = self.adapter.evaluate(["steady@1"], {"bundle": bundle}, capture_traces=True)
        self.assertGreater(result.scores[0], 0.0, result.trajectories[0].get("error"))

    def test_make_reflective_dataset(self) -> None:
        candidate = {"routing": ROUTE}
        result = self.adapter.evaluate(["steady@1", "nope@9"], candidate, capture_traces=True)
        dataset = self.adapter.make_reflective_dataset(candidate, result, ["routing", "admission"])
        self.assertEqual(set(dataset), {"routing", "admission"})
        for component, records in dataset.items():
            self.assertEqual(len(records), 2)
            for rec in records:
                self.assertIn("Inputs", rec)
                self.assertIn("Generated Outputs", rec)
                self.assertIn("Feedback", rec)
                self.assertTrue(str(rec["Feedback"]).strip())
                self.assertEqual(rec["Inputs"]["component"], component)
            json.dumps(records)
        self.assertIn("Outcome", dataset["routing"][0]["Feedback"])
        self.assertIn("nope@9", dataset["routing"][1]["Feedback"])
        empty = self.adapter.evaluate([], candidate, capture_traces=True)
        self.assertEqual(empty.scores, [])
        fallback = self.adapter.make_reflective_dataset(candidate, empty, ["routing"])
        self.assertEqual(len(fallback["routing"]), 1)


class OptimizeAnythingEvaluatorTest(unittest.TestCase):
    """oa_evaluator.evaluate returns (float, dict) with info["scores"] a dict of floats."""

    def setUp(self) -> None:
        patcher = _clean_env()
        patcher.start()
        self.addCleanup(patcher.stop)
        oa._client = None

    def check(self, score: Any, info: Any) -> None:
        self.assertIsInstance(score, float)
        self.assertTrue(math.isfinite(score))
        self.assertIsInstance(info, dict)
        self.assertIsInstance(info["scores"], dict)
        for k, v in info["scores"].items():
            self.assertIsInstance(k, str)
            self.assertIsInstance(v, float)
        for reserved in ("log", "stdout", "stderr", "_budget"):
            self.assertNotIn(reserved, info)
        json.dumps(info)

    def test_dict_candidate_on_one_example(self) -> None:
        score, info = oa.evaluate(oa.seed_candidate(), "steady@1")
        self.check(score, info)
        self.assertGreater(score, 0.0)
        self.assertTrue(info["scores"])
        self.assertTrue(info["Feedback"].strip())
        self.assertEqual(info["example_id"], "steady@1")
        self.assertNotIn("Error", info)

    def test_string_candidates(self) -> None:
        score, info = oa.evaluate(ROUTE, {"example_id": "steady@1"})
        self.check(score, info)
        self.assertGreater(score, 0.0)
        score2, _ = oa.evaluate(json.dumps({"routing": ROUTE}), "steady@1")
        self.assertEqual(score, score2)
        self.assertEqual(oa.components_of("routing:\n  type: parameterized\n  template: least_loaded_routing\n"), {"bundle": "routing:\n  type: parameterized\n  template: least_loaded_routing\n"})

    def test_failures_are_scored_zero(self) -> None:
        score, info = oa.evaluate({"routing": BROKEN}, "steady@1")
        self.check(score, info)
        self.assertEqual(score, 0.0)
        self.assertIn("syntax", info["Error"].lower())
        score, info = oa.evaluate({"routing": ROUTE}, 3.5)
        self.check(score, info)
        self.assertEqual(score, 0.0)
        score, info = oa.evaluate(12345)
        self.check(score, info)
        self.assertEqual(score, 0.0)

    def test_whole_suite_and_dataset(self) -> None:
        self.assertEqual(oa.dataset(), ["steady@1", "steady@2", "hot@3", "hot@4"])
        score, info = oa.evaluate({"routing": ROUTE})
        self.check(score, info)
        self.assertGreater(score, 0.0)


if __name__ == "__main__":
    unittest.main()
