"""Stand-in for gepa.optimize_anything (the current API: OptimizeAnythingConfig, evaluator(candidate, example=...))."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from ._reflect import propose


@dataclass
class OptimizeAnythingConfig:
    engine: str = "gepa"
    name: Optional[str] = None
    max_evals: Optional[int] = 100
    max_token_cost: Optional[float] = None
    max_concurrency: int = 8
    output_dir: Optional[str] = None
    run_dir: Optional[str] = None
    stop_at_score: Optional[float] = None
    sandbox: bool = True
    engine_config: Dict[str, Any] = field(default_factory=dict)


@dataclass
class GEPAResult:
    best_candidate: Union[str, Dict[str, str]]
    best_score: float
    total_evals: int
    metadata: Dict[str, Any] = field(default_factory=dict)


def _unpack(r: Any) -> Any:
    return r if isinstance(r, tuple) else (float(r), {})


def optimize_anything(seed_candidate: Union[str, Dict[str, str], None] = None, *, evaluator: Callable[..., Any], dataset: Optional[List[Any]] = None,
                      valset: Optional[List[Any]] = None, objective: Optional[str] = None, background: Optional[str] = None,
                      test_set: Optional[List[Any]] = None, config: Optional[OptimizeAnythingConfig] = None, **_: Any) -> GEPAResult:
    config = config or OptimizeAnythingConfig()
    unknown = set(config.engine_config) - {"engine", "reflection", "merge", "refiner", "tracking", "callbacks", "stop_callbacks"}
    if unknown:
        raise TypeError("GEPAConfig got unexpected keyword arguments %s" % sorted(unknown))
    lm = (config.engine_config.get("reflection") or {}).get("reflection_lm")
    if not callable(lm):
        raise TypeError("the stand-in needs engine_config['reflection']['reflection_lm'] to be a callable")
    examples = list(valset or dataset or [None])
    evals = 0

    def score(candidate: Any) -> Any:
        nonlocal evals
        results = [_unpack(evaluator(candidate) if ex is None else evaluator(candidate, example=ex)) for ex in examples]
        evals += len(results)
        return sum(s for s, _ in results) / len(results), [i for _, i in results]

    best = seed_candidate
    best_score, infos = score(best)
    budget = config.max_evals or 10 * len(examples)
    while evals + len(examples) <= budget:
        key = sorted(best)[0] if isinstance(best, dict) else None
        current = best[key] if key is not None else str(best)
        text = propose(lm, current, [dict(info, Objective=objective or "") for info in infos[:3]])
        child: Any = dict(best, **{key: text}) if key is not None else text
        s, child_infos = score(child)
        if s > best_score:
            best, best_score, infos = child, s, child_infos
        if config.stop_at_score is not None and best_score >= config.stop_at_score:
            break
    return GEPAResult(best, best_score, evals)
