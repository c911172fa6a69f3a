"""Stand-in for gepa.core.adapter: EvaluationBatch as GEPA has it now."""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional


@dataclass
class EvaluationBatch:
    outputs: List[Any]
    scores: List[float]
    trajectories: Optional[List[Any]] = None
    objective_scores: Optional[List[Dict[str, float]]] = None
    num_metric_calls: Optional[int] = None
