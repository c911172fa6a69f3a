"""The GEPA adapter and the optimize_anything evaluator (integrations/gepa, GEPA's current contracts) on real blis.

Runs ``node bin/blis.js`` from the repository root (build first: ``npm run build``), or ``BLIS_CMD`` when set:
through the warm evaluation server by default, through one CLI process per evaluation with ``BLIS_WARM=0``.
Every evaluation is one 500-request run of one example (well under a second of simulation). A failed candidate
scores 0 without latency figures; a set-up error (bad suite, example, component, an unbuilt checkout, a crash)
raises BlisSetupError.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
GEPA_DIR = REPO / "integrations" / "gepa"
ROUTE = "function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n"
BROKEN = "function route(request, state) {\n  return state.instances[0].id +;\n}\n"
THROWS = "function route(request, state) {\n  throw new Error('no route today');\n}\n"
LATENCY_LIKE = re.compile(r"(ttft|e2e|itl|tpot)", re.I)


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


def unbuilt_checkout(parent: str) -> list:
    """A copy of the launcher (bin/ and package.json) without dist/; returns the command running it."""
    root = Path(parent) / "unbuilt"
    (root / "bin").mkdir(parents=True)
    for name in ("blis.js", "load-cli.js", "package.json"):
        shutil.copyfile(str(REPO / "bin" / name), str(root / "bin" / name))
    shutil.copyfile(str(REPO / "package.json"), str(root / "package.json"))
    return ["node", str(root / "bin" / "blis.js")]


def _stub(parent: str, body: str) -> list:
    script = Path(parent) / "stub_blis.py"
    script.write_text(body, encoding="utf-8")
    return [sys.executable, str(script)]


def _clean_env() -> Any:
    env = {k: v for k, v in os.environ.items() if k not in ("BLIS_EVAL_URL", "BLIS_SUITE", "BLIS_CONTROL_POINT")}
    env["BLIS_TIMEOUT_S"] = "120"
    return mock.patch.dict(os.environ, env, clear=True)


class GEPAAdapterTest(unittest.TestCase):
    """BlisGEPAAdapter.evaluate / make_reflective_dataset return GEPA's documented shapes; set-up errors raise."""

    def setUp(self) -> None:
        patcher = _clean_env()
        patcher.start()
        self.addCleanup(patcher.stop)
        self.adapter = adapter_mod.BlisGEPAAdapter()
        self.tmp = tempfile.TemporaryDirectory(prefix="blis-gepa-test-")
        self.addCleanup(self.tmp.cleanup)

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

    def test_failing_candidates_score_zero_without_latency_figures(self) -> None:
        for code, reason in ((BROKEN, "syntax"), (THROWS, "no route today")):
            result = self.adapter.evaluate(["steady@1", {"scenario": "steady", "seed": 2}], {"routing": code}, capture_traces=True)
            self.assertEqual(result.scores, [0.0, 0.0])
            self.assertEqual([t["example_id"] for t in result.trajectories], ["steady@1", "steady@2"])
            for t, out in zip(result.trajectories, result.outputs):
                self.assertIn(reason, t["error"])
                self.assertIn(reason, t["feedback"])
                self.assertEqual((t["objectives"], t["metrics"], t["features"]), ({}, {}, {}))
                self.assertEqual(out["objectives"], {})
                self.assertFalse(LATENCY_LIKE.search(json.dumps({k: v for k, v in t.items() if k not in ("error", "feedback", "scores")})), "no latency figures for a failed candidate")
                self.assertEqual(set(t["scores"].values()) | {0.0}, {0.0})
            dataset = self.adapter.make_reflective_dataset({"routing": code}, result, ["routing"])
            self.assertIn(reason, dataset["routing"][0]["Feedback"])
            self.assertTrue(dataset["routing"][0]["Generated Outputs"].startswith("No result: "))

    def test_failed_examples_get_zero_objective_scores_beside_good_ones(self) -> None:
        good = self.adapter.evaluate(["steady@1"], {"routing": ROUTE})
        bad = self.adapter.evaluate(["steady@1", "hot@3"], {"routing": THROWS})
        self.assertEqual(bad.scores, [0.0, 0.0])
        self.assertIsNotNone(bad.objective_scores)
        for d in bad.objective_scores:
            self.assertEqual(set(d), set(good.objective_scores[0]))
            self.assertEqual(set(d.values()), {0.0})

    def test_bad_examples_raise(self) -> None:
        for item, message in (("nope@3", 'unknown example id "nope@3" (known: steady@1, steady@2, hot@3, hot@4)'), ("garbage", 'bad example id "garbage"'), (42, "not an example: 42")):
            with self.assertRaises(adapter_mod.BlisSetupError) as caught:
                self.adapter.evaluate(["steady@1", item], {"routing": ROUTE})
            self.assertIn(message, str(caught.exception))

    def test_cli_path_messages(self) -> None:
        """With BLIS_WARM=0 each evaluation is one CLI process, and set-up errors carry the CLI's error lines."""
        with mock.patch.dict(os.environ, {"BLIS_WARM": "0"}):
            adapter = adapter_mod.BlisGEPAAdapter()
            self.assertFalse(adapter.client.warm)
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, r'error: --components: unknown candidate component "nonsense"'):
                adapter.evaluate(["steady@1"], {"nonsense": "x"})
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, "error: --only nope@3: no such scenario and seed in suite routing-prefix-heavy"):
                adapter.evaluate(["nope@3"], {"routing": ROUTE})
            result = adapter.evaluate(["steady@1"], {"routing": ROUTE})
            warm = self.adapter.evaluate(["steady@1"], {"routing": ROUTE})
            self.assertEqual(result.scores, warm.scores, "the CLI and the warm server score alike")

    def test_unknown_component_raises_with_the_server_message(self) -> None:
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, r'answered 400: bad candidate: unknown candidate component "nonsense"'):
            self.adapter.evaluate(["steady@1"], {"nonsense": "x"})
        with self.assertRaises(TypeError):
            self.adapter.evaluate(["steady@1"], 12345)  # type: ignore[arg-type]

    def test_unknown_suite_raises_with_the_cli_message(self) -> None:
        adapter = adapter_mod.BlisGEPAAdapter(suite="routing-prefix-hevy")
        message = 'error: --suite: "routing-prefix-hevy" is neither a built-in suite'
        with self.assertRaises(adapter_mod.BlisSetupError) as caught:
            adapter.evaluate(["steady@1"], {"routing": ROUTE})
        self.assertIn(message, str(caught.exception))
        self.assertIn("exit 2", str(caught.exception))
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, re.escape(message)):
            adapter.examples()
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, re.escape(message)):
            adapter.check_setup()
        self.adapter.check_setup()  # the default suite is fine

    def test_suite_file_examples_are_checked(self) -> None:
        bad = Path(self.tmp.name) / "bad-suite.yaml"
        bad.write_text("name: x\nobjectives: 3\n", encoding="utf-8")
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, "bad-suite.yaml:2:13: objectives"):
            adapter_mod.BlisGEPAAdapter(suite=str(bad)).examples()

    def test_unbuilt_checkout_raises_with_the_build_hint(self) -> None:
        adapter = adapter_mod.BlisGEPAAdapter(blis_cmd=unbuilt_checkout(self.tmp.name))
        for call in (lambda: adapter.evaluate(["steady@1"], {"routing": ROUTE}), adapter.examples, adapter.check_setup):
            with self.assertRaisesRegex(adapter_mod.BlisSetupError, r"exit 2\): error: blis-ts is not built: run npm run build \(or npm ci, then npm run build\) in "):
                call()

    def test_crashes_and_garbage_raise_but_a_timeout_is_scored(self) -> None:
        """Through the CLI (BLIS_WARM=0); test_warm.py has the same for the warm server."""
        patcher = mock.patch.dict(os.environ, {"BLIS_WARM": "0"})
        patcher.start()
        self.addCleanup(patcher.stop)
        crash = adapter_mod.BlisGEPAAdapter(blis_cmd=_stub(self.tmp.name, "import sys\nsys.stderr.write('fatal: out of cheese\\n')\nsys.exit(70)\n"))
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, r"crashed \(exit 70\): fatal: out of cheese"):
            crash.evaluate(["steady@1"], {"routing": ROUTE})
        garbage = adapter_mod.BlisGEPAAdapter(blis_cmd=_stub(self.tmp.name, "print('not json')\n"))
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, "no JSON"):
            garbage.evaluate(["steady@1"], {"routing": ROUTE})
        missing = adapter_mod.BlisGEPAAdapter(blis_cmd=["/nonexistent/blis-binary"])
        with self.assertRaisesRegex(adapter_mod.BlisSetupError, "could not be started"):
            missing.evaluate(["steady@1"], {"routing": ROUTE})
        slow = adapter_mod.BlisGEPAAdapter(blis_cmd=_stub(self.tmp.name, "import time\ntime.sleep(60)\n"), timeout_s=1)
        result = slow.evaluate(["steady@1"], {"routing": ROUTE}, capture_traces=True)
        self.assertEqual(result.scores, [0.0])
        self.assertIn("timeout", result.trajectories[0]["error"])

    def test_bundle_component(self) -> None:
        bundle = "routing:\n  type: parameterized\n  template: weighted_affinity_routing\n  parameters: {cache_affinity_weight: 3}\n"
        result = self.adapter.evaluate(["steady@1"], {"bundle": bundle}, capture_traces=True)
        self.assertGreater(result.scores[0], 0.0, result.trajectories[0].get("error"))

    def test_make_reflective_dataset(self) -> None:
        candidate = {"routing": ROUTE}
        result = self.adapter.evaluate(["steady@1"], candidate, capture_traces=True)
        failed = self.adapter.evaluate(["hot@3"], {"routing": THROWS}, capture_traces=True)
        result.trajectories.extend(failed.trajectories)
        result.scores.extend(failed.scores)
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
        self.assertIn("no route today", dataset["routing"][1]["Feedback"])
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

    def test_failed_candidates_are_scored_zero(self) -> None:
        score, info = oa.evaluate({"routing": BROKEN}, "steady@1")
        self.check(score, info)
        self.assertEqual(score, 0.0)
        self.assertIn("syntax", info["Error"].lower())
        score, info = oa.evaluate({"routing": THROWS}, "steady@1")
        self.check(score, info)
        self.assertEqual(score, 0.0)
        self.assertIn("no route today", info["Error"])
        self.assertIn("no route today", info["Feedback"])
        self.assertEqual(info["objectives"], {})
        self.assertTrue(info["Output"].startswith("No result: "))
        self.assertEqual(set(info["scores"].values()) | {0.0}, {0.0})

    def test_set_up_errors_raise(self) -> None:
        with self.assertRaisesRegex(oa.BlisSetupError, "not an example: 3.5"):
            oa.evaluate({"routing": ROUTE}, 3.5)
        with self.assertRaisesRegex(oa.BlisSetupError, 'unknown example id "steady@99"'):
            oa.evaluate({"routing": ROUTE}, "steady@99")
        with self.assertRaises(TypeError):
            oa.evaluate(12345)
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "routing-prefix-hevy"}):
            oa._client = None
            message = 'error: --suite: "routing-prefix-hevy" is neither a built-in suite'
            with self.assertRaisesRegex(oa.BlisSetupError, re.escape(message)):
                oa.dataset()
            with self.assertRaisesRegex(oa.BlisSetupError, re.escape(message)):
                oa.check_setup()
            with self.assertRaisesRegex(oa.BlisSetupError, re.escape(message)):
                oa.evaluate({"routing": ROUTE}, "steady@1")
        oa._client = None
        oa.check_setup()

    def test_whole_suite_and_dataset(self) -> None:
        self.assertEqual(oa.dataset(), ["steady@1", "steady@2", "hot@3", "hot@4"])
        score, info = oa.evaluate({"routing": ROUTE})
        self.check(score, info)
        self.assertGreater(score, 0.0)


if __name__ == "__main__":
    unittest.main()
