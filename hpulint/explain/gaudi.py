"""Intel Gaudi's reports: the metrics file (``PT_HPU_METRICS_FILE``) and the printed metrics.

Written from Habana's documentation ("Handling Dynamic Shapes", the developer blog's "Detecting
frequent graph re-compilations" and "Optimizations of PyTorch Models"), not from a Gaudi run:

- the metrics file, JSON: a list of dumps, each naming its metric (``"metric_name"``) and its
  ``"statistics"`` (``TotalNumber``, ``TotalTime``...), or an object from metric name to its
  statistics. ``PT_HPU_METRICS_DUMP_TRIGGERS=process_exit,metric_change`` writes a dump each
  time a metric changes, so a ``graph_compilation`` count that still grows in the later dumps is
  a graph that keeps recompiling;
- ``print("graph_compilation: ", metric_global("graph_compilation").stats())`` lines, as the
  blog prints them every step: ``graph_compilation:  [('TotalNumber', 3), ('TotalTime', 420)...]``;
- CPU fallback lines (``ENABLE_CONSOLE=true LOG_LEVEL_PT_FALLBACK=1``):
  ``CPU fallback digamma : self=HPUBFloat16Type``.
"""
from __future__ import annotations

import ast
import json
import re

from hpulint.explain.model import Event

NAME = "gaudi"
_STATS_LINE = re.compile(r"graph_compilation:\s*(\[.*\]|\{.*\})\s*$")
_FALLBACK = re.compile(r"CPU fallback (\w+)\s*:")


def sniff(text: str) -> bool:
    return "graph_compilation" in text or bool(_FALLBACK.search(text))


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _stats(value) -> dict:
    """``{"TotalNumber": 3, ...}`` from a dict or a list of pairs."""
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, tuple)):
        return {k: v for k, v in (p for p in value if isinstance(p, (list, tuple)) and len(p) == 2)}
    return {}


def _dumps(data) -> list:
    """[(metric name, statistics)] in the order the file has them."""
    out = []
    if isinstance(data, dict):
        for name, value in data.items():
            if isinstance(value, (dict, list)):
                out.append((name, _stats(value.get("statistics", value) if isinstance(value, dict) else value)))
    elif isinstance(data, list):
        for entry in data:
            if isinstance(entry, dict):
                name = entry.get("metric_name") or entry.get("name")
                stats = entry.get("statistics", entry.get("stats", {}))
                if name:
                    out.append((name, _stats(stats)))
    return out


def parse(text: str, log: str, notes: list) -> list:
    data = _json(text)
    counts = []  # (log line, TotalNumber) of every graph_compilation dump or print
    fallbacks = {}
    if data is not None:
        for name, stats in _dumps(data):
            if name == "graph_compilation" and isinstance(stats.get("TotalNumber"), int):
                counts.append((1, stats["TotalNumber"]))
            if name == "cpu_fallback":
                for op, n in stats.items():
                    if isinstance(n, int) and op not in ("TotalNumber", "TotalTime", "AvgTime"):
                        fallbacks[op] = (1, n)
    else:
        for n, raw in enumerate(text.splitlines(), 1):
            m = _STATS_LINE.search(raw)
            if m:
                try:
                    stats = _stats(ast.literal_eval(m.group(1)))
                except (ValueError, SyntaxError):
                    continue
                if isinstance(stats.get("TotalNumber"), int):
                    counts.append((n, stats["TotalNumber"]))
                continue
            m = _FALLBACK.search(raw)
            if m:
                line, k = fallbacks.get(m.group(1), (n, 0))
                fallbacks[m.group(1)] = (line, k + 1)
    events = []
    if counts:
        total = counts[-1][1]
        notes.append(f"graph_compilation: {total} compilation{'s' * (total != 1)} in {len(counts)} "
                     f"report{'s' * (len(counts) != 1)}")
        # compilations that go on in the second half of the reports: the graph keeps changing
        half = counts[len(counts) // 2:]
        grew = [(ln, b - a) for (_, a), (ln, b) in zip(half, half[1:]) if b > a]
        if len(counts) >= 4 and grew:
            more = sum(d for _, d in grew)
            events.append(Event(NAME, "recompilation", f"graph_compilation still grows after {len(counts) // 2} "
                                f"of {len(counts)} reports: {more} more compilation{'s' * (more != 1)} "
                                f"(total {total})", log, grew[0][0]))
            events[-1].count = more
            events[-1].metric = "graph_compilation"
    for op, (line, n) in fallbacks.items():
        events.append(Event(NAME, "cpu fallback", f"{op} ran on the CPU {n} time{'s' * (n != 1)}", log, line))
        events[-1].metric = op
        events[-1].count = n
    return events
