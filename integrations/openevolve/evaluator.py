"""OpenEvolve evaluator for blis-ts policies (written against OpenEvolve 0.3.2's evaluator contract).

OpenEvolve loads this file and calls ``evaluate(program_path)`` -- or, with ``evaluator.cascade_evaluation``
on, ``evaluate_stage1(program_path)`` and then ``evaluate_stage2(program_path)`` once stage 1's
``combined_score`` clears the first cascade threshold. The program is a JavaScript file (``file_suffix: .js``)
holding one control point's code between ``EVOLVE-BLOCK-START`` / ``EVOLVE-BLOCK-END`` comment markers, e.g.
``function route(request, state) {...}`` for routing (docs/policies.md).

Each call runs the blis CLI once::

    node <repo>/bin/blis.js evaluate --candidate PROGRAM.js --suite SUITE --stage N --control-point POINT

and turns its JSON document (``EvaluationResult``, src/evaluate/types.ts) into OpenEvolve's
``EvaluationResult(metrics, artifacts)`` (a plain dict of metrics when OpenEvolve is not importable):

- metrics (floats only -- OpenEvolve 0.3 drops booleans and non-numbers): ``combined_score``; every MAP-Elites
  feature under its own name (``cache_hit_rate``, ``load_imbalance``, ...; always present, 0.0 when the run
  failed, because OpenEvolve raises on a configured feature dimension missing from the metrics); each
  normalised objective score as ``score_<objective>`` and each raw objective as ``raw_<objective>``; ``stage``
  and ``runs`` (scenario runs simulated).
- artifacts (text, shown to the LLM in the next prompt): ``summary`` (the reflection summary),
  ``worst_decisions``, ``error`` (``CODE: message``) when the candidate failed, ``stderr`` (its tail) when the
  process failed.

A failed, crashed or timed-out evaluation returns ``combined_score: 0.0`` with the reason in the artifacts;
these functions never raise.

Environment:

- ``BLIS_CMD``: the command prefix running blis (default ``node <repo>/bin/blis.js``, the repository holding
  this file; e.g. ``npx blis``);
- ``BLIS_SUITE``: a built-in suite name or a suite file (default ``routing-prefix-heavy``);
- ``BLIS_CONTROL_POINT``: ``admission | priority | routing | scheduler | autoscale`` (default ``routing``);
- ``BLIS_TIMEOUT_S``: wall-clock limit per CLI call, enforced here (default 120).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = "routing-prefix-heavy"
DEFAULT_CONTROL_POINT = "routing"
DEFAULT_TIMEOUT_S = 120.0
STDERR_TAIL_CHARS = 4000
#: The features blis-ts reports (src/evaluate/evaluate.ts); always present in the metrics.
KNOWN_FEATURES = (
    "cache_hit_rate",
    "admission_rate",
    "load_imbalance",
    "replicas_used",
    "gpu_hours",
    "preemptions_per_request",
)

try:  # OpenEvolve 0.3.x
    from openevolve.evaluation_result import EvaluationResult as _OEResult  # type: ignore
except Exception:  # noqa: BLE001 -- not installed (or broken): fall back to a plain dict of metrics
    _OEResult = None

Metrics = Dict[str, float]
Artifacts = Dict[str, str]


def blis_command() -> List[str]:
    """The command prefix running blis: ``BLIS_CMD`` split like a shell would, else ``node <repo>/bin/blis.js``."""
    override = os.environ.get("BLIS_CMD", "").strip()
    if override:
        return shlex.split(override)
    return ["node", str(REPO_ROOT / "bin" / "blis.js")]


def _timeout_s() -> float:
    try:
        value = float(os.environ.get("BLIS_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        return value if value > 0 and math.isfinite(value) else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def _tail(text: str, n: int = STDERR_TAIL_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= n else "[...]\n" + text[-n:]


def _kill_group(proc: "subprocess.Popen[str]") -> None:
    """Kills the process and its children (a wrapper such as npx starts node as a child)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def run_cli(args: List[str], timeout_s: float, cwd: Optional[Path] = None) -> Tuple[Optional[int], str, str, bool]:
    """Runs ``blis ARGS`` with a wall-clock limit; returns (exit code or None, stdout, stderr, timed_out)."""
    cmd = blis_command() + args
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=str(cwd or REPO_ROOT),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=(os.name == "posix"),
        )
    except (OSError, ValueError) as e:
        return None, "", "cannot start %s: %s" % (" ".join(cmd), e), False
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, ValueError):
            out, err = "", ""
        return None, out or "", err or "", True


def _num(value: Any) -> Optional[float]:
    """A finite float, or None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _base_metrics(stage: int) -> Metrics:
    metrics: Metrics = {"combined_score": 0.0, "stage": float(stage), "runs": 0.0}
    for name in KNOWN_FEATURES:
        metrics[name] = 0.0
    return metrics


def metrics_from_result(doc: Dict[str, Any], stage: int) -> Metrics:
    """OpenEvolve metrics (floats only) from a blis ``EvaluationResult`` document."""
    metrics = _base_metrics(stage)
    score = _num(doc.get("combined_score"))
    metrics["combined_score"] = 0.0 if score is None or doc.get("error") else min(1.0, max(0.0, score))
    for name, value in (doc.get("features") or {}).items():
        v = _num(value)
        if v is not None:
            metrics[str(name)] = v
    for prefix, key in (("score_", "scores"), ("raw_", "objectives")):
        for name, value in (doc.get(key) or {}).items():
            v = _num(value)
            if v is not None:
                metrics[prefix + str(name)] = v
    scenarios = doc.get("scenarios")
    metrics["runs"] = float(len(scenarios)) if isinstance(scenarios, list) else 0.0
    return metrics


def _result(metrics: Metrics, artifacts: Artifacts) -> Any:
    if _OEResult is not None:
        return _OEResult(metrics=metrics, artifacts=artifacts)
    return metrics


def _failure(stage: int, reason: str, extra: Optional[Artifacts] = None) -> Tuple[Metrics, Artifacts]:
    artifacts: Artifacts = {"error": reason, "summary": "The evaluation failed; the candidate was scored 0.\n\n" + reason}
    artifacts.update(extra or {})
    return _base_metrics(stage), artifacts


def evaluate_program(program_path: Union[str, os.PathLike], stage: int) -> Tuple[Metrics, Artifacts]:
    """Evaluates a program at ``stage`` (1: the smoke scenario; 2: the full suite); returns (metrics, artifacts)."""
    suite = os.environ.get("BLIS_SUITE", "").strip() or DEFAULT_SUITE
    point = os.environ.get("BLIS_CONTROL_POINT", "").strip() or DEFAULT_CONTROL_POINT
    timeout_s = _timeout_s()
    tmpdir: Optional[str] = None
    try:
        path = Path(program_path).resolve()
        if not path.is_file():
            return _failure(stage, "program file not found: %s" % path)
        if path.suffix not in (".js", ".mjs", ".cjs"):
            # blis reads a .js file as code; anything else would be taken for a bundle.
            tmpdir = tempfile.mkdtemp(prefix="blis-oe-")
            copy = Path(tmpdir) / (path.stem + ".js")
            shutil.copyfile(str(path), str(copy))
            path = copy
        args = ["evaluate", "--candidate", str(path), "--suite", suite, "--stage", str(stage), "--control-point", point]
        code, out, err, timed_out = run_cli(args, timeout_s)
        if timed_out:
            return _failure(stage, "timeout: the evaluation took longer than %gs (BLIS_TIMEOUT_S)" % timeout_s, {"stderr": _tail(err)} if err.strip() else None)
        if code is None:
            return _failure(stage, err.strip() or "blis could not be started")
        doc: Any = None
        try:
            doc = json.loads(out) if out.strip() else None
        except ValueError:
            doc = None
        if code != 0 or not isinstance(doc, dict):
            reason = "blis exited with code %s" % code if code != 0 else "blis printed no JSON result"
            first = next((line for line in err.strip().splitlines() if line.strip()), "")
            return _failure(stage, reason + (": " + first if first else ""), {"stderr": _tail(err or out)})
        metrics = metrics_from_result(doc, stage)
        artifacts: Artifacts = {}
        raw_artifacts = doc.get("artifacts") or {}
        for name in ("summary", "worst_decisions"):
            text = raw_artifacts.get(name)
            artifacts[name] = text if isinstance(text, str) else ""
        error = doc.get("error")
        if isinstance(error, dict):
            artifacts["error"] = "%s: %s" % (error.get("code", "ERROR"), error.get("message", ""))
        if err.strip():
            artifacts["stderr"] = _tail(err)
        return metrics, artifacts
    except Exception as e:  # noqa: BLE001 -- an evaluator must never raise
        return _failure(stage, "evaluator error: %s: %s" % (type(e).__name__, e))
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


def evaluate_stage1(program_path: str) -> Any:
    """Cascade stage 1: the suite's short smoke scenario (rejects broken or hopeless programs fast)."""
    return _result(*evaluate_program(program_path, 1))


def evaluate_stage2(program_path: str) -> Any:
    """Cascade stage 2: the full suite (every scenario x seed)."""
    return _result(*evaluate_program(program_path, 2))


def evaluate(program_path: str) -> Any:
    """Direct evaluation (``cascade_evaluation: false``): the full suite, as stage 2."""
    return _result(*evaluate_program(program_path, 2))
