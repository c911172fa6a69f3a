"""The OpenEvolve evaluator (integrations/openevolve/evaluator.py, OpenEvolve 0.3.2 contract) against the real CLI.

Runs ``node bin/blis.js`` from the repository root (build first: ``npm run build``), or ``BLIS_CMD`` when set.
Each evaluation is a stage-1 smoke run (about a second) unless the test is about stage 2.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
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


def _metrics(result: Any) -> Dict[str, Any]:
    """The metrics of an OpenEvolve EvaluationResult or of a plain dict."""
    return result if isinstance(result, dict) else result.metrics


class OpenEvolveEvaluatorTest(unittest.TestCase):
    """evaluate / evaluate_stage1 / evaluate_stage2 return OpenEvolve's documented shapes and never raise."""

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
        self.assertIn("worst_decisions", artifacts)
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

    def test_missing_file_never_raises(self) -> None:
        metrics, artifacts = ev.evaluate_program(str(Path(self.tmp.name) / "absent.js"), 1)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertIn("not found", artifacts["error"])

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

    def test_bad_suite_is_a_process_failure_with_stderr(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_SUITE": "no-such-suite"}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        self.assertIn("exited with code 2", artifacts["error"])
        self.assertIn("no-such-suite", artifacts["stderr"])

    def _stub(self, body: str) -> str:
        script = Path(self.tmp.name) / "stub_blis.py"
        script.write_text(body, encoding="utf-8")
        return "%s %s" % (shlex.quote(sys.executable), shlex.quote(str(script)))

    def test_timeout_is_enforced_and_reported(self) -> None:
        cmd = self._stub("import sys, time\nsys.stderr.write('starting\\n'); sys.stderr.flush()\ntime.sleep(60)\n")
        started = time.monotonic()
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd, "BLIS_TIMEOUT_S": "1"}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertFloatMetrics(metrics)
        self.assertIn("timeout", artifacts["error"])

    def test_crash_reports_the_stderr_tail(self) -> None:
        cmd = self._stub("import sys\nsys.stderr.write('x' * 10000 + '\\nfatal: out of cheese\\n')\nsys.exit(3)\n")
        with mock.patch.dict(os.environ, {"BLIS_CMD": cmd}):
            result = ev.evaluate_stage2(str(INITIAL))
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 2)
        self.assertEqual(_metrics(result)["combined_score"], 0.0)
        self.assertIn("exited with code 3", artifacts["error"])
        self.assertIn("out of cheese", artifacts["stderr"])
        self.assertLessEqual(len(artifacts["stderr"]), ev.STDERR_TAIL_CHARS + 10)

    def test_garbage_output_and_unstartable_command(self) -> None:
        with mock.patch.dict(os.environ, {"BLIS_CMD": self._stub("print('not json')\n")}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertIn("no JSON", artifacts["error"])
        with mock.patch.dict(os.environ, {"BLIS_CMD": "/nonexistent/blis-binary"}):
            metrics, artifacts = ev.evaluate_program(str(INITIAL), 1)
        self.assertEqual(metrics["combined_score"], 0.0)
        self.assertIn("cannot start", artifacts["error"])


class OpenEvolveExampleTest(unittest.TestCase):
    """The example folder works unchanged as OpenEvolve's evaluation file and config."""

    def test_example_evaluator_reexports_the_shared_one(self) -> None:
        example = _load("evaluation_module_under_test", OE_DIR / "example" / "evaluator.py")
        for name in ("evaluate", "evaluate_stage1", "evaluate_stage2"):
            self.assertTrue(callable(getattr(example, name)))
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
        self.assertRegex(text, r"(?m)^\s+cascade_thresholds:\s*\[0\.5,\s*0\.75,\s*0\.9\]")
        block = re.search(r"(?m)^\s+feature_dimensions:\s*\n((?:\s+-\s+.*\n)+)", text)
        self.assertIsNotNone(block)
        assert block is not None
        dims = re.findall(r'-\s+"?([A-Za-z_]+)"?', block.group(1))
        self.assertTrue(dims)
        metrics, _ = ev.evaluate_program(str(INITIAL), 1)
        for dim in dims:
            self.assertIn(dim, metrics, "feature dimension %s is not a metric the evaluator returns" % dim)


if __name__ == "__main__":
    unittest.main()
