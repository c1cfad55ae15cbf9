"""The base class every rule derives from.

A rule declares its code, name, the substrings a file must contain for the rule to possibly
match (``triggers``: a file with none of them is not even parsed when linted on its own), and
libcst-style ``visit_<Node>`` / ``leave_<Node>`` methods. The engine walks each file once and
calls those methods; the rule reads facts from ``self.an`` (:class:`hpulint.analysis.Analysis`)
and calls :meth:`Rule.report`. A rule that knows from the file's text that one of its methods has
nothing to do there sets it to None on the instance in ``__init__``: the walk does not call it.

Most reports are deferred: ``when`` is a zero-argument callable evaluated after the whole
project has been linked (when the analysis knows what values are, which loops are step loops
and which functions are hot). It returns ``None`` to drop the report, or a short text that
fills ``{why}`` in the message. ``fix`` may be a Fix, or a zero-argument callable that builds
one (or returns None) at that time.
"""
from __future__ import annotations

from typing import Callable, ClassVar, Optional

import libcst as cst

from hpulint.model import Fix


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `hpulint rule --all`
    triggers: ClassVar[tuple] = ()
    fix_safety: ClassVar[Optional[str]] = None  # None, "safe", "unsafe" or "safe or unsafe"
    # Only on by default when the code targets this device (explicit selection enables it).
    default_target: ClassVar[Optional[str]] = None
    # A lazy-mode rule: quiet in code Dynamo traces (a compiled region) and in code that runs
    # eagerly next to compiled code (the compile rules HPU012-HPU017 cover those).
    lazy_mode_only: ClassVar[bool] = False

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.an = ctx.analysis

    def report(self, node: cst.CSTNode, message: str, *, fix=None,
               when: Optional[Callable[[], Optional[str]]] = None) -> None:
        self.ctx.add(self, node, message, fix, when)

    def finish(self) -> None:
        """Called once the project is linked, before the deferred reports are evaluated."""


__all__ = ["Rule", "Fix"]
