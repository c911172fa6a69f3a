"""Stand-in for GEPA as released now (tests only; see ../README.md)."""

from .api import optimize  # noqa: F401
from .core.adapter import EvaluationBatch  # noqa: F401

__version__ = "0.1.4-fake"
