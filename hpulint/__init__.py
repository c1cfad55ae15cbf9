"""hpulint: find and fix PyTorch habits that recompile or sync every step on lazy devices.

The linter never imports torch; ``hpulint.lazy`` (the verifier) does, and only when used.
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__", "lint_source", "Finding", "Config"]


def __getattr__(name: str):
    # Lazy: `import hpulint` stays cheap (no libcst) until something is used.
    if name == "lint_source":
        from hpulint.engine import lint_source

        return lint_source
    if name == "Finding":
        from hpulint.model import Finding

        return Finding
    if name == "Config":
        from hpulint.config import Config

        return Config
    if name == "lazy":
        import importlib

        return importlib.import_module("hpulint.lazy")
    raise AttributeError(f"module 'hpulint' has no attribute {name!r}")
