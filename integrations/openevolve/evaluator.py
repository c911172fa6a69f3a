"""OpenEvolve evaluator for blis-ts policies (OpenEvolve 0.4.x's evaluator contract; 0.3.2's is the same subset).

OpenEvolve loads this file and calls ``evaluate(program_path)`` -- or, with ``evaluator.cascade_evaluation``
on, ``evaluate_stage1(program_path)`` and then ``evaluate_stage2(program_path)`` once stage 1's
``combined_score`` clears the first cascade threshold (it merges the two stages' metrics, stage 2's winning).
OpenEvolve 0.4.1 passes ``--evaluator-args`` as keyword arguments: ``suite``, ``control_point`` and
``timeout_s`` replace the environment's; another name raises ``BlisSetupError`` naming the three. The program is
a JavaScript file (``file_suffix: .js``) holding one control point's code between ``EVOLVE-BLOCK-START`` /
``EVOLVE-BLOCK-END`` comment markers, e.g. ``function route(request, state) {...}`` for routing
(docs/policies.md).

Each call is one request to a warm ``blis evaluate --serve`` (integrations/blis_warm.py: started once per
Python process and set-up, restarted when it died, stopped when the process ends): ``POST /evaluate
{"candidate": {POINT: code}, "stage": N}``. The server remembers the runs it simulated, so stage 2 does not
simulate stage 1 again. With ``BLIS_WARM=0`` each call runs the CLI instead::

    node <repo>/bin/blis.js evaluate --candidate PROGRAM.js --suite SUITE --stage N --control-point POINT

Either way the result (``EvaluationResult``, src/evaluate/types.ts) becomes OpenEvolve's
``EvaluationResult(metrics, artifacts)`` (a plain dict of metrics when OpenEvolve is not importable):

- metrics (floats only -- OpenEvolve drops booleans and non-numbers): ``combined_score``; every MAP-Elites
  feature under its own name (``cache_hit_rate``, ``load_imbalance``, ...; always present, 0.0 when the
  candidate failed, because OpenEvolve raises on a configured feature dimension missing from the metrics);
  each normalised objective score as ``score_<objective>`` and each raw objective as ``raw_<objective>`` (only
  for a candidate that ran: a failed one has no latency figures, rather than 0 ms that would read as fast);
  ``stage`` and ``runs`` (scenario runs scored).
- artifacts (text, shown to the LLM in the next prompt): ``summary`` (the reflection summary, with its worst
  decisions), ``worst_decisions`` only when the summary lacks them (each item once), ``error`` (``CODE:
  message``) when the candidate failed, ``stderr`` (its tail) when blis wrote any.

Two kinds of failure (the CLI's contract, docs/evaluate.md):

- the *candidate* failed -- it does not parse, throws, exceeds the instruction budget, makes an invalid
  decision (a result with ``error``), or the evaluation took longer than ``BLIS_TIMEOUT_S`` (the busy server is
  stopped; the next call starts another): a result with ``combined_score: 0.0`` and the reason in
  ``artifacts["error"]``;
- the *set-up* is wrong -- an unknown suite or control point, a suite that fixes the control point evolved, an
  unreadable file, an unbuilt checkout (exit 2 and one ``error:`` line on stderr), blis crashed (another exit
  code, a signal; also the server while answering), printed no JSON (no ``listening on`` line), or could not be
  started: ``BlisSetupError`` is raised with blis's error line, since every candidate would score 0 for it.

OpenEvolve catches an exception from an evaluation function and goes on searching (0.3.2 stores the program
with ``{"error": 0.0}``; 0.4 marks the evaluation failed, ``__evaluation_failed__``, and rejects the child;
0.4.1 ends a run that produced no child with ``EvolutionFailedError``). It does not catch an exception raised
while it first imports this file (Evaluator's constructor, before the initial program is evaluated): that ends
the run at once. So the set-up is also checked at import: the warm server is started (the suite is read and the
flags checked) and evaluates a candidate that does not compile (nothing is simulated), and the import raises
``BlisSetupError`` unless that is a candidate failure. Each set-up is checked once per process;
``BLIS_SETUP_CHECK=0`` skips the check.

Environment:

- ``BLIS_CMD``: the command prefix running blis (default ``node <repo>/bin/blis.js``, the repository holding
  this file; e.g. ``npx blis``);
- ``BLIS_SUITE``: a built-in suite name or a suite file (default ``routing-prefix-heavy``);
- ``BLIS_CONTROL_POINT``: ``admission | priority | routing | scheduler | autoscale`` (default ``routing``);
- ``BLIS_TIMEOUT_S``: wall-clock limit per evaluation, enforced here (default 120);
- ``BLIS_CACHE_DIR``: the result cache blis keeps (``--cache``); default a temp folder per checkout and build when
  ``BLIS_CMD`` is unset, so the suite's baseline is simulated once per build; empty: no cache;
- ``BLIS_SETUP_CHECK``: ``0`` skips the set-up check at import;
- ``BLIS_WARM``: ``0`` runs the CLI once per evaluation instead of the warm server.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple, Union

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

try:  # OpenEvolve 0.3.x and 0.4.x
    from openevolve.evaluation_result import EvaluationResult as _OEResult  # type: ignore
except Exception:  # noqa: BLE001 -- not installed (or broken): fall back to a plain dict of metrics
    _OEResult = None

Metrics = Dict[str, float]
Artifacts = Dict[str, str]


def _load_warm() -> Any:
    """integrations/blis_warm.py, loaded once per process under one name (OpenEvolve executes this file again for
    every cascade evaluation; the warm servers must outlive those copies)."""
    name = "blis_integrations_warm"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, str(REPO_ROOT / "integrations" / "blis_warm.py"))
        if spec is None or spec.loader is None:
            raise ImportError("cannot load %s" % (REPO_ROOT / "integrations" / "blis_warm.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


_warm = _load_warm()
BlisSetupError = _warm.BlisSetupError
# The shared helpers of integrations/blis_warm.py (one copy for both adapters).
blis_command = _warm.blis_command
cache_args = _warm.cache_args
_error_line = _warm.error_line
setup_error = _warm.setup_error
_kill_group = _warm.kill_group


def _timeout_s() -> float:
    try:
        value = float(os.environ.get("BLIS_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        return value if value > 0 and math.isfinite(value) else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def _tail(text: str, n: int = STDERR_TAIL_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= n else "[...]\n" + text[-n:]


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


def _mapping(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def metrics_from_result(doc: Dict[str, Any], stage: int) -> Metrics:
    """OpenEvolve metrics (floats only) from a blis ``EvaluationResult`` document.

    Keys the document may lack (``objectives``, ``scores``, ``features``: empty or partial) are left out or
    0.0 (the features). The noise figures become ``combined_score_se`` (when the result has one) and, against
    the suite's baseline, ``baseline_score`` and ``baseline_difference`` (the paired difference) with its
    ``baseline_difference_ci_low``; other keys are ignored. A failed candidate (``error``) gets no ``score_`` /
    ``raw_`` metrics and no noise figures at all.
    """
    metrics = _base_metrics(stage)
    failed = bool(doc.get("error"))
    score = _num(doc.get("combined_score"))
    metrics["combined_score"] = 0.0 if score is None or failed else min(1.0, max(0.0, score))
    if not failed:
        for name, value in _mapping(doc.get("features")).items():
            v = _num(value)
            if v is not None:
                metrics[str(name)] = v
        for prefix, key in (("score_", "scores"), ("raw_", "objectives")):
            for name, value in _mapping(doc.get(key)).items():
                v = _num(value)
                if v is not None:
                    metrics[prefix + str(name)] = v
        se = _num(doc.get("combined_score_se"))
        if se is not None:
            metrics["combined_score_se"] = se
        base = _mapping(doc.get("baseline"))
        diff = _mapping(base.get("difference"))
        for key, value in (("baseline_score", base.get("combined_score")), ("baseline_difference", diff.get("mean"))):
            v = _num(value)
            if v is not None:
                metrics[key] = v
        ci = diff.get("ci95")
        if isinstance(ci, list) and len(ci) == 2 and _num(ci[0]) is not None:
            metrics["baseline_difference_ci_low"] = _num(ci[0])  # type: ignore[assignment]
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


def _suite() -> str:
    return os.environ.get("BLIS_SUITE", "").strip() or DEFAULT_SUITE


def _control_point() -> str:
    return os.environ.get("BLIS_CONTROL_POINT", "").strip() or DEFAULT_CONTROL_POINT


def _result_document(args: List[str], timeout_s: float) -> Tuple[Optional[Dict[str, Any]], str]:
    """Runs ``blis ARGS``; returns (its JSON document, stderr), or (None, stderr) when it timed out.

    Raises BlisSetupError when blis produced no evaluation result: it could not start, exited non-zero (2: a
    set-up error; anything else: a crash), was killed by a signal, or printed no JSON object.
    """
    code, out, err, timed_out = run_cli(args, timeout_s)
    if timed_out:
        return None, err
    doc: Any = None
    if code == 0:
        try:
            doc = json.loads(out) if out.strip() else None
        except ValueError:
            doc = None
    if code != 0 or not isinstance(doc, dict):
        raise setup_error(blis_command() + args, code, out, err)
    return doc, err


#: Keyword arguments ``evaluate`` takes (OpenEvolve 0.4.1 forwards ``--evaluator-args`` as keyword arguments).
EVALUATOR_ARGS = ("suite", "control_point", "timeout_s")


def _settings(overrides: Dict[str, Any]) -> Tuple[str, str, float]:
    """(suite, control point, timeout) from the environment, replaced by ``evaluate``'s keyword arguments."""
    unknown = sorted(set(overrides) - set(EVALUATOR_ARGS))
    if unknown:
        raise BlisSetupError("unknown evaluator argument%s %s: the blis evaluator takes %s" % ("s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(EVALUATOR_ARGS)))
    suite = str(overrides.get("suite") or "").strip() or _suite()
    point = str(overrides.get("control_point") or "").strip() or _control_point()
    timeout_s = _timeout_s()
    if overrides.get("timeout_s") is not None:
        try:
            t = float(overrides["timeout_s"])
        except (TypeError, ValueError):
            t = float("nan")
        if not (t > 0 and math.isfinite(t)):
            raise BlisSetupError("evaluator argument timeout_s must be a positive number of seconds, got %r" % (overrides["timeout_s"],))
        timeout_s = t
    return suite, point, timeout_s


def _artifacts_of(doc: Dict[str, Any], err: str) -> Artifacts:
    """OpenEvolve artifacts from a result document (the CLI's, or the server's ``info``)."""
    artifacts: Artifacts = {}
    raw_artifacts = _mapping(doc.get("artifacts"))
    summary = raw_artifacts.get("summary")
    artifacts["summary"] = summary if isinstance(summary, str) else ""
    # OpenEvolve puts every artifact in the next prompt (within prompt.max_artifact_bytes): the worst decisions go
    # in once -- the summary has its own Worst Decisions section -- and separately only when it lacks them.
    worst = raw_artifacts.get("worst_decisions")
    if isinstance(worst, str) and worst.strip():
        first = next((line.strip() for line in worst.splitlines() if line.strip()), "")
        if first not in artifacts["summary"]:
            artifacts["worst_decisions"] = worst
    error = doc.get("error")
    if error:
        if isinstance(error, dict):
            artifacts["error"] = "%s: %s" % (error.get("code", "ERROR"), error.get("message", ""))
        else:
            artifacts["error"] = str(error)
        if not artifacts["summary"].strip():
            artifacts["summary"] = "The candidate failed; it was scored 0.\n\n" + artifacts["error"]
    if err.strip():
        artifacts["stderr"] = _tail(err)
    return artifacts


def _warm_server(suite: str, point: str) -> Any:
    """The warm ``blis evaluate --serve`` of this set-up (started on first use; BlisSetupError when it cannot)."""
    return _warm.get_server(blis_command(), _warm.server_args(suite, point, None, cache_args()))


def _evaluate_warm(text: str, stage: int, suite: str, point: str, timeout_s: float) -> Tuple[Metrics, Artifacts]:
    server, answer = _warm.ask(blis_command(), _warm.server_args(suite, point, None, cache_args()), "/evaluate", {"candidate": {point: text}, "stage": stage}, timeout_s)
    if answer.timed_out:
        return _failure(stage, "timeout: the evaluation took longer than %gs (BLIS_TIMEOUT_S)" % timeout_s, {"stderr": _tail(answer.stderr)} if answer.stderr.strip() else None)
    doc = answer.doc
    info = doc.get("info") if isinstance(doc, dict) else None
    if answer.status != 200 or not isinstance(info, dict):
        message = doc.get("error") if isinstance(doc, dict) else None
        raise BlisSetupError("the blis evaluation server answered %s to POST /evaluate: %s\ncommand: %s" % (answer.status, message or "no evaluation result", " ".join(shlex.quote(c) for c in server.full)))
    _raise_for_setup(info)
    return metrics_from_result(info, stage), _artifacts_of(info, answer.stderr)


def _raise_for_setup(doc: Dict[str, Any]) -> None:
    """A result whose error is the set-up's, not the candidate's: the suite fixes the control point evolved."""
    error = doc.get("error")
    if isinstance(error, dict) and error.get("code") == "SUITE_FIXED_CONTROL_POINT":
        raise BlisSetupError("blis set-up error: %s: %s (set BLIS_CONTROL_POINT to a control point the suite leaves to the candidate)" % (error.get("code"), error.get("message", "")))


def evaluate_program(program_path: Union[str, os.PathLike], stage: int, **overrides: Any) -> Tuple[Metrics, Artifacts]:
    """Evaluates a program at ``stage`` (1: the smoke scenario; 2: the full suite); returns (metrics, artifacts).

    ``overrides``: ``suite``, ``control_point``, ``timeout_s`` (instead of the environment's). A failed or
    timed-out candidate is a result with ``combined_score`` 0.0; a set-up error raises ``BlisSetupError`` (see the
    module docstring).
    """
    suite, point, timeout_s = _settings(overrides)
    tmpdir: Optional[str] = None
    try:
        path = Path(program_path).resolve()
        if not path.is_file():
            raise BlisSetupError("program file not found: %s" % path)
        if _warm.warm_enabled():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                raise BlisSetupError("cannot read the program %s: %s" % (path, e))
            return _evaluate_warm(text, stage, suite, point, timeout_s)
        if path.suffix not in (".js", ".mjs", ".cjs"):
            # blis reads a .js file as code; anything else would be taken for a bundle.
            tmpdir = tempfile.mkdtemp(prefix="blis-oe-")
            copy = Path(tmpdir) / (path.stem + ".js")
            shutil.copyfile(str(path), str(copy))
            path = copy
        args = ["evaluate", "--candidate", str(path), "--suite", suite, "--stage", str(stage), "--control-point", point] + cache_args()
        doc, err = _result_document(args, timeout_s)
        if doc is None:
            return _failure(stage, "timeout: the evaluation took longer than %gs (BLIS_TIMEOUT_S)" % timeout_s, {"stderr": _tail(err)} if err.strip() else None)
        return metrics_from_result(doc, stage), _artifacts_of(doc, err)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)


# A candidate that cannot compile: blis reads the suite and checks the flags, then fails it without simulating.
_PROBE_PROGRAM = "// blis set-up check: not a policy; it does not compile, so nothing is simulated\n(\n"

# OpenEvolve executes the evaluation file again for every cascade evaluation (openevolve/evaluator.py,
# _cascade_evaluate): the set-ups already checked in this process are kept where a fresh copy finds them.
_REGISTRY = "blis_openevolve_setup_checks"
_CHECKED: Set[Tuple[str, ...]] = sys.modules.setdefault(_REGISTRY, types.ModuleType(_REGISTRY)).__dict__.setdefault("checked", set())


def check_setup() -> None:
    """Raises ``BlisSetupError`` unless blis can evaluate with this environment's command, suite and control point.

    Runs ``blis evaluate --stage 1`` on a candidate that does not compile: the suite is read and the flags are
    checked, then the candidate fails (exit 0, ``error``) without a simulation. Each set-up is checked once per
    process.
    """
    key = tuple(blis_command()) + (_suite(), _control_point(), str(REPO_ROOT), "warm" if _warm.warm_enabled() else "cli")
    if key in _CHECKED:
        return
    if _warm.warm_enabled():
        # Starting the server reads the suite and checks the flags (exit 2 and blis's error line otherwise); the
        # probe checks that the suite leaves the control point to the candidate, without a simulation.
        metrics, artifacts = _evaluate_warm(_PROBE_PROGRAM, 1, _suite(), _control_point(), _timeout_s())
        if "timeout" in artifacts.get("error", ""):
            raise BlisSetupError("blis did not answer within %gs (BLIS_TIMEOUT_S) on the set-up check" % _timeout_s())
        _CHECKED.add(key)
        return
    tmpdir = tempfile.mkdtemp(prefix="blis-oe-check-")
    try:
        probe = Path(tmpdir) / "setup_check.js"
        probe.write_text(_PROBE_PROGRAM, encoding="utf-8")
        args = ["evaluate", "--candidate", str(probe), "--suite", _suite(), "--stage", "1", "--control-point", _control_point()]
        doc, _err = _result_document(args, _timeout_s())
        if doc is None:
            raise BlisSetupError("blis did not answer within %gs (BLIS_TIMEOUT_S) on the set-up check: %s" % (_timeout_s(), " ".join(shlex.quote(c) for c in blis_command() + args)))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    _CHECKED.add(key)


def evaluate_stage1(program_path: str, **kwargs: Any) -> Any:
    """Cascade stage 1: the suite's short smoke scenario (rejects broken or hopeless programs fast)."""
    return _result(*evaluate_program(program_path, 1, **kwargs))


def evaluate_stage2(program_path: str, **kwargs: Any) -> Any:
    """Cascade stage 2: the full suite (every scenario x seed); stage 1's runs are not simulated again."""
    return _result(*evaluate_program(program_path, 2, **kwargs))


def evaluate(program_path: str, **kwargs: Any) -> Any:
    """Direct evaluation (``cascade_evaluation: false``): the full suite, as stage 2.

    Keyword arguments (OpenEvolve 0.4.1's ``--evaluator-args``): ``suite``, ``control_point``, ``timeout_s``.
    """
    return _result(*evaluate_program(program_path, 2, **kwargs))


if os.environ.get("BLIS_SETUP_CHECK", "").strip() != "0":
    check_setup()
