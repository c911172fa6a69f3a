"""GEPA adapter for blis-ts policies (GEPA's ``GEPAAdapter`` protocol, gepa.core.adapter, as GEPA has it now).

GEPA optimises a *candidate*: a dict of text components. Here a candidate is what
``candidateFromComponents`` (src/evaluate/candidate.ts) accepts: ``{"bundle": TEXT}`` (a whole policy bundle,
YAML or JSON, docs/policies.md) or control-point keys ``admission | priority | routing | scheduler | autoscale``
each holding JavaScript (``function route(request, state) {...}`` etc.). A data instance is an example id
``"scenario@seed"`` of the evaluation suite (or a dict with ``example_id``/``id``, or ``scenario`` and ``seed``);
``examples()`` lists the suite's.

``BlisGEPAAdapter.evaluate`` evaluates the candidate on each example separately (one simulation run each, so
one example's failure or feedback never leaks into another's) with ``POST /evaluate {"candidate": {...},
"example_id": "scenario@seed"}`` (GEPA's evaluation-server protocol) to

- a warm ``blis evaluate --serve`` that this process starts on first use (integrations/blis_warm.py: once per
  set-up, restarted when it died, stopped when the process ends; thread-safe, as GEPA evaluates in threads), or
- a running server when ``BLIS_EVAL_URL`` (or ``eval_url=``) is set;
- with ``BLIS_WARM=0``, the blis CLI instead: ``<BLIS_CMD> evaluate --components FILE.json --suite SUITE --only
  scenario@seed``.

and returns GEPA's ``EvaluationBatch`` (imported from gepa when installed, else a compatible dataclass):
``outputs`` and ``scores`` (``combined_score`` of each run, in [0, 1]) of the batch's length, ``trajectories``
when ``capture_traces``, ``objective_scores`` (the normalised per-objective scores, all higher-is-better, the
same keys for every example) and ``num_metric_calls`` (the batch's length).

Two kinds of failure (the CLI's contract, docs/evaluate.md):

- the *candidate* failed on an example -- a component does not compile, throws, exceeds the instruction
  budget, makes an invalid decision (exit 0 / HTTP 200 with ``error``), or the evaluation took longer than
  ``BLIS_TIMEOUT_S``: that example scores 0.0 with the reason in its output, trajectory and feedback; it has no
  objectives or metrics (no latency figures), and its objective scores are 0.0;
- the *set-up* is wrong -- an unknown suite, example id or component name, an unreadable file, an unbuilt
  checkout (exit 2 and one ``error:`` line on stderr), blis crashed (another exit code, a signal), printed no
  JSON or could not be started; or the evaluation server refused (400), failed (500), has spent its budget
  (429) or does not answer, or the warm server could not start or crashed: ``BlisSetupError`` is raised with
  blis's error line, since every candidate would score 0 for it. GEPA stops on it: it evaluates the seed
  candidate outside its iteration loop, and re-raises an exception inside the loop by default
  (``raise_on_exception=True``).

``check_setup()`` runs one cheap evaluation (a candidate that does not compile: the suite is read, nothing is
simulated) to find set-up errors before a search starts; ``examples()`` lists a built-in suite's examples
(and raises for an unknown suite).

``make_reflective_dataset`` gives every requested component one record per evaluated example:
``{"Inputs": {...}, "Generated Outputs": "...", "Feedback": "..."}`` (plus ``score``); the feedback is blis's
reflection summary (what went wrong, worst decisions, counterfactuals) or the error, each item once, and a record
holds at most ``REFLECTION_RECORD_CHARS`` (5,000) characters (Inputs values, Generated Outputs and Feedback).

Environment: ``BLIS_CMD`` (command prefix, default ``node <repo>/bin/blis.js``), ``BLIS_SUITE`` (default
``routing-prefix-heavy``), ``BLIS_TIMEOUT_S`` (default 120, enforced here), ``BLIS_EVAL_URL``, ``BLIS_WARM``
(``0``: the CLI per evaluation), ``BLIS_CACHE_DIR`` (the result cache; default a temp folder per checkout and
build without ``BLIS_CMD``; empty: none).
Standard library only; Python 3.8+.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = "routing-prefix-heavy"
DEFAULT_TIMEOUT_S = 120.0
CONTROL_POINTS = ("admission", "priority", "routing", "scheduler", "autoscale")
ENTRY_POINTS = {
    "admission": "admit(request, state) -> 'admit' | 'reject' | {delayUs, reason?}",
    "priority": "prioritize(request, state) -> a score (higher = more urgent)",
    "routing": "route(request, state) -> an instance id, its index, or {target, reason?}",
    "scheduler": "makeBatch(ctx) / selectPreemptionVictim(ctx) / onRequestArrival(request, ctx)",
    "autoscale": "evaluate(ctx) -> {action: up|down|none, by?} | {targetReplicas}",
    "bundle": "a whole policy bundle (YAML or JSON, docs/policies.md)",
}
#: A reflection record's budget: its ``Inputs`` values, ``Generated Outputs`` and ``Feedback`` hold at most this
#: many characters together (the feedback is cut, at a section or line boundary, to fit). Each item (a worst
#: decision, an issue) appears in a record once.
REFLECTION_RECORD_CHARS = 5000
STDERR_TAIL_CHARS = 3000
_EXAMPLE_RE = re.compile(r"^(.+)@(\d+)$")

try:  # GEPA (0.1.x and the current API)
    from gepa.core.adapter import EvaluationBatch  # type: ignore
except Exception:  # noqa: BLE001 -- GEPA not installed: a compatible container

    @dataclass
    class EvaluationBatch:  # type: ignore[no-redef]
        """GEPA's EvaluationBatch fields (gepa.core.adapter, 0.1.4)."""

        outputs: List[Any]
        scores: List[float]
        trajectories: Optional[List[Any]] = None
        objective_scores: Optional[List[Dict[str, float]]] = None
        num_metric_calls: Optional[int] = None


def _load_warm() -> Any:
    """integrations/blis_warm.py, loaded once per process under one name (shared with the OpenEvolve evaluator)."""
    import importlib.util
    import sys

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
tail = _warm.tail
_error_line = _warm.error_line
setup_error = _warm.setup_error
http_json = _warm.http_json


# ---------------------------------------------------------------------------------------------------------------
# Running blis


def env_timeout_s() -> float:
    """``BLIS_TIMEOUT_S`` (seconds), default 120."""
    try:
        value = float(os.environ.get("BLIS_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        return value if value > 0 and math.isfinite(value) else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "\n[... %d more characters]" % (len(text) - n)


def fit_text(text: str, n: int) -> str:
    """``text`` cut to at most ``n`` characters: at the last section (``## ``) or line boundary that fits, with a
    note of what was cut."""
    if len(text) <= n:
        return text
    note = "\n[... %d more characters cut to the %d-character record budget]"
    room = max(0, n - len(note % (len(text), n)))
    cut = text.rfind("\n## ", 0, room)
    if cut < room // 2:
        cut = text.rfind("\n", 0, room)
    if cut <= 0:
        cut = room
    return text[:cut].rstrip() + note % (len(text) - cut, n)


def feedback_text(rec: Mapping[str, Any]) -> str:
    """The reflection text of one evaluated example, each item once: blis's feedback (the reflection summary,
    which has its own Worst Decisions section; or the error), the worst decisions only when the summary lacks them,
    and blis's stderr tail."""
    feedback = str(rec.get("feedback") or (("The evaluation failed: %s" % rec["error"]) if rec.get("error") else "No analysis was produced."))
    worst = str(rec.get("worst_decisions") or "").strip()
    if worst:
        first = next((line.strip() for line in worst.splitlines() if line.strip()), "")
        if first and first not in feedback:
            feedback += "\n\n## Worst Decisions\n" + worst
    if rec.get("stderr"):
        feedback += "\n\n## blis stderr\n" + str(rec["stderr"])
    return feedback


def record_chars(record: Mapping[str, Any]) -> int:
    """The characters of a reflection record that count against REFLECTION_RECORD_CHARS."""
    inputs = record.get("Inputs")
    n = sum(len(str(v)) for v in inputs.values()) if isinstance(inputs, Mapping) else len(str(inputs or ""))
    return n + len(str(record.get("Generated Outputs") or "")) + len(str(record.get("Feedback") or ""))


def run_blis(args: List[str], timeout_s: float, cmd: Optional[Sequence[str]] = None) -> Tuple[Optional[int], str, str, bool]:
    """Runs ``blis ARGS`` (cwd: the repository) within ``timeout_s``; returns (exit code or None, stdout, stderr, timed_out).

    On timeout the whole process group is killed (a wrapper such as ``npx`` starts node as a child).
    """
    full = blis_command(cmd) + args
    try:
        proc = subprocess.Popen(
            full,
            cwd=str(REPO_ROOT),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=(os.name == "posix"),
        )
    except (OSError, ValueError) as e:
        return None, "", "cannot start %s: %s" % (" ".join(full), e), False
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        _warm.kill_group(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, ValueError):
            out, err = "", ""
        return None, out or "", err or "", True


def normalize_candidate(candidate: Any) -> Dict[str, str]:
    """A component dict from a candidate: a dict of texts as is; a string as ``{"bundle": text}``."""
    if isinstance(candidate, str):
        return {"bundle": candidate}
    if isinstance(candidate, Mapping):
        return {str(k): v if isinstance(v, str) else str(v) for k, v in candidate.items()}
    raise TypeError("a candidate is a dict of component texts or a bundle text, got %s" % type(candidate).__name__)


def example_id_of(item: Any) -> Optional[str]:
    """``"scenario@seed"`` of a data instance (a string, or a dict with example_id / id / scenario and seed)."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for key in ("example_id", "id"):
            if isinstance(item.get(key), str):
                return item[key]
        if isinstance(item.get("scenario"), str) and isinstance(item.get("seed"), int) and not isinstance(item.get("seed"), bool):
            return "%s@%d" % (item["scenario"], item["seed"])
    return None


def _floats(d: Any) -> Dict[str, float]:
    out: Dict[str, float] = {}
    if isinstance(d, Mapping):
        for k, v in d.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)):
                out[str(k)] = float(v)
    return out


def _error_text(error: Any) -> Optional[str]:
    if isinstance(error, Mapping):
        return "%s: %s" % (error.get("code", "ERROR"), error.get("message", ""))
    if isinstance(error, str) and error:
        return error
    return None


def record_from_result(example_id: Optional[str], doc: Mapping[str, Any]) -> Dict[str, Any]:
    """A per-example record (the trajectory) from an ``EvaluationResult`` document (or a server ``info``).

    Keys the document may lack (``objectives``, ``scores``, ...: absent, empty or partial) give empty dicts;
    keys it may gain (``combined_score_se``, ``baseline``, ``constraints``, ...) are ignored. A failed candidate
    (``error``) has no objectives, metrics or features (no latency figures), and 0.0 for each objective score.
    """
    error = _error_text(doc.get("error"))
    score = doc.get("combined_score")
    score_f = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(float(score)) else 0.0
    artifacts = doc.get("artifacts") if isinstance(doc.get("artifacts"), Mapping) else {}
    summary = artifacts.get("summary") if isinstance(artifacts.get("summary"), str) else ""
    scenarios = doc.get("scenarios") if isinstance(doc.get("scenarios"), list) else []
    first = scenarios[0] if scenarios and isinstance(scenarios[0], Mapping) else {}
    scenario, seed = None, None
    m = _EXAMPLE_RE.match(example_id or "")
    if m:
        scenario, seed = m.group(1), int(m.group(2))
    feedback = summary
    raw_error = doc.get("error")
    message = raw_error.get("message") if isinstance(raw_error, Mapping) else error
    if error and not (summary and isinstance(message, str) and message and message in summary):
        feedback = "The candidate failed: %s\n\n%s" % (error, summary) if summary else "The candidate failed: " + error
    one = len(scenarios) == 1 and not error
    return {
        "example_id": example_id,
        "scenario": scenario,
        "seed": seed,
        "score": 0.0 if error else max(0.0, min(1.0, score_f)),
        "objectives": {} if error else _floats(doc.get("objectives")),
        "scores": {k: 0.0 for k in _floats(doc.get("scores"))} if error else _floats(doc.get("scores")),
        "features": {} if error else _floats(doc.get("features")),
        "metrics": _floats(first.get("metrics")) if one else {},
        "anomalies": _floats(first.get("anomalies")) if one else {},
        "feedback": feedback,
        "worst_decisions": artifacts.get("worst_decisions") if isinstance(artifacts.get("worst_decisions"), str) else "",
        "error": error,
        "candidate_id": (doc.get("candidate") or {}).get("id") if isinstance(doc.get("candidate"), Mapping) else None,
    }


def failure_record(example_id: Optional[str], reason: str, stderr: str = "") -> Dict[str, Any]:
    """A per-example record of a candidate's evaluation that produced no result (it timed out): score 0.0."""
    rec = record_from_result(example_id, {})
    rec.update({"score": 0.0, "error": reason, "feedback": "The evaluation failed: " + reason})
    if stderr.strip():
        rec["stderr"] = tail(stderr)
    return rec


class BlisClient:
    """Evaluates candidates with blis: the CLI, or a ``blis evaluate --serve`` server when ``eval_url`` is given."""

    def __init__(
        self,
        suite: Optional[str] = None,
        blis_cmd: Optional[Sequence[str]] = None,
        timeout_s: Optional[float] = None,
        eval_url: Optional[str] = None,
        engine: Optional[str] = None,
    ) -> None:
        self.suite = suite or os.environ.get("BLIS_SUITE", "").strip() or DEFAULT_SUITE
        self.blis_cmd = list(blis_cmd) if blis_cmd else None
        self.timeout_s = timeout_s if timeout_s is not None else env_timeout_s()
        url = eval_url if eval_url is not None else os.environ.get("BLIS_EVAL_URL", "").strip()
        self.eval_url = url.rstrip("/") or None
        self.engine = engine
        # Without a server URL: a warm `blis evaluate --serve` started on first use (BLIS_WARM=0: the CLI per call).
        self.warm = self.eval_url is None and _warm.warm_enabled()
        self._examples: Optional[List[str]] = None
        self._checked = False
        # The suite's objective names seen so far: a failed example gets a 0.0 score for each, so that GEPA's
        # per-objective Pareto fronts count the failure (it averages each objective over the examples that have it).
        self._objective_names: Dict[str, None] = {}

    def _cmd(self) -> List[str]:
        return blis_command(self.blis_cmd)

    def _document(self, args: List[str]) -> Tuple[Any, str, bool]:
        """Runs ``blis ARGS``; returns (its JSON document, stderr, timed_out) -- (None, stderr, True) on a timeout.

        Raises BlisSetupError when blis produced no result: it could not start, exited non-zero, was killed by a
        signal, or printed no JSON.
        """
        code, out, err, timed_out = run_blis(args, self.timeout_s, self.blis_cmd)
        if timed_out:
            return None, err, True
        doc: Any = None
        if code == 0:
            try:
                doc = json.loads(out) if out.strip() else None
            except ValueError:
                doc = None
        if code != 0 or doc is None:
            raise setup_error(self._cmd() + args, code, out, err)
        return doc, err, False

    def _server_error(self, what: str, status: int, doc: Any) -> BlisSetupError:
        message = doc.get("error") if isinstance(doc, Mapping) and isinstance(doc.get("error"), str) else "unexpected answer"
        where = self.eval_url or "(warm blis evaluate --serve)"
        if status == 429:
            return BlisSetupError("the evaluation server %s has spent its budget (%s answered 429): %s" % (where, what, message))
        return BlisSetupError("evaluation server %s: %s answered %s: %s" % (where, what, status or "nothing", message))

    def _ask(self, path: str, body: Optional[Dict[str, Any]]) -> Tuple[int, Any, str]:
        """(status, document, blis's stderr meanwhile) from the configured server or the warm one; status 0 with
        ``{"timeout": True}`` when it did not answer within the timeout."""
        if self.eval_url:
            status, doc = http_json(self.eval_url + path, body, self.timeout_s)
            return status, doc, ""
        _server, answer = _warm.ask(self._cmd(), _warm.server_args(self.suite, None, self.engine, cache_args()), path, body, self.timeout_s)
        if answer.timed_out:
            return 0, {"error": "timeout", "timeout": True}, answer.stderr
        return answer.status, answer.doc, answer.stderr

    def check_setup(self) -> None:
        """Raises ``BlisSetupError`` unless blis can evaluate candidates on this suite (checked once per client).

        Through the CLI: ``blis evaluate --stage 1`` on a candidate that does not compile -- the suite is read and
        the flags checked, then the candidate fails without a simulation (a fraction of a second). Through a
        server: ``GET /status``.
        """
        if self._checked:
            return
        if self.eval_url or self.warm:
            status, doc, _err = self._ask("/task", None)
            if status != 200 or not isinstance(doc, Mapping):
                raise self._server_error("GET /task", status, doc)
            for o in doc.get("objectives") or []:
                if isinstance(o, Mapping) and isinstance(o.get("name"), str):
                    self._objective_names[o["name"]] = None
        else:
            fd, path = tempfile.mkstemp(prefix="blis-setup-check-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"routing": "// blis set-up check: not a policy; it does not compile\n(\n"}, f)
                args = ["evaluate", "--components", path, "--suite", self.suite, "--stage", "1"]
                if self.engine:
                    args += ["--engine", self.engine]
                doc, _err, timed_out = self._document(args)
            finally:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            if timed_out:
                raise BlisSetupError("blis did not answer the set-up check within %gs (BLIS_TIMEOUT_S)" % self.timeout_s)
            if isinstance(doc, Mapping):
                self._objective_names.update(dict.fromkeys(_floats(doc.get("scores"))))
        self._checked = True

    def examples(self) -> List[str]:
        """The suite's example ids ``scenario@seed`` (stage 2, the full suite).

        Raises ``BlisSetupError`` when they cannot be listed or the suite is unknown. Through the CLI only the
        built-in suites' examples are listed: a suite file gives [] after its set-up is checked (pass its
        ``scenario@seed`` ids yourself, or serve it with ``blis evaluate --serve``).
        """
        if self._examples is not None:
            return list(self._examples)
        ids: List[str] = []
        if self.eval_url or self.warm:
            status, doc, _err = self._ask("/task", None)
            if status != 200 or not isinstance(doc, Mapping) or not isinstance(doc.get("examples"), list):
                raise self._server_error("GET /task", status, doc)
            ids = [str(x) for x in doc["examples"]]
        else:
            suites, _err, timed_out = self._document(["suites"])
            if timed_out:
                raise BlisSetupError("blis suites did not answer within %gs (BLIS_TIMEOUT_S)" % self.timeout_s)
            found = False
            for s in suites if isinstance(suites, list) else []:
                if isinstance(s, Mapping) and s.get("name") == self.suite:
                    found = True
                    for sc in s.get("stage2") or []:
                        for seed in sc.get("seeds") or []:
                            ids.append("%s@%s" % (sc.get("name"), seed))
            if not found:
                self.check_setup()  # an unknown name or a broken suite file raises; a good suite file lists nothing here
        self._examples = ids
        return list(ids)

    def evaluate(self, candidate: Any, example_id: Optional[str] = None, stage: Optional[int] = None) -> Dict[str, Any]:
        """One evaluation (one example, or the whole suite when ``example_id`` is None) → a per-example record.

        A failed or timed-out candidate is a record with score 0.0 and ``error``; a set-up error (see the
        module docstring) raises ``BlisSetupError``; a candidate that is neither a dict nor a string raises
        TypeError.
        """
        components = normalize_candidate(candidate)
        if example_id is not None and not _EXAMPLE_RE.match(example_id):
            raise BlisSetupError('bad example id "%s": write scenario@seed (known: %s)' % (example_id, ", ".join(self.examples())))
        if self.eval_url or self.warm:
            rec = self._evaluate_http(components, example_id, stage if example_id is None else None)
        else:
            rec = self._evaluate_cli(components, example_id, stage)
        if rec["error"]:
            zeros = dict.fromkeys(self._objective_names, 0.0)
            zeros.update(rec["scores"])
            rec["scores"] = zeros
        else:
            self._objective_names.update(dict.fromkeys(rec["scores"]))
        return rec

    def _evaluate_cli(self, components: Dict[str, str], example_id: Optional[str], stage: Optional[int]) -> Dict[str, Any]:
        fd, path = tempfile.mkstemp(prefix="blis-candidate-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(components, f)
            args = ["evaluate", "--components", path, "--suite", self.suite] + cache_args()
            if example_id is not None:
                args += ["--only", example_id]
            if stage is not None:
                args += ["--stage", str(stage)]
            if self.engine:
                args += ["--engine", self.engine]
            doc, err, timed_out = self._document(args)
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        if timed_out:
            return failure_record(example_id, "timeout: the evaluation took longer than %gs (BLIS_TIMEOUT_S)" % self.timeout_s, err)
        if not isinstance(doc, Mapping):
            raise BlisSetupError("blis printed JSON that is not an evaluation result: %s" % tail(json.dumps(doc), 300))
        rec = record_from_result(example_id, doc)
        if err.strip():
            rec["stderr"] = tail(err)
        return rec

    def _evaluate_http(self, components: Dict[str, str], example_id: Optional[str], stage: Optional[int] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"candidate": components}
        if example_id is not None:
            body["example_id"] = example_id
        elif stage is not None:
            body["stage"] = stage
        status, doc, err = self._ask("/evaluate", body)
        if status == 200 and isinstance(doc, Mapping) and isinstance(doc.get("info"), Mapping):
            rec = record_from_result(example_id, doc["info"])
            score = doc.get("score")
            if isinstance(score, (int, float)) and not isinstance(score, bool) and not rec["error"]:
                rec["score"] = float(score)
            if isinstance(doc.get("budget"), Mapping) and self.eval_url:
                rec["budget"] = dict(doc["budget"])
            if err.strip():
                rec["stderr"] = tail(err)
            return rec
        if status == 0 and isinstance(doc, Mapping) and doc.get("timeout"):
            return failure_record(example_id, "timeout: the evaluation took longer than %gs (BLIS_TIMEOUT_S)" % self.timeout_s, err)
        raise self._server_error("POST /evaluate", status, doc)


# ---------------------------------------------------------------------------------------------------------------
# The adapter


def _outputs_text(rec: Mapping[str, Any]) -> str:
    """A compact text of what the candidate produced on one example."""
    if rec.get("error"):
        return "No result: %s" % rec["error"]
    lines = ["combined score %.4f" % float(rec.get("score", 0.0))]
    objectives = rec.get("objectives") or {}
    scores = rec.get("scores") or {}
    if objectives:
        lines.append("objectives: " + ", ".join("%s = %.4g (score %.3f)" % (k, objectives[k], scores.get(k, 0.0)) for k in sorted(objectives)))
    if rec.get("features"):
        lines.append("behaviour: " + ", ".join("%s = %.4g" % (k, v) for k, v in sorted(rec["features"].items())))
    anomalies = {k: v for k, v in (rec.get("anomalies") or {}).items() if v}
    if anomalies:
        lines.append("anomalies: " + ", ".join("%s x%d" % (k, int(v)) for k, v in sorted(anomalies.items())))
    if rec.get("error"):
        lines.append("error: %s" % rec["error"])
    return "\n".join(lines)


class BlisGEPAAdapter:
    """GEPA's ``GEPAAdapter`` over the blis-ts evaluator (see the module docstring).

    Args:
        suite: a built-in suite name or a suite file (default ``BLIS_SUITE`` or ``routing-prefix-heavy``).
        blis_cmd: the command running blis (default ``BLIS_CMD`` or ``node <repo>/bin/blis.js``).
        timeout_s: wall-clock limit per evaluation (default ``BLIS_TIMEOUT_S`` or 120).
        eval_url: a ``blis evaluate --serve`` server (default ``BLIS_EVAL_URL``); the CLI when unset.
        engine: the sandbox engine for code components (``fast`` or ``strict``; the CLI's default when None).
    """

    #: GEPA's default reflective proposer is used.
    propose_new_texts = None

    def __init__(
        self,
        suite: Optional[str] = None,
        blis_cmd: Optional[Sequence[str]] = None,
        timeout_s: Optional[float] = None,
        eval_url: Optional[str] = None,
        engine: Optional[str] = None,
    ) -> None:
        self.client = BlisClient(suite=suite, blis_cmd=blis_cmd, timeout_s=timeout_s, eval_url=eval_url, engine=engine)

    @property
    def suite(self) -> str:
        """The suite evaluated."""
        return self.client.suite

    def examples(self) -> List[str]:
        """The suite's example ids (``scenario@seed``): a trainset / valset for ``gepa.optimize``."""
        return self.client.examples()

    def check_setup(self) -> None:
        """Raises ``BlisSetupError`` unless blis can evaluate candidates on the suite (``BlisClient.check_setup``)."""
        self.client.check_setup()

    def evaluate(self, batch: List[Any], candidate: Dict[str, str], capture_traces: bool = False) -> Any:
        """Evaluates ``candidate`` on each example of ``batch``; see the module docstring for the result.

        Raises ``BlisSetupError`` for a set-up error, including a batch item that is not an example.
        """
        records: List[Dict[str, Any]] = []
        for item in batch:
            eid = example_id_of(item)
            if eid is None:
                raise BlisSetupError("not an example: %r (give \"scenario@seed\" or {\"example_id\": ...})" % (item,))
            records.append(self.client.evaluate(candidate, eid))
        names = sorted({k for r in records for k in (r.get("scores") or {})})
        objective_scores = [{k: float((r.get("scores") or {}).get(k, 0.0)) for k in names} for r in records]
        outputs = [
            {k: r.get(k) for k in ("example_id", "score", "objectives", "scores", "features", "error")}
            for r in records
        ]
        scores = [float(r["score"]) for r in records]
        fields = dict(outputs=outputs, scores=scores, trajectories=records if capture_traces else None, objective_scores=objective_scores if names else None)
        try:
            return EvaluationBatch(num_metric_calls=len(batch), **fields)
        except TypeError:  # a GEPA without num_metric_calls (0.1.0)
            result = EvaluationBatch(**fields)
            try:
                setattr(result, "num_metric_calls", len(batch))
            except AttributeError:
                pass
            return result

    def make_reflective_dataset(
        self, candidate: Dict[str, str], eval_batch: Any, components_to_update: List[str]
    ) -> Dict[str, List[Dict[str, Any]]]:
        """For each component to update, one record per evaluated example: Inputs, Generated Outputs, Feedback."""
        trajectories = getattr(eval_batch, "trajectories", None)
        if not trajectories:
            trajectories = [o for o in (getattr(eval_batch, "outputs", None) or []) if isinstance(o, Mapping)]
        scores = list(getattr(eval_batch, "scores", None) or [])
        dataset: Dict[str, List[Dict[str, Any]]] = {}
        for component in components_to_update:
            records: List[Dict[str, Any]] = []
            for i, t in enumerate(trajectories):
                rec = t if isinstance(t, Mapping) else {}
                score = float(rec.get("score", scores[i] if i < len(scores) else 0.0) or 0.0)
                record: Dict[str, Any] = {
                    "Inputs": {
                        "component": component,
                        "contract": ENTRY_POINTS.get(component, "a text component of the candidate"),
                        "suite": self.suite,
                        "example": rec.get("example_id"),
                        "scenario": rec.get("scenario"),
                        "seed": rec.get("seed"),
                    },
                    "Generated Outputs": fit_text(_outputs_text(rec), REFLECTION_RECORD_CHARS // 4),
                    "Feedback": "",
                    "score": score,
                }
                record["Feedback"] = fit_text(feedback_text(rec), REFLECTION_RECORD_CHARS - record_chars(record))
                records.append(record)
            if not records:
                records.append(
                    {
                        "Inputs": {"component": component, "contract": ENTRY_POINTS.get(component, "a text component"), "suite": self.suite},
                        "Generated Outputs": "nothing: no example was evaluated",
                        "Feedback": "No example of the batch was evaluated, so there is no feedback on %s yet." % component,
                        "score": 0.0,
                    }
                )
            dataset[component] = records
        return dataset
