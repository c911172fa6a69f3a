"""Stand-in for OpenEvolve 0.4.x (tests only; see ../README.md)."""

__version__ = "0.4.0-fake"
