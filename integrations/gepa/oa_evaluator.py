"""An ``optimize_anything`` evaluator for blis-ts policies (GEPA's ``gepa.optimize_anything``, current API).

Usage (integrations/gepa/example_optimize_anything.py is a runnable version, with a reflection model)::

    from gepa.optimize_anything import OptimizeAnythingConfig, optimize_anything
    from oa_evaluator import evaluate, dataset, seed_candidate

    result = optimize_anything(
        seed_candidate(),                         # {"routing": "function route(request, state) {...}"}
        evaluator=evaluate,
        dataset=dataset(),                        # ["steady@1", "steady@2", ...] (scenario@seed)
        objective="Maximize combined_score of the blis routing-prefix-heavy suite",
        config=OptimizeAnythingConfig(engine="gepa", max_evals=100,
                                      engine_config={"reflection": {"reflection_lm": my_lm}}),
    )

``evaluate(candidate, example=None)`` returns ``(score, side_info)``:

- ``candidate``: a dict of component texts (``{"bundle": TEXT}`` or control-point keys ``admission | priority |
  routing | scheduler | autoscale`` holding JavaScript), or a string: a JSON object of components, JavaScript
  code for ``BLIS_CONTROL_POINT`` (default routing) when it defines the entry point (``function route(`` ...), or
  else a bundle text (YAML/JSON);
- ``example``: ``"scenario@seed"`` (or a dict with ``example_id``/``id``, or ``scenario`` and ``seed``) for one
  run of the suite; ``None`` (single-task mode) for the whole suite (stage 1, then stage 2);
- ``score``: blis's ``combined_score`` in [0, 1] (0.0 when the candidate failed or timed out);
- ``side_info``: ``scores`` (dict[str, float], the normalised per-objective scores, all higher-is-better: GEPA's
  multi-objective Pareto tracking), ``Input`` (the example), ``Output`` (objectives and behaviour as text),
  ``Feedback`` (blis's reflection summary with its worst decisions, each item once, and blis's stderr tail when
  any; within ``REFLECTION_RECORD_CHARS``), ``Error`` (when failed), ``objectives`` (raw values; empty when
  the candidate failed: no latency figures), ``features``, ``example_id``. The keys GEPA reserves -- ``log``,
  ``stdout``, ``stderr``, ``_budget`` -- are never used.

A failed or timed-out candidate scores 0.0 with the reason in ``Error`` and ``Feedback``. A set-up error -- an
unknown suite or example, an unbuilt checkout, blis exiting with 2 or crashing, an evaluation server that
refuses or has spent its budget -- raises ``BlisSetupError`` (adapter.py) with blis's error line: GEPA's
``optimize_anything`` re-raises an evaluator's exception by default (``raise_on_exception=True``), so the
search stops and shows it instead of scoring every candidate 0. ``dataset()`` raises for an unknown suite
before a search starts; ``check_setup()`` checks the whole set-up. A candidate that is neither a dict nor a
string raises TypeError. Environment: ``BLIS_CMD``, ``BLIS_SUITE``, ``BLIS_TIMEOUT_S``, ``BLIS_EVAL_URL`` as
for adapter.py, and ``BLIS_CONTROL_POINT`` for plain-code string candidates. Standard library only; Python 3.8+.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

try:
    from .adapter import REFLECTION_RECORD_CHARS, BlisClient, BlisSetupError, CONTROL_POINTS, _outputs_text, example_id_of, feedback_text, fit_text  # type: ignore
except ImportError:  # loaded as a top-level module or by path
    _path = Path(__file__).resolve().parent / "adapter.py"
    _name = "blis_gepa_adapter"
    _mod = sys.modules.get(_name)
    if _mod is None:
        _spec = importlib.util.spec_from_file_location(_name, str(_path))
        assert _spec is not None and _spec.loader is not None
        _mod = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = _mod
        _spec.loader.exec_module(_mod)
    BlisClient = _mod.BlisClient
    BlisSetupError = _mod.BlisSetupError
    CONTROL_POINTS = _mod.CONTROL_POINTS
    _outputs_text = _mod._outputs_text
    example_id_of = _mod.example_id_of
    feedback_text = _mod.feedback_text
    fit_text = _mod.fit_text
    REFLECTION_RECORD_CHARS = _mod.REFLECTION_RECORD_CHARS

_ENTRY = {
    "admission": r"admit",
    "priority": r"prioritize",
    "routing": r"route",
    "scheduler": r"(?:makeBatch|selectPreemptionVictim|onRequestArrival)",
    "autoscale": r"evaluate",
}
_INITIAL_PROGRAM = Path(__file__).resolve().parents[1] / "openevolve" / "example" / "initial_program.js"
_client: Optional[BlisClient] = None


def _get_client() -> BlisClient:
    global _client
    if _client is None:
        _client = BlisClient()
    return _client


def components_of(candidate: Any) -> Dict[str, str]:
    """The component dict of a candidate (see the module docstring for strings)."""
    if isinstance(candidate, dict):
        return {str(k): v if isinstance(v, str) else str(v) for k, v in candidate.items()}
    if not isinstance(candidate, str):
        raise TypeError("a candidate is a dict of component texts or a string, got %s" % type(candidate).__name__)
    text = candidate.strip()
    if text.startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc and all(isinstance(v, str) for v in doc.values()) and set(doc) <= set(CONTROL_POINTS) | {"bundle"}:
            return dict(doc)
    point = os.environ.get("BLIS_CONTROL_POINT", "").strip() or "routing"
    entry = _ENTRY.get(point, r"route")
    if re.search(r"\bfunction\s+%s\s*\(" % entry, candidate) or re.search(r"\b(?:const|let|var)\s+%s\s*=" % entry, candidate):
        return {point: candidate}
    return {"bundle": candidate}


def dataset(suite: Optional[str] = None) -> List[str]:
    """The suite's example ids ``scenario@seed`` (its full-suite runs), for ``optimize_anything(dataset=...)``."""
    client = _get_client() if suite is None else BlisClient(suite=suite)
    return client.examples()


def check_setup() -> None:
    """Raises ``BlisSetupError`` unless blis can evaluate candidates on the suite (``BlisClient.check_setup``)."""
    _get_client().check_setup()


def seed_candidate() -> Dict[str, str]:
    """A valid, deliberately mediocre starting candidate: least-loaded routing that ignores prefix caching."""
    try:
        return {"routing": _INITIAL_PROGRAM.read_text(encoding="utf-8")}
    except OSError:
        return {"routing": "function route(request, state) {\n  let best = state.instances[0];\n  for (const x of state.instances) if (x.load < best.load) best = x;\n  return best.id;\n}\n"}


def evaluate(candidate: Any, example: Any = None) -> Tuple[float, Dict[str, Any]]:
    """Scores ``candidate`` on ``example`` (or the whole suite); returns ``(score, side_info)``.

    A failed candidate scores 0.0 with the reason; a set-up error raises ``BlisSetupError``.
    """
    eid: Optional[str] = None
    if example is not None:
        eid = example_id_of(example)
        if eid is None:
            raise BlisSetupError("not an example: %r (give \"scenario@seed\")" % (example,))
    rec = _get_client().evaluate(components_of(candidate), eid)
    return float(rec.get("score", 0.0)), _side_info(rec, example)


def _side_info(rec: Dict[str, Any], example: Any) -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "scores": {k: float(v) for k, v in (rec.get("scores") or {}).items()},
        "Input": rec.get("example_id") or ("the whole suite (%s)" % _get_client().suite if example is None else repr(example)),
        "Output": fit_text(_outputs_text(rec), REFLECTION_RECORD_CHARS // 4),
        "objectives": dict(rec.get("objectives") or {}),
        "features": dict(rec.get("features") or {}),
        "example_id": rec.get("example_id"),
    }
    if rec.get("error"):
        info["Error"] = rec["error"]
    # GEPA shows the whole side_info to the reflection model: the feedback carries the worst decisions and blis's
    # stderr once (no separate copies), within the record budget.
    used = sum(len(str(info[k])) for k in ("Input", "Output", "Error") if k in info)
    info["Feedback"] = fit_text(feedback_text(rec), max(500, REFLECTION_RECORD_CHARS - used - len(json.dumps(info["objectives"])) - len(json.dumps(info["features"]))))
    return info
