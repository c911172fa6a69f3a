"""The OpenEvolve evaluator (integrations/openevolve/evaluator.py, OpenEvolve 0.3.2 / 0.4 contracts) against real blis.

Runs ``node bin/blis.js`` from the repository root (build first: ``npm run build``), or ``BLIS_CMD`` when set:
through the warm evaluation server by default; the tests with stand-in commands (crashes, garbage, a slow blis)
exercise the one-process-per-evaluation path (``BLIS_WARM=0``), test_warm.py the server's own failures.
Each evaluation is a stage-1 smoke run (about a second) unless the test is about stage 2. A failed candidate is
a scored 0 without latency figures; a set-up error (bad suite, control point, file, an unbuilt checkout, a crash)
raises BlisSetupError, also when the module is imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Dict, Tuple
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
OE_DIR = REPO / "integrations" / "openevolve"
INITIAL = OE_DIR / "example" / "initial_program.js"


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


ev = _load("blis_oe_evaluator_under_test", OE_DIR / "evaluator.py")

#: Raw and normalised objective metrics: a failed candidate has none of them (no 0 ms latencies).
LATENCY_LIKE = re.compile(r"^(raw_|score_)|(ttft|e2e|itl|tpot)", re.I)


def unbuilt_checkout(parent: str) -> str:
    """A copy of the launcher (bin/ and package.json) without dist/; returns BLIS_CMD running it."""
    root = Path(parent) / "unbuilt"
    (root / "bin").mkdir(parents=True)
    for name in ("blis.js", "load-cli.js", "package.json"):
        shutil.copyfile(str(REPO / "bin" / name), str(root / "bin" / name))
    shutil.copyfile(str(REPO / "package.json"), str(root / "package.json"))
    return "node %s" % shlex.quote(str(root / "bin" / "blis.js"))


def _metrics(result: Any) -> Dict[str, Any]:
    """The metrics of an OpenEvolve EvaluationResult or of a plain dict."""
    return result if isinstance(result, dict) else result.metrics


class OpenEvolveEvaluatorTest(unittest.TestCase):
    """evaluate / evaluate_stage1 / evaluate_stage2 return OpenEvolve's documented shapes; set-up errors raise."""

    tmp: tempfile.TemporaryDirectory

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="blis-oe-test-")
        self.addCleanup(self.tmp.cleanup)
        self.env = mock.patch.dict(os.environ, {"BLIS_TIMEOUT_S": "120"})
        self.env.start()
        self.addCleanup(self.env.stop)
        for key in ("BLIS_SUITE", "BLIS_CONTROL_POINT"):
            os.environ.pop(key, None)

    def program(self, name: str, code: str) -> str:
        path = Path(self.tmp.name) / name
        path.write_text(code, encoding="utf-8")
        return str(path)

    def assertFloatMetrics(self, metrics: Dict[str, Any]) -> None:  # noqa: N802 -- unittest style
        for name, value in metrics.items():
            self.assertIsInstance(value, float, "metric %s = %r is not a float" % (name, value))
            self.assertNotIsInstance(value, bool, "metric %s is a boolean" % name)
        for feature in ev.KNOWN_FEATURES:
            self.assertIn(feature, metrics)

    def test_stage1_good_program(self) -> None:
        result = ev.evaluate_stage1(str(INITIAL))
        if ev._OEResult is not None:
            self.assertIsInstance(result, ev._OEResult)
        else:
            self.assertIsInstance(result, dict)
        metrics = _metrics(result)
        self.assertFloatMetrics(metrics)
        self.assertGreater(metrics["combined_score"], 0.0)
        self.assertLessEqual(metrics["combined_score"], 1.0)
        self.assertEqual(metrics["stage"], 1.0)
        self.assertEqual(metrics["runs"], 1.0)
        self.assertTrue(any(k.startswith("score_") for k in metrics))
        self.assertTrue(any(k.startswith("raw_") for k in metrics))
        _, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertIn("summary", artifacts)
        self.assertIn("## Worst Decisions", artifacts["summary"])
        self.assertNotIn("worst_decisions", artifacts, "the summary has them: not twice")
        self.assertTrue(artifacts["summary"].strip())
        self.assertNotIn("error", artifacts)

    def test_stage2_and_direct_evaluation(self) -> None:
        stage2 = _metrics(ev.evaluate_stage2(str(INITIAL)))
        self.assertFloatMetrics(stage2)
        self.assertGreater(stage2["combined_score"], 0.0)
        self.assertEqual(stage2["stage"], 2.0)
        self.assertGreater(stage2["runs"], 1.0)
        direct = _metrics(ev.evaluate(str(INITIAL)))
        self.assertEqual(direct, stage2, "evaluate() is the full suite and deterministic")

    def test_stage2_does_not_simulate_stage1_again(self) -> None:
        """The warm server remembers stage 1's runs: a cascade simulates each run once."""
        ev.evaluate_stage1(str(INITIAL))
        ev.evaluate_stage2(str(INITIAL))  # the suite's baseline is now in the server's memory for both stages
        server = ev._warm_server(ev._suite(), ev._control_point())

        def runs() -> Dict[str, int]:
            answer = server.request("/status", None, 30)
            self.assertEqual(answer.status, 200)
            return answer.doc["runs"]

        path = self.program("fresh.js", INITIAL.read_text(encoding="utf-8") + "\n// fresh %d\n" % time.time_ns())
        before = runs()
        ev.evaluate_stage1(path)
        after1 = runs()
        ev.evaluate_stage2(path)
        after2 = runs()
        self.assertEqual(after1["simulated"] - before["simulated"], 1, "stage 1: the smoke run")
        self.assertEqual(after2["simulated"] - after1["simulated"], 4, "stage 2: the full suite's four runs only")
        self.assertEqual(after2["remembered"] - after1["remembered"], 1, "stage 1's run, remembered")

    def test_syntax_error_scores_zero_with_the_reason(self) -> None:
        path = self.program("broken.js", "// EVOLVE-BLOCK-START\nfunction route(request, state) {\n  return state.instances[0].id +;\n}\n// EVOLVE-BLOCK-END\n")
        result = ev.evaluate_stage1(path)
        metrics = _metrics(result)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        metrics, artifacts = ev.evaluate_program(path, 1)
        self.assertIn("error", artifacts)
        self.assertRegex(artifacts["error"], re.compile("syntax", re.I))
        self.assertIn("summary", artifacts)

    def test_infinite_loop_scores_zero_with_the_reason(self) -> None:
        path = self.program("loop.js", "function route(request, state) {\n  while (true) {}\n}\n")
        metrics, artifacts = ev.evaluate_program(path, 1)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        self.assertRegex(artifacts["error"], re.compile("budget", re.I))

    def test_throwing_candidate_scores_zero_without_latency_figures(self) -> None:
        path = self.program("throws.js", "function route(request, state) {\n  throw new Error('no route today');\n}\n")
        for stage in (1, 2):
            metrics, artifacts = ev.evaluate_program(path, stage)
            self.assertEqual(metrics["combined_score"], 0.0)
            self.assertFloatMetrics(metrics)
            self.assertEqual([k for k in metrics if LATENCY_LIKE.search(k)], [], "a failed candidate reports no latency figures")
            self.assertIn("POLICY_RUNTIME", artifacts["error"])
            self.assertIn("no route today", artifacts["error"])
            self.assertIn("no route today", artifacts["summary"])
        result = _metrics(ev.evaluate(path))
        self.assertEqual(result["combined_score"], 0.0)
        self.assertEqual([k for k in result if LATENCY_LIKE.search(k)], [])

    def test_missing_file_raises(self) -> None:
        absent = str(Path(self.tmp.name) / "absent.js")
        with self.assertRaisesRegex(ev.BlisSetupError, "not found"):
            ev.evaluate_program(absent, 1)
        with self.assertRaises(ev.BlisSetupError):
            ev.evaluate_stage1(absent)

    def test_non_js_suffix_is_read_as_code(self) -> None:
        path = self.program("program.txt", INITIAL.read_text(encoding="utf-8"))
        metrics, artifacts = ev.evaluate_program(path, 1)
        self.assertNotIn("error", artifacts)
        self.assertGreater(metrics["combined_score"], 0.0)

    def test_control_point_and_suite_from_the_environment(self) -> None:
        path = self.program("admit.js", "function admit(request, state) {\n  return request.inputTokens > 5000 ? 'reject' : 'admit';\n}\n")
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "admission-bursty-tenants", "BLIS_CONTROL_POINT": "admission"}):
            metrics, artifacts = ev.evaluate_program(path, 1)
        self.assertNotIn("error", artifacts)
        self.assertGreater(metrics["combined_score"], 0.0)

    def test_unknown_suite_raises_with_the_cli_message(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "no-such-suite"}):
            for call in (lambda: ev.evaluate_program(str(INITIAL), 1), lambda: ev.evaluate_stage1(str(INITIAL)), lambda: ev.evaluate(str(INITIAL))):
                with self.assertRaises(ev.BlisSetupError) as caught:
                    call()
                message = str(caught.exception)
                self.assertIn('error: --suite: "no-such-suite" is neither a built-in suite', message)
                self.assertIn("exit 2", message)
            self.assertIsInstance(caught.exception, RuntimeError)

    def test_wrong_control_point_raises(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_CONTROL_POINT": "routng"}):
            with self.assertRaisesRegex(ev.BlisSetupError, r'error: --control-point must be one of .*got "routng"'):
                ev.evaluate_stage2(str(INITIAL))

    def test_unbuilt_checkout_raises_with_the_build_hint(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_CMD": unbuilt_checkout(self.tmp.name)}):
            with self.assertRaises(ev.BlisSetupError) as caught:
                ev.evaluate_program(str(INITIAL), 1)
        self.assertIn("exit 2", str(caught.exception))
        self.assertIn("error: blis-ts is not built: run npm run build (or npm ci, then npm run build) in ", str(caught.exception))

    def test_result_documents_with_missing_partial_or_new_keys(self) -> None:
        good = {
            "combined_score": 0.75,
            "combined_score_se": 0.02,
            "objectives": {"ttft_p99_ms": 80.5},
            "scores": {"ttft_p99_ms": 1.0, "slo_attainment": 0.5},
            "features": {"cache_hit_rate": 0.4},
            "baseline": {"combined_score": 0.6, "difference": {"mean": 0.15, "se": 0.01, "ci95": [0.12, 0.18], "runs": 2}},
            "constraints": [{"name": "x", "ok": True}],
            "scenarios": [{}, {}],
            "future_key": {"nested": [1, 2]},
        }
        metrics = ev.metrics_from_result(good, 2)
        self.assertFloatMetrics(metrics)
        self.assertEqual(metrics["combined_score"], 0.75)
        self.assertEqual(metrics["raw_ttft_p99_ms"], 80.5)
        self.assertEqual(metrics["score_slo_attainment"], 0.5)
        self.assertNotIn("raw_slo_attainment", metrics)
        self.assertEqual(metrics["cache_hit_rate"], 0.4)
        self.assertEqual(metrics["load_imbalance"], 0.0)
        self.assertEqual(metrics["runs"], 2.0)
        self.assertEqual(metrics["combined_score_se"], 0.02)
        self.assertEqual(metrics["baseline_score"], 0.6)
        self.assertEqual(metrics["baseline_difference"], 0.15)
        self.assertEqual(metrics["baseline_difference_ci_low"], 0.12)
        self.assertFalse(any("constraint" in k or "future" in k for k in metrics))
        partial = ev.metrics_from_result({**good, "baseline": {"combined_score": 0.6}, "combined_score_se": None}, 2)
        self.assertNotIn("baseline_difference", partial)
        self.assertNotIn("combined_score_se", partial)
        failed_docs = [
            {"combined_score": 0, "error": {"code": "POLICY_RUNTIME", "message": "boom"}},
            {"combined_score": 0, "objectives": {}, "scores": {}, "error": {"code": "POLICY_RUNTIME", "message": "boom"}},
            {"combined_score": 0.3, "objectives": {"ttft_p99_ms": 0, "e2e_mean_ms": 0}, "scores": {"ttft_p99_ms": 0}, "features": None, "error": {"code": "EVAL_TIMEOUT", "message": "slow"}},
        ]
        for doc in failed_docs:
            metrics = ev.metrics_from_result(doc, 1)
            self.assertFloatMetrics(metrics)
            self.assertEqual(metrics["combined_score"], 0.0)
            self.assertEqual([k for k in metrics if LATENCY_LIKE.search(k)], [])
        for odd in ({"objectives": None, "scores": [], "features": "x", "combined_score": "high"}, {}):
            metrics = ev.metrics_from_result(odd, 1)
            self.assertFloatMetrics(metrics)
            self.assertEqual(metrics["combined_score"], 0.0)

    def test_failed_document_through_the_cli_contract(self) -> None:
        doc = {"combined_score": 0, "objectives": {}, "scenarios": [], "artifacts": {"summary": "", "worst_decisions": ""}, "error": {"code": "SANDBOX_THREW", "message": "the policy threw"}, "baseline": {}}
        cmd = self._stub("import sys\nsys.stdout.write(%r)\n" % json.dumps(doc))
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_WARM": "0"}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 2)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        self.assertEqual([k for k in metrics if LATENCY_LIKE.search(k)], [])
        self.assertEqual(artifacts["error"], "SANDBOX_THREW: the policy threw")
        self.assertIn("the policy threw", artifacts["summary"])

    def _stub(self, body: str) -> str:
        script = Path(self.tmp.name) / "stub_blis.py"
        script.write_text(body, encoding="utf-8")
        return "%s %s" % (shlex.quote(sys.executable), shlex.quote(str(script)))

    def test_timeout_is_enforced_and_reported(self) -> None:
        cmd = self._stub("import sys, time\nsys.stderr.write('starting\\n'); sys.stderr.flush()\ntime.sleep(60)\n")
        started = time.monotonic()
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_TIMEOUT_S": "1", "BLIS_WARM": "0"}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        self.assertIn("timeout", artifacts["error"])

    def test_crash_raises_with_the_stderr_tail(self) -> None:
        cmd = self._stub("import sys\nsys.stderr.write('x' * 10000 + '\\nfatal: out of cheese\\n')\nsys.exit(3)\n")
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_WARM": "0"}):
            with self.assertRaises(ev.BlisSetupError) as caught:
                ev.evaluate_stage2(str(INITIAL))
        message = str(caught.exception)
        self.assertTrue(message.startswith("blis crashed (exit 3): fatal: out of cheese"), message[:200])
        self.assertLess(len(message), 3000)

    def test_internal_error_line_is_the_message(self) -> None:
        cmd = self._stub("import sys\nsys.stderr.write('internal: evaluate: TypeError: x is undefined (a bug in blis)\\n')\nsys.exit(70)\n")
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_WARM": "0"}):
            with self.assertRaisesRegex(ev.BlisSetupError, r"^blis crashed \(exit 70\): internal: evaluate: TypeError"):
                ev.evaluate_program(str(INITIAL), 1)

    def test_signal_raises(self) -> None:
        if os.name != "posix":
            self.skipTest("signals are POSIX")
        cmd = self._stub("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_WARM": "0"}):
            with self.assertRaisesRegex(ev.BlisSetupError, "killed by SIGKILL"):
                ev.evaluate_program(str(INITIAL), 1)

    def test_garbage_output_and_unstartable_command_raise(self) -> None:
        for body in ("print('not json')\n", "print('[1, 2]')\n", ""):
            with mock.patch.dict(os.environ, {"BLIS_CMD": self._stub(body), "BLIS_WARM": "0"}):
                with self.assertRaisesRegex(ev.BlisSetupError, "no JSON"):
                    ev.evaluate_program(str(INITIAL), 1)
        with mock.patch.dict(os.environ, {"BLIS_CMD": "/nonexistent/blis-binary"}):
            with self.assertRaisesRegex(ev.BlisSetupError, "could not be started: cannot start /nonexistent/blis-binary"):
                ev.evaluate_program(str(INITIAL), 1)


class OpenEvolveSetupCheckTest(unittest.TestCase):
    """Importing the evaluator checks the set-up once: OpenEvolve imports it before the search and stops if that raises."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="blis-oe-check-test-")
        self.addCleanup(self.tmp.cleanup)
        env = {k: v for k, v in os.environ.items() if k not in ("BLIS_SUITE", "BLIS_CONTROL_POINT", "BLIS_SETUP_CHECK")}
        env["BLIS_TIMEOUT_S"] = "120"
        patcher = mock.patch.dict(os.environ, env, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.count = 0

    def load(self) -> Any:
        self.count += 1
        return _load("blis_oe_setup_check_%d" % self.count, OE_DIR / "evaluator.py")

    def test_import_raises_for_a_bad_suite_control_point_or_build(self) -> None:
        cases = [
            ({"BLIS_SUITE": "routing-prefix-hevy"}, 'error: --suite: "routing-prefix-hevy" is neither a built-in suite'),
            ({"BLIS_CONTROL_POINT": "routng"}, 'error: --control-point must be one of'),
            ({"BLIS_SUITE": str(Path(self.tmp.name) / "missing-suite.yaml")}, "missing-suite.yaml"),
            ({"BLIS_CMD": unbuilt_checkout(self.tmp.name)}, "error: blis-ts is not built: run npm run build"),
            ({"BLIS_CMD": "/nonexistent/blis-binary"}, "could not be started"),
        ]
        for env, message in cases:
            with mock.patch.dict(os.environ, env):
                with self.assertRaises(RuntimeError) as caught:
                    self.load()
            self.assertEqual(type(caught.exception).__name__, "BlisSetupError")
            self.assertIn(message, str(caught.exception))

    def test_import_with_a_good_set_up_and_the_opt_out(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "admission-bursty-tenants", "BLIS_CONTROL_POINT": "admission"}):
            self.load()
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "no-such-suite", "BLIS_SETUP_CHECK": "0"}):
            module = self.load()
            with self.assertRaises(module.BlisSetupError):
                module.evaluate_stage1(str(INITIAL))

    def test_each_set_up_is_checked_once_per_process(self) -> None:
        """OpenEvolve executes the evaluation file again for every cascade evaluation: the check is not repeated."""
        calls = Path(self.tmp.name) / "calls"
        script = Path(self.tmp.name) / "counting_blis.py"
        doc = {"combined_score": 0, "objectives": {}, "error": {"code": "POLICY_CODE", "message": "syntax"}}
        script.write_text("import sys\nopen(%r, 'a').write('x')\nsys.stdout.write(%r)\n" % (str(calls), json.dumps(doc)), encoding="utf-8")
        with mock.patch.dict(os.environ, {"BLIS_CMD": "%s %s" % (shlex.quote(sys.executable), shlex.quote(str(script))), "BLIS_WARM": "0"}):
            for _ in range(3):
                self.load()
        self.assertEqual(calls.read_text(), "x")


class OpenEvolveExampleTest(unittest.TestCase):
    """The example folder works unchanged as OpenEvolve's evaluation file and config."""

    def test_example_evaluator_reexports_the_shared_one(self) -> None:
        example = _load("evaluation_module_under_test", OE_DIR / "example" / "evaluator.py")
        for name in ("evaluate", "evaluate_stage1", "evaluate_stage2", "check_setup"):
            self.assertTrue(callable(getattr(example, name)))
        self.assertTrue(issubclass(example.BlisSetupError, RuntimeError))
        metrics = _metrics(example.evaluate_stage1(str(INITIAL)))
        self.assertGreater(metrics["combined_score"], 0.0)

    def test_initial_program_has_evolve_markers(self) -> None:
        text = INITIAL.read_text(encoding="utf-8")
        self.assertLess(text.index("EVOLVE-BLOCK-START"), text.index("function route("))
        self.assertLess(text.index("function route("), text.index("EVOLVE-BLOCK-END"))

    def test_config_names_returned_features_and_cascade(self) -> None:
        text = (OE_DIR / "example" / "config.yaml").read_text(encoding="utf-8")
        self.assertRegex(text, r'(?m)^language:\s*"?javascript"?')
        self.assertRegex(text, r'(?m)^file_suffix:\s*"?\.js"?')
        self.assertRegex(text, r"(?m)^\s+cascade_evaluation:\s*true")
        m = re.search(r"(?m)^\s+cascade_thresholds:\s*\[([0-9., ]+)\]", text)
        self.assertIsNotNone(m)
        assert m is not None
        first = float(m.group(1).split(",")[0])
        self.assertGreater(first, 0.0)
        block = re.search(r"(?m)^\s+feature_dimensions:\s*\n((?:\s+-\s+.*\n)+)", text)
        self.assertIsNotNone(block)
        assert block is not None
        dims = re.findall(r'-\s+"?([A-Za-z_]+)"?', block.group(1))
        self.assertTrue(dims)
        metrics, _ = ev.evaluate_program(str(INITIAL), 1)
        # The starting program reaches the full suite (stage 1 at or above the first threshold).
        self.assertGreaterEqual(metrics["combined_score"], first)
        for dim in dims:
            self.assertIn(dim, metrics, "feature dimension %s is not a metric the evaluator returns" % dim)


if __name__ == "__main__":
    unittest.main()
