"""What ``hpulint explain`` reads out of a log: events, each mapped to a rule and a source line."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Frame:
    file: str
    line: int
    function: str = ""


@dataclass
class Event:
    """One thing a log says happened (a recompilation, a graph break, a host read...)."""

    engine: str  # "dynamo", "pytorch-xla" or "gaudi"
    kind: str  # "recompilation", "recompile limit", "graph break", "host sync", "too frequent"...
    text: str  # what the log says, on one line
    log: str
    log_line: int  # 1-based, where the event starts in the log
    frames: list = field(default_factory=list)  # user frames, outermost first; the last is the site
    count: int = 1
    function: str = ""  # the compiled function, for Dynamo
    metric: str = ""  # the metric or op a whole-run event is about
    last_text: str = ""  # the last of several grouped events' texts, when it differs
    rule: Optional[str] = None  # the hpulint rule that explains it
    why: str = ""  # why that rule
    fix: str = ""
    # the source line, once found on disk
    file: Optional[str] = None
    line: Optional[int] = None
    source: str = ""  # the text of that line
    static: list = field(default_factory=list)  # [(code, line, col)] static findings that cover it
    coverage: str = ""  # "covered", "not covered", "no source" or "no line in the log"
    coverage_note: str = ""

    @property
    def site(self) -> Optional[Frame]:
        return self.frames[-1] if self.frames else None

    def group_key(self) -> tuple:
        site = self.site
        return (self.engine, self.kind, self.rule, site.file if site else None, site.line if site else None,
                _shape(self.text))


def _shape(text: str) -> str:
    """The text with its numbers blanked: `i == 0` and `i == 3` are one kind of event."""
    import re

    return re.sub(r"-?\d+(\.\d+)?", "N", text)


@dataclass
class LogReport:
    path: str
    formats: list = field(default_factory=list)  # the formats recognised in it
    events: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what the log says besides events (counts...)


class LogError(Exception):
    """A log hpulint cannot read: unreadable, or no format it knows."""
