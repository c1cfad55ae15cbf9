"""PyTorch/XLA's own reports: ``PT_XLA_DEBUG`` analysis blocks, ``pt-xla-profiler`` lines, and the
text of ``torch_xla.debug.metrics.metrics_report()``.

Analysis blocks (``PT_XLA_DEBUG=1`` or ``PT_XLA_DEBUG_LEVEL``; the format of
``torch_xla/csrc/debug_util.cpp``), every line prefixed with ``Compilation Analysis:``,
``Execution Analysis:`` or ``Unexpected Execution Analysis:``::

    Compilation Analysis: Compilation Cause
    Compilation Analysis:   most likely user code trying to access tensor value before torch_xla.sync
    Compilation Analysis: Graph Info:
    Compilation Analysis:   Graph Hash: 2b6a...
    Compilation Analysis: Python Frame Triggered Execution:
    Compilation Analysis:   train (/path/train.py:31)

A host read (the "access tensor value" cause) is one event at its Python frame; compilations at
one step marker with more than one graph hash are recompilations there. With ``PT_XLA_DEBUG=1``
the run ends with an "Unlowered Op usage summary": ``FRAME (count=N)`` and the Python frames of
each place that ran an op on the CPU (mostly ``_local_scalar_dense``, a host read), which gives
each read's count for the whole run. The profiler lines
(``pt-xla-profiler: CompileTime too frequent: 21 counts during 11 steps``) and a metrics report
(``Metric: CompileTime`` / ``TotalSamples``, ``Counter: MarkStep`` / ``Value``) have no source
line: they are events of the whole run. The report is judged as ``pt-xla-profiler`` judges it
(torch_xla/csrc/runtime/metrics_analysis.cpp): CompileTime more than once every two steps after
10 steps, TransferFromDeviceTime more than once every two steps, ``aten::`` counters (ops run on
the CPU) other than ``_local_scalar_dense``.
"""
from __future__ import annotations

import re
from collections import OrderedDict

from hpulint.explain.model import Event, Frame

NAME = "pytorch-xla"
_ANALYSIS = re.compile(r"^(Compilation|Execution|Unexpected Execution) Analysis: ?(.*)$")
_PY_FRAME = re.compile(r"^\s+(\S.*?) \((.+):(\d+)\)\s*$")
_PROFILER = re.compile(r"pt-xla-profiler: (\w+) too frequent: (\d+) counts during (\d+) steps")
_NOT_LOWERED = re.compile(r"pt-xla-profiler: Op\(s\) not lowered: (.*?)\s*Please open")
_METRIC = re.compile(r"^(Metric|Counter): (\S+)\s*$")
_FIELD = re.compile(r"^\s+(TotalSamples|Value): (\d+)")
_LIBRARY = re.compile(r"(^|/)(site-packages|dist-packages)/|/torch_xla/|/torch/|^<")
HOST_READ = "most likely user code trying to access tensor value"


def sniff(text: str) -> bool:
    return ("Compilation Analysis:" in text or "Execution Analysis:" in text or "pt-xla-profiler:" in text
            or bool(re.search(r"^Metric: CompileTime\s*$", text, re.M)))


def user_frames(frames: list) -> list:
    return [f for f in frames if not _LIBRARY.search(f.file)]


def _blocks(lines: list) -> list:
    """[(kind, first line number, cause lines, graph hash, frames)] for every analysis block."""
    blocks, cur = [], None
    section = ""
    for n, raw in enumerate(lines, 1):
        m = _ANALYSIS.match(raw.rstrip("\r\n"))
        if not m:
            continue
        kind, body = m.group(1), m.group(2)
        if body.startswith("====="):
            if cur is None:
                cur = {"kind": kind, "line": n, "cause": [], "hash": None, "frames": []}
            else:
                blocks.append(cur)
                cur = None
            section = ""
            continue
        if cur is None:
            continue
        s = body.strip()
        if s.endswith("Cause"):
            section = "cause"
        elif s.startswith("Graph Info"):
            section = "info"
        elif s.startswith("Python Frame Triggered Execution"):
            section = "frames"
        elif s.startswith("-----"):
            section = ""
        elif section == "cause":
            cur["cause"].append(s)
        elif section == "info" and s.startswith("Graph Hash:"):
            cur["hash"] = s.split(":", 1)[1].strip()
        elif section == "frames":
            f = _PY_FRAME.match(body)
            if f:
                cur["frames"].insert(0, Frame(f.group(2), int(f.group(3)), f.group(1)))
    if cur is not None:
        blocks.append(cur)
    return blocks


def parse(text: str, log: str, notes: list) -> list:
    lines = text.splitlines()
    events = _analysis_events(_blocks(lines), log, notes)
    for n, raw in enumerate(lines, 1):
        m = _PROFILER.search(raw)
        if m:
            events.append(Event(NAME, "too frequent", f"{m.group(1)} too frequent: {m.group(2)} counts during "
                                f"{m.group(3)} steps", log, n))
            events[-1].metric = m.group(1)
            continue
        m = _NOT_LOWERED.search(raw)
        if m:
            ops = [o.strip() for o in m.group(1).split(",") if o.strip()]
            events.append(Event(NAME, "cpu fallback", "ops not lowered to XLA (run on the CPU): " + ", ".join(ops),
                                log, n))
            events[-1].metric = " ".join(ops)
    summary = _frame_summary(lines, log)
    if summary:  # its counts are per site for the whole run: they replace the analysis' ones
        sites = {(e.site.file, e.site.line) for e in summary if e.site}
        events = [e for e in events if not (e.kind == "host sync" and e.site
                                            and (e.site.file, e.site.line) in sites)] + summary
    profiled = {e.metric for e in events if e.kind == "too frequent"}
    events += [e for e in _report_events(lines, log, notes) if e.metric not in profiled]
    return events


def _analysis_events(blocks: list, log: str, notes: list) -> list:
    events = []
    compiles = [b for b in blocks if b["kind"] == "Compilation"]
    executions = [b for b in blocks if b["kind"] != "Compilation"]
    if blocks:
        notes.append(f"{len(compiles)} compilation{'s' * (len(compiles) != 1)} and {len(executions)} "
                     f"execution{'s' * (len(executions) != 1)} analysed")
    # host reads: one per execution (a compilation for the same read comes with one)
    reads = [b for b in (executions or compiles) if any(HOST_READ in c for c in b["cause"])]
    for b in reads:
        frames = user_frames(b["frames"])
        events.append(Event(NAME, "host sync", "user code read a tensor's value before the step marker "
                            f"({b['kind'].lower()} analysis)", log, b["line"], frames))
    # compilations at one step marker: more than one graph there is a recompilation
    by_site = OrderedDict()
    for b in compiles:
        if any(HOST_READ in c for c in b["cause"]):
            continue
        frames = user_frames(b["frames"])
        site = (frames[-1].file, frames[-1].line) if frames else None
        by_site.setdefault(site, []).append(b)
    for site, group in by_site.items():
        hashes = list(OrderedDict.fromkeys(b["hash"] for b in group))
        if len(hashes) < 2 or site is None:
            continue
        first = group[1]
        cause = " ".join(group[0]["cause"]) or "a step marker"
        e = Event(NAME, "recompilation", f"{len(hashes)} different graphs compiled at this step marker "
                  f"({cause})", log, first["line"], user_frames(first["frames"]))
        e.count = len(hashes) - 1
        events.append(e)
    return events


def _frame_summary(lines: list, log: str) -> list:
    """The "Unlowered Op usage summary" ``PT_XLA_DEBUG=1`` logs at exit
    (torch_xla/debug/frame_parser_util.py): ``FRAME (count=N):`` and the Python frames, innermost
    first, of each place that ran an op on the CPU, mostly ``_local_scalar_dense``: a host read."""
    events, inside, block = [], False, None
    for n, raw in enumerate(lines, 1):
        msg = re.sub(r"^(WARNING:)?pt-xla-profiler: ?", "", raw.rstrip("\r\n"), count=1)
        if msg.startswith("Unlowered Op usage summary"):
            inside = True
            continue
        if not inside:
            continue
        m = re.match(r"^FRAME \(count=(\d+)\):", msg)
        if m:
            block = Event(NAME, "host sync", "an op ran on the CPU here (PyTorch/XLA's unlowered op usage "
                          "summary; mostly _local_scalar_dense: a tensor's value read on the host)", log, n)
            block.count = int(m.group(1))
            events.append(block)
            continue
        f = _PY_FRAME.match(msg)
        if f and block is not None:
            block.frames.insert(0, Frame(f.group(2), int(f.group(3)), f.group(1)))
        elif msg.startswith("====") and events:
            break
    out = []
    for e in events:  # a block of only an op's name, or of library frames, has no place to show
        e.frames = user_frames(e.frames)
        if e.frames:
            out.append(e)
    return out


def _report_events(lines: list, log: str, notes: list) -> list:
    values, where = {}, {}
    name = None
    for n, raw in enumerate(lines, 1):
        m = _METRIC.match(raw.rstrip("\r\n"))
        if m:
            name = (m.group(1), m.group(2))
            where.setdefault(name, n)
            continue
        f = _FIELD.match(raw)
        if f and name is not None:
            values[name] = int(f.group(2))  # the last report in the log wins
            name = None
    if not values:
        return []
    steps = values.get(("Counter", "MarkStep"), 0)
    compiles = values.get(("Metric", "CompileTime"), 0)
    transfers = values.get(("Metric", "TransferFromDeviceTime"), values.get(("Metric", "TransferFromServerTime"), 0))
    notes.append(f"metrics report: {compiles} compilations, {transfers} transfers to the host, {steps} step markers")
    events = []
    if steps > 10 and compiles / steps > 0.5:
        e = Event(NAME, "too frequent", f"CompileTime too frequent: {compiles} counts during {steps} steps "
                  "(metrics report)", log, where[("Metric", "CompileTime")])
        e.metric = "CompileTime"
        events.append(e)
    if steps and transfers / steps > 0.5:
        key = ("Metric", "TransferFromDeviceTime") if ("Metric", "TransferFromDeviceTime") in values else (
            "Metric", "TransferFromServerTime")
        e = Event(NAME, "too frequent", f"{key[1]} too frequent: {transfers} counts during {steps} steps "
                  "(metrics report)", log, where[key])
        e.metric = key[1]
        events.append(e)
    for (kind, counter), value in values.items():
        if kind == "Counter" and counter.startswith("aten::") and counter != "aten::_local_scalar_dense":
            e = Event(NAME, "cpu fallback", f"{counter} ran on the CPU {value} time{'s' * (value != 1)} "
                      "(metrics report)", log, where[(kind, counter)])
            e.metric = counter
            e.count = value
            events.append(e)
    return events
