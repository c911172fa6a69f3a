"""Stand-in for openevolve.evaluation_result (0.4.x)."""

from dataclasses import dataclass, field
from typing import Dict, Union

EVALUATION_FAILED_METRIC = "__evaluation_failed__"


@dataclass
class EvaluationResult:
    metrics: Dict[str, float]
    artifacts: Dict[str, Union[str, bytes]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, metrics: Dict[str, float]) -> "EvaluationResult":
        return cls(metrics=metrics)

    def has_artifacts(self) -> bool:
        return bool(self.artifacts)
