"""The base class every rule derives from.

A rule declares its code, name, the substrings a file must contain for the rule to possibly
match (``triggers``: a file with none of them is not even parsed), and libcst-style
``visit_<Node>`` / ``leave_<Node>`` methods. The engine walks each file once and calls those
methods; the rule reads facts from ``self.an`` (:class:`hpulint.analysis.Analysis`) and calls
:meth:`Rule.report`.

A report may be deferred: ``when`` is a zero-argument callable evaluated after the whole file
has been read (when the analysis knows which loops are step loops and which functions are hot).
It returns ``None`` to drop the report, or a short text that fills ``{why}`` in the message.
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
    # Only on by default when the file targets this device (explicit selection enables it).
    default_target: ClassVar[Optional[str]] = None

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.an = ctx.analysis

    def report(self, node: cst.CSTNode, message: str, *, fix: Optional[Fix] = None,
               when: Optional[Callable[[], Optional[str]]] = None) -> None:
        self.ctx.add(self, node, message, fix, when)

    def finish(self) -> None:
        """Called once after the walk, when every fact of the file is known."""
