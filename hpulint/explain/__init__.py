"""``hpulint explain LOG...``: the logs a run already wrote, mapped to rules, lines and fixes.

One parser per format (:mod:`.dynamo`, :mod:`.xla`, :mod:`.gaudi`); a log may hold several
(a script run with ``PT_XLA_DEBUG=1`` that also prints ``metrics_report()``). Events with the same
cause at the same line are counted together. :mod:`.mapping` finds each event's source line on
disk and the static findings that cover it; :mod:`.render` writes text, json, sarif or github.
"""
from __future__ import annotations

from pathlib import Path

from hpulint.explain import dynamo, gaudi, xla
from hpulint.explain.mapping import Sources, place
from hpulint.explain.model import Event, LogError, LogReport

__all__ = ["explain_logs", "read_log", "Event", "LogReport", "LogError"]

FORMATS = (
    ("Dynamo (TORCH_LOGS)", dynamo),
    ("PyTorch/XLA", xla),
    ("Gaudi metrics", gaudi),
)
KNOWN = ("Dynamo's TORCH_LOGS=recompiles,graph_breaks output, PyTorch/XLA's PT_XLA_DEBUG analysis, "
         "pt-xla-profiler lines or metrics_report(), Gaudi's PT_HPU_METRICS_FILE JSON or printed "
         "graph_compilation metrics")


def read_log(path: str) -> LogReport:
    """Parse one log; LogError when it cannot be read or has no format hpulint knows."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror or exc}") from None
    text = data.decode("utf-8", errors="replace")
    report = LogReport(path)
    if not text.strip():
        report.notes.append("the log is empty")
        return report
    for name, module in FORMATS:
        if module.sniff(text):
            report.formats.append(name)
            if module is dynamo:
                report.events += module.parse(text, path)
            else:
                report.events += module.parse(text, path, report.notes)
    if not report.formats:
        raise LogError(f"{path}: not a log hpulint can read (expected {KNOWN})")
    return report


def _group(events: list) -> list:
    out: dict = {}
    for e in events:
        key = e.group_key()
        if key in out:
            first = out[key]
            first.count += e.count
            first.last_text = e.text
        else:
            out[key] = e
    return list(out.values())


def explain_logs(paths: list, roots: list = (), lint: bool = True) -> tuple:
    """([LogReport], [LogError]) for the logs; every event placed, classified and checked."""
    reports, errors = [], []
    sources = Sources(list(roots))
    for path in paths:
        try:
            report = read_log(path)
        except LogError as exc:
            errors.append(exc)
            continue
        for e in report.events:
            place(e, sources, lint=False)  # the rule first (it can depend on the source line)
        report.events = _group(report.events)
        for e in report.events:
            place(e, sources, lint=lint)
        reports.append(report)
    return reports, errors
