"""OpenEvolve entry point for the example: re-exports ../evaluator.py (OpenEvolve 0.4.x / 0.3.2 contracts).

OpenEvolve loads this file by path (``openevolve-run.py example/initial_program.js example/evaluator.py``), so
the shared evaluator is loaded by path as well; ``evaluate``, ``evaluate_stage1`` and ``evaluate_stage2`` are
the functions of integrations/openevolve/evaluator.py. Loading it checks the set-up once (and raises
``BlisSetupError`` when blis cannot evaluate: OpenEvolve then stops before the search, showing blis's error line).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

_SHARED = Path(__file__).resolve().parent.parent / "evaluator.py"
_NAME = "blis_openevolve_evaluator"


def _load() -> Any:
    module = sys.modules.get(_NAME)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(_NAME, str(_SHARED))
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s" % _SHARED)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    spec.loader.exec_module(module)
    return module


_shared = _load()
evaluate = _shared.evaluate
evaluate_stage1 = _shared.evaluate_stage1
evaluate_stage2 = _shared.evaluate_stage2
evaluate_program = _shared.evaluate_program
check_setup = _shared.check_setup
BlisSetupError = _shared.BlisSetupError

__all__ = ["evaluate", "evaluate_stage1", "evaluate_stage2", "evaluate_program", "check_setup", "BlisSetupError"]
