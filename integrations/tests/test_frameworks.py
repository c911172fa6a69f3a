"""The integrations driven by OpenEvolve and GEPA as they are shaped now, with stand-ins (tests/fakes/) where a
real import is needed: OpenEvolve 0.4's Evaluator (cascade, evaluator_args, failure marking) over the example
evaluation file, GEPA's optimize over the adapter, and the optimize_anything example with its offline reflection
model. Good, broken (throws / does not parse) and misconfigured (unknown suite) candidates, the reflection
records' duplicates and budget, and the starting points' distance from the suite's known-good policy.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from typing import Any, Dict, List
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
FAKES = Path(__file__).resolve().parent / "fakes"
OE_DIR = REPO / "integrations" / "openevolve"
GEPA_DIR = REPO / "integrations" / "gepa"
INITIAL = OE_DIR / "example" / "initial_program.js"
THROWS = "// EVOLVE-BLOCK-START\nfunction route(request, state) {\n  throw new Error('no route today');\n}\n// EVOLVE-BLOCK-END\n"
BROKEN = "// EVOLVE-BLOCK-START\nfunction route(request, state) {\n  return state.instances[0].id +;\n}\n// EVOLVE-BLOCK-END\n"
KNOWN_GOOD = {"bundle": "routing:\n  policy: weighted\n"}  # the suite's known-good policy (src/evaluate/suites.ts)
_SHARED = ("blis_openevolve_evaluator", "blis_gepa_adapter", "evaluation_module", "openevolve", "gepa")

fw: Dict[str, Any] = {}


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _forget(prefixes: tuple) -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in prefixes:
            del sys.modules[name]


def setUpModule() -> None:  # noqa: N802
    """The stand-ins go first on sys.path, and the integrations are loaded afresh so that they import them."""
    fw["saved"] = {k: v for k, v in sys.modules.items() if k.split(".")[0] in _SHARED}
    _forget(_SHARED)
    sys.path.insert(0, str(FAKES))
    fw["oe_result"] = importlib.import_module("openevolve.evaluation_result")
    fw["oe_evaluator"] = importlib.import_module("openevolve.evaluator")
    fw["gepa"] = importlib.import_module("gepa")
    fw["adapter"] = _load("blis_gepa_adapter", GEPA_DIR / "adapter.py")
    fw["oa"] = _load("blis_gepa_oa_fw", GEPA_DIR / "oa_evaluator.py")
    fw["example"] = _load("blis_gepa_example_fw", GEPA_DIR / "example_optimize_anything.py")


def tearDownModule() -> None:  # noqa: N802
    sys.path.remove(str(FAKES))
    _forget(_SHARED)
    sys.modules.update(fw["saved"])


def _env(**extra: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLIS_")}
    env.update({"BLIS_TIMEOUT_S": "120"}, **extra)
    return mock.patch.dict(os.environ, env, clear=True)


class OpenEvolveStandInTest(unittest.TestCase):
    """OpenEvolve 0.4's Evaluator over integrations/openevolve/example/evaluator.py."""

    def setUp(self) -> None:
        patcher = _env()
        patcher.start()
        self.addCleanup(patcher.stop)
        self.config = fw["oe_evaluator"].EvaluatorConfig(cascade_thresholds=[0.3], max_retries=0)

    def evaluator(self, **config: Any) -> Any:
        for k, v in config.items():
            setattr(self.config, k, v)
        return fw["oe_evaluator"].Evaluator(self.config, str(OE_DIR / "example" / "evaluator.py"), suffix=".js")

    def test_good_program_passes_the_cascade(self) -> None:
        ev = self.evaluator()
        metrics = ev.evaluate_program(INITIAL.read_text(encoding="utf-8"), "p1")
        self.assertNotIn(fw["oe_result"].EVALUATION_FAILED_METRIC, metrics)
        self.assertEqual(metrics["stage"], 2.0, "stage 1 passed the 0.3 threshold; stage 2 ran")
        self.assertGreater(metrics["combined_score"], 0.0)
        self.assertLess(metrics["combined_score"], 0.3)
        for v in metrics.values():
            self.assertIsInstance(v, float)
        artifacts = ev.get_pending_artifacts("p1")
        self.assertIn("## Worst Decisions", artifacts["summary"])
        self.assertNotIn("error", artifacts)

    def test_broken_programs_score_zero_and_are_stored(self) -> None:
        ev = self.evaluator()
        for code, reason in ((THROWS, "no route today"), (BROKEN, "syntax")):
            metrics = ev.evaluate_program(code, "p")
            artifacts = ev.get_pending_artifacts("p")
            self.assertNotIn(fw["oe_result"].EVALUATION_FAILED_METRIC, metrics, "a broken program is a scored result, not a failed evaluation")
            self.assertEqual(metrics["combined_score"], 0.0)
            self.assertEqual(metrics["stage"], 1.0, "stage 2 is not run below the threshold")
            self.assertRegex(artifacts["error"], re.compile(reason, re.I))

    def test_unknown_suite_ends_the_run_at_load(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "routing-prefix-hevy"}):
            sys.modules.pop("blis_openevolve_evaluator", None)
            with self.assertRaisesRegex(RuntimeError, 'error: --suite: "routing-prefix-hevy" is neither a built-in suite') as caught:
                self.evaluator()
            self.assertEqual(type(caught.exception).__name__, "BlisSetupError")
            with mock.patch.dict(os.environ, {"BLIS_SETUP_CHECK": "0"}):
                sys.modules.pop("blis_openevolve_evaluator", None)
                ev = self.evaluator(cascade_evaluation=False)
                metrics = ev.evaluate_program(INITIAL.read_text(encoding="utf-8"), "p")
            self.assertEqual(metrics.get(fw["oe_result"].EVALUATION_FAILED_METRIC), 1.0, "0.4 rejects a child whose evaluation raised")
            self.assertIn("neither a built-in suite", ev.get_pending_artifacts("p")["stderr"])
        sys.modules.pop("blis_openevolve_evaluator", None)

    def test_evaluator_args_reach_evaluate(self) -> None:
        admit = "function admit(request, state) {\n  return 'admit';\n}\n"
        ev = self.evaluator(cascade_evaluation=False, evaluator_args={"suite": "admission-bursty-tenants", "control_point": "admission"})
        metrics = ev.evaluate_program(admit, "a")
        self.assertGreater(metrics["combined_score"], 0.0, ev.get_pending_artifacts("a"))
        ev = self.evaluator(cascade_evaluation=False, evaluator_args={"suite_name": "x"})
        metrics = ev.evaluate_program(admit, "b")
        self.assertEqual(metrics.get(fw["oe_result"].EVALUATION_FAILED_METRIC), 1.0)
        self.assertIn("unknown evaluator argument suite_name", ev.get_pending_artifacts("b")["stderr"])

    def test_example_config_uses_only_openevolve_keys_and_names_its_endpoint(self) -> None:
        """OpenEvolve reads the YAML with dacite, which drops a misspelt key without a word: every key must be a field."""
        fields = importlib.import_module("openevolve.config").FIELDS
        text = (OE_DIR / "example" / "config.yaml").read_text(encoding="utf-8")
        section = ""
        in_models = False
        seen: Dict[str, List[str]] = {}
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            indent = len(line) - len(line.lstrip())
            m = re.match(r"^\s*(?:- )?([A-Za-z_]+):", line)
            if indent == 0 and m:
                section, in_models = m.group(1), False
                seen.setdefault("", []).append(section)
            elif indent == 2 and m and section in fields and not line.lstrip().startswith("-"):
                seen.setdefault(section, []).append(m.group(1))
                in_models = section == "llm" and m.group(1) == "models"
            elif in_models and m and indent >= 4:
                seen.setdefault("llm.models", []).append(m.group(1))
        for where, keys in seen.items():
            for key in keys:
                self.assertIn(key, fields[where], "config.yaml: %s.%s is not an OpenEvolve setting" % (where or "(top)", key))
        self.assertIn("api_base", seen["llm"], "the example names its LLM endpoint")
        self.assertRegex(text, r"--api-base")
        self.assertTrue(seen.get("llm.models"))

    def test_results_are_openevolve_evaluation_results(self) -> None:
        shared = sys.modules["blis_openevolve_evaluator"] if "blis_openevolve_evaluator" in sys.modules else None
        if shared is None:
            self.evaluator()
            shared = sys.modules["blis_openevolve_evaluator"]
        self.assertIsInstance(shared.evaluate_stage1(str(INITIAL)), fw["oe_result"].EvaluationResult)


def _records_ok(test: unittest.TestCase, records: List[Dict[str, Any]], budget: int) -> None:
    adapter = fw["adapter"]
    for rec in records:
        test.assertLessEqual(adapter.record_chars(rec), budget)
        feedback = rec["Feedback"]
        for header in re.findall(r"(?m)^\d+\. t=\S+ \| [^\n]+$", feedback):
            test.assertEqual(feedback.count(header), 1, "worst decision listed twice: %s" % header)
        headings = re.findall(r"(?m)^## .*$", feedback)
        test.assertEqual(len(headings), len(set(headings)), "a section repeats: %s" % headings)
        test.assertLessEqual(len(re.findall(r"(?mi)^## Worst Decisions", feedback)), 1)


class GEPAStandInTest(unittest.TestCase):
    """GEPA's adapter protocol and optimize_anything, as GEPA has them now."""

    def setUp(self) -> None:
        patcher = _env()
        patcher.start()
        self.addCleanup(patcher.stop)
        fw["oa"]._client = None

    def test_the_adapter_returns_gepa_evaluation_batches(self) -> None:
        adapter = fw["adapter"].BlisGEPAAdapter()
        batch = adapter.evaluate(["steady@1", "hot@3"], fw["oa"].seed_candidate(), capture_traces=True)
        self.assertIsInstance(batch, fw["gepa"].EvaluationBatch)
        self.assertEqual(batch.num_metric_calls, 2)
        bad = adapter.evaluate(["steady@1"], {"routing": THROWS}, capture_traces=True)
        self.assertEqual(bad.scores, [0.0])

    def test_reflection_records_carry_each_item_once_within_the_budget(self) -> None:
        adapter = fw["adapter"].BlisGEPAAdapter()
        good = adapter.evaluate(["steady@1", "hot@3", "hot@4"], fw["oa"].seed_candidate(), capture_traces=True)
        failed = adapter.evaluate(["steady@2"], {"routing": BROKEN}, capture_traces=True)
        good.trajectories.extend(failed.trajectories)
        good.scores.extend(failed.scores)
        records = adapter.make_reflective_dataset(fw["oa"].seed_candidate(), good, ["routing"])["routing"]
        self.assertEqual(len(records), 4)
        budget = fw["adapter"].REFLECTION_RECORD_CHARS
        _records_ok(self, records, budget)
        self.assertIn("## Worst Decisions", records[0]["Feedback"])
        self.assertIn("syntax", records[3]["Feedback"].lower())
        # A long summary is cut to the budget at a boundary, with a note.
        long = dict(good.trajectories[0], feedback=good.trajectories[0]["feedback"] * 5)
        cut = adapter.make_reflective_dataset({}, fw["gepa"].EvaluationBatch(outputs=[{}], scores=[0.5], trajectories=[long]), ["routing"])["routing"]
        self.assertLessEqual(fw["adapter"].record_chars(cut[0]), budget)
        self.assertIn("record budget", cut[0]["Feedback"])
        # optimize_anything's side_info: the same text, once.
        _score, info = fw["oa"].evaluate(fw["oa"].seed_candidate(), "steady@1")
        self.assertNotIn("worst_decisions", info)
        _records_ok(self, [{"Inputs": {"i": info["Input"]}, "Generated Outputs": info["Output"], "Feedback": info["Feedback"]}], budget)

    def test_gepa_optimize_improves_the_seed_with_the_adapter(self) -> None:
        del fw["gepa"]  # re-imported below from the stand-in on sys.path
        gepa = importlib.import_module("gepa")
        fw["gepa"] = gepa
        prompts = importlib.import_module("gepa._reflect").PROMPTS
        prompts.clear()
        adapter = fw["adapter"].BlisGEPAAdapter()
        result = gepa.optimize(fw["oa"].seed_candidate(), trainset=["steady@1", "hot@3"], valset=["steady@2", "hot@4"], adapter=adapter,
                               reflection_lm=fw["example"].offline_lm, max_metric_calls=8, reflection_minibatch_size=2)
        self.assertGreater(result.best_score, 0.6)
        self.assertIn("cachedPrefixBlocks", result.best_candidate["routing"])
        self.assertTrue(prompts)
        self.assertLess(max(len(p) for p in prompts), 2 * fw["adapter"].REFLECTION_RECORD_CHARS + 4000, "two records and the instructions")
        broken = fw["adapter"].BlisGEPAAdapter(suite="routing-prefix-hevy")
        with self.assertRaisesRegex(RuntimeError, "neither a built-in suite"):
            gepa.optimize({"routing": THROWS}, trainset=["steady@1"], adapter=broken, reflection_lm=fw["example"].offline_lm, max_metric_calls=4)

    def test_the_optimize_anything_example_runs_offline(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(FAKES), PYTHONDONTWRITEBYTECODE="1")
        with tempfile.TemporaryDirectory(prefix="blis-gepa-example-") as out:
            res = subprocess.run([sys.executable, str(GEPA_DIR / "example_optimize_anything.py"), "--offline", "--max-evals", "8", "--output-dir", out],
                                 cwd=str(REPO), env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(res.returncode, 0, res.stderr[-3000:])
        summary = json.loads(res.stdout.splitlines()[0])
        self.assertGreater(summary["best_score"], summary["seed_score"] + 0.3)
        self.assertIn("function route", res.stdout)

    def test_the_docs_example_runs(self) -> None:
        """docs/evaluate.md's optimize_anything example, as printed there, with the offline reflection model."""
        text = (REPO / "docs" / "evaluate.md").read_text(encoding="utf-8")
        blocks = [b for b in re.findall(r"(?ms)^[ ]*```python\n(.*?)^[ ]*```[ ]*$", text) if "optimize_anything(" in b]
        self.assertEqual(len(blocks), 1)
        code = textwrap.dedent(blocks[0])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FAKES), str(GEPA_DIR)]), PYTHONDONTWRITEBYTECODE="1")
        with tempfile.TemporaryDirectory(prefix="blis-gepa-doc-") as cwd:
            res = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(res.returncode, 0, res.stderr[-3000:])
        self.assertGreater(float(res.stdout.split()[0]), 0.6, res.stdout[:500])

    def test_starting_points_leave_room_to_improve(self) -> None:
        """The OpenEvolve initial program and the GEPA seed score clearly below the suite's known-good policy."""
        seed, _ = fw["oa"].evaluate(fw["oa"].seed_candidate())
        good, _ = fw["oa"].evaluate(KNOWN_GOOD)
        self.assertEqual(fw["oa"].seed_candidate()["routing"], INITIAL.read_text(encoding="utf-8"))
        self.assertLess(seed, good - 0.3, "seed %.3f vs known-good %.3f" % (seed, good))


if __name__ == "__main__":
    unittest.main()
