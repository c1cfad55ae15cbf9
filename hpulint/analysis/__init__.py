"""The analysis: facts every rule needs, for one file and across the project.

- :mod:`names`: the APIs hpulint knows, helpers on libcst names;
- :mod:`values`: the value lattice (tensor, host value, model...) as expressions (written to the
  summaries by :mod:`value_json`); :mod:`resolve`: their meaning, asked of the project or of a
  file's facts;
- :mod:`build`: expression -> value at a point of the walk;
- :mod:`walker` (with its handlers in :mod:`walk_defs`, :mod:`walk_flow`, :mod:`walk_bind` (assignments),
  :mod:`walk_uses` (calls, attributes, names), :mod:`walk_notes` and shared helpers in :mod:`walker_base`), :mod:`loops`, :mod:`guards`, :mod:`state`: the walk's
  bookkeeping;
- :mod:`summary`: what a file tells the project; :mod:`project` (its callers in :mod:`call_sites`), :mod:`link` (with
  :mod:`link_targets` for targets and compiled regions): the project linked across files, to a
  fixed point; :mod:`facts`: one file's recorded window onto it;
- :mod:`core`: :class:`Analysis`, the interface rules ask.

Submodules import libcst only where they need it; ``import hpulint.analysis`` alone does not.
"""
from __future__ import annotations

_EXPORTS = {
    "Analysis": "hpulint.analysis.core",
    "Here": "hpulint.analysis.core",
    "code": "hpulint.analysis.syntax",
    "dotted": "hpulint.analysis.syntax",
    "last_name": "hpulint.analysis.syntax",
    "names_in": "hpulint.analysis.syntax",
}


def analysis_handlers() -> tuple:
    """(enter, leave): node type -> the Analysis method the engine calls with (analysis, node)."""
    from hpulint.analysis.walker import ENTER, LEAVE

    return ENTER, LEAVE


def __getattr__(name: str):
    import importlib

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hpulint.analysis' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["Analysis", "Here", "analysis_handlers", "code", "dotted", "last_name", "names_in"]
