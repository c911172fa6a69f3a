"""Stand-in for openevolve.evaluator.Evaluator (0.4.x): loading, the cascade, retries and failure marking."""

import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from openevolve.evaluation_result import EVALUATION_FAILED_METRIC, EvaluationResult


@dataclass
class EvaluatorConfig:
    timeout: int = 300
    max_retries: int = 3
    cascade_evaluation: bool = True
    cascade_thresholds: List[float] = field(default_factory=lambda: [0.5, 0.75, 0.9])
    evaluator_args: Dict[str, Any] = field(default_factory=dict)


class Evaluator:
    def __init__(self, config: EvaluatorConfig, evaluation_file: str, suffix: str = ".py") -> None:
        self.config = config
        self.evaluation_file = evaluation_file
        self.program_suffix = suffix
        self._pending_artifacts: Dict[str, Dict[str, Any]] = {}
        self._load()  # an exception here ends the run (OpenEvolve does not catch it)

    def _load(self) -> Any:
        spec = importlib.util.spec_from_file_location("evaluation_module", self.evaluation_file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["evaluation_module"] = module
        spec.loader.exec_module(module)
        if not hasattr(module, "evaluate"):
            raise AttributeError("no evaluate function")
        self.evaluate_function = module.evaluate
        return module

    @staticmethod
    def _process(result: Any) -> EvaluationResult:
        if isinstance(result, dict):
            return EvaluationResult.from_dict(result)
        if isinstance(result, EvaluationResult):
            return result
        return EvaluationResult(metrics={EVALUATION_FAILED_METRIC: 1.0, "error": 0.0})

    def _cascade(self, path: str) -> EvaluationResult:
        # OpenEvolve executes the evaluation file again for every cascade evaluation.
        spec = importlib.util.spec_from_file_location("evaluation_module", self.evaluation_file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kwargs = self.config.evaluator_args
        try:
            stage1 = self._process(module.evaluate_stage1(path, **kwargs))
        except Exception as e:  # noqa: BLE001 -- OpenEvolve's behaviour
            return EvaluationResult(metrics={"stage1_passed": 0.0, "error": 0.0}, artifacts={"stderr": str(e)})
        if float(stage1.metrics.get("combined_score", 0.0)) < self.config.cascade_thresholds[0] or not hasattr(module, "evaluate_stage2"):
            return stage1
        try:
            stage2 = self._process(module.evaluate_stage2(path, **kwargs))
        except Exception as e:  # noqa: BLE001
            stage1.artifacts.update({"stage2_stderr": str(e), "failure_stage": "stage2"})
            stage1.metrics["stage2_passed"] = 0.0
            return stage1
        merged = {k: float(v) for r in (stage1, stage2) for k, v in r.metrics.items() if isinstance(v, (int, float)) and k != "error"}
        return EvaluationResult(metrics=merged, artifacts={**stage1.artifacts, **stage2.artifacts})

    def evaluate_program(self, program_code: str, program_id: str = "") -> Dict[str, float]:
        last: Optional[BaseException] = None
        for _attempt in range(self.config.max_retries + 1):
            fd, path = tempfile.mkstemp(suffix=self.program_suffix)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(program_code)
            try:
                if self.config.cascade_evaluation:
                    result = self._cascade(path)
                else:
                    result = self._process(self.evaluate_function(path, **self.config.evaluator_args))
                if program_id and result.artifacts:
                    self._pending_artifacts[program_id] = dict(result.artifacts)
                return result.metrics
            except Exception as e:  # noqa: BLE001 -- retried, then marked failed
                last = e
                if program_id:
                    self._pending_artifacts[program_id] = {"stderr": str(e), "failure_stage": "evaluation"}
            finally:
                os.unlink(path)
        assert last is not None
        return {EVALUATION_FAILED_METRIC: 1.0, "error": 0.0}

    def get_pending_artifacts(self, program_id: str) -> Optional[Dict[str, Any]]:
        return self._pending_artifacts.pop(program_id, None)
