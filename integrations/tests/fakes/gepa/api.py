"""Stand-in for gepa.optimize driving a GEPAAdapter (evaluate, make_reflective_dataset, reflection LM)."""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from ._reflect import propose


@dataclass
class GEPAResult:
    best_candidate: Dict[str, str]
    best_score: float
    total_metric_calls: int


def optimize(seed_candidate: Dict[str, str], trainset: List[Any], valset: Optional[List[Any]] = None, adapter: Any = None,
             reflection_lm: Optional[Callable[[str], str]] = None, max_metric_calls: int = 20, raise_on_exception: bool = True,
             reflection_minibatch_size: int = 3, **_: Any) -> GEPAResult:
    valset = valset or trainset
    calls = 0

    def score(candidate: Dict[str, str]) -> float:
        nonlocal calls
        batch = adapter.evaluate(valset, candidate, capture_traces=False)
        calls += batch.num_metric_calls or len(valset)
        return sum(batch.scores) / max(1, len(batch.scores))

    best, best_score = dict(seed_candidate), score(seed_candidate)
    component = sorted(seed_candidate)[0]
    while calls + len(valset) + reflection_minibatch_size <= max_metric_calls:
        minibatch = trainset[:reflection_minibatch_size]
        traced = adapter.evaluate(minibatch, best, capture_traces=True)
        calls += len(minibatch)
        records = adapter.make_reflective_dataset(best, traced, [component])[component]
        assert reflection_lm is not None, "give reflection_lm"
        child = dict(best, **{component: propose(reflection_lm, best[component], records)})
        s = score(child)
        if s > best_score:
            best, best_score = child, s
    return GEPAResult(best, best_score, calls)
