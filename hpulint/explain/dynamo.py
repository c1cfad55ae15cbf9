"""Dynamo's logs (``TORCH_LOGS=recompiles,graph_breaks``, and its recompile-limit warning).

Each line may carry the glog prefix of ``torch._logging``
(``V1123 08:42:27.571000 14279 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] ...``), which
is dropped. Events:

- ``Recompiling function F in FILE:LINE`` and its first guard failure (``- 0/3: i == 3``) with
  the user stack under it;
- ``torch._dynamo hit config.recompile_limit (N)`` (``cache_size_limit`` in older releases),
  its ``function:`` and ``last reason:``;
- ``Graph break in user code at FILE:LINE`` (also the ``user stack suppressed`` duplicates) and
  its ``Graph Break Reason`` (``Reason:`` in older releases).
"""
from __future__ import annotations

import re

from hpulint.explain.model import Event, Frame

NAME = "dynamo"
_PREFIX = re.compile(r"^[VIWEDC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] (?:\[[^\]]*\] )?(?:\[__\w+\] )?")
_RECOMPILING = re.compile(r"^Recompiling function (\S+) in (.+):(\d+)\s*$")
_GUARD = re.compile(r"^\s*-\s*\d+/\d+: (.*?)(?:\s{2,}#.*)?$")
_FRAME = re.compile(r'^\s*-?\s*File "([^"]+)", line (\d+), in (\S+)')
_LIMIT = re.compile(r"torch\._dynamo hit config\.(recompile_limit|cache_size_limit) \((\d+)\)")
_LIMIT_FUNCTION = re.compile(r"^\s*function: '([^']+)' \((.+):(\d+)\)")
_LAST_REASON = re.compile(r"^\s*last reason: \d+/\d+: (.*?)(?:\s{2,}#.*)?$")
_BREAK = re.compile(r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?in user code at (.+):(\d+)\s*$")
_REASON = re.compile(r"^(?:Graph Break Reason|Reason): (.*)$")
_SKIP_REASON = re.compile(r"^Encountered graph break when attempting to trace|^Unsupported: $")


def sniff(text: str) -> bool:
    if any(s in text for s in ("Recompiling function ", "Graph break in user code at",
                               "Graph break (user stack suppressed", "torch._dynamo hit config.")):
        return True
    # torch._logging's own lines (TORCH_LOGS=guards, dynamo...): a Dynamo log with no event
    return bool(re.search(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ torch/_dynamo/\S+\] ", text, re.M))


def _message(line: str) -> str:
    return _PREFIX.sub("", line.rstrip("\r\n"), count=1)


def parse(text: str, log: str) -> list:
    lines = [_message(ln) for ln in text.splitlines()]
    events = []
    current = None
    state = ""
    for n, msg in enumerate(lines, 1):
        m = _RECOMPILING.match(msg)
        if m:
            current = Event(NAME, "recompilation", "", log, n, [Frame(m.group(2), int(m.group(3)), m.group(1))])
            current.function = m.group(1)
            events.append(current)
            state = "guards"
            continue
        m = _LIMIT.search(msg)
        if m:
            current = Event(NAME, "recompile limit", f"hit config.{m.group(1)} ({m.group(2)}): the function "
                            "runs uncompiled from here on", log, n)
            events.append(current)
            state = "limit"
            continue
        m = _BREAK.match(msg)
        if m:
            current = Event(NAME, "graph break", "", log, n, [Frame(m.group(1), int(m.group(2)))])
            events.append(current)
            state = "break"
            continue
        if current is None:
            continue
        if state == "guards":
            g = _GUARD.match(msg)
            if g and not current.text:
                current.text = f"guard failed: {g.group(1).strip()}"
                state = "guard-stack"
                continue
        if state == "guard-stack":
            f = _FRAME.match(msg)
            if f:
                current.frames.append(Frame(f.group(1), int(f.group(2)), f.group(3)))
                continue
            if _GUARD.match(msg):  # the older cache entries' failures: not this recompilation
                state = "done"
                continue
        if state == "limit":
            f = _LIMIT_FUNCTION.match(msg)
            if f:
                current.frames = [Frame(f.group(2), int(f.group(3)), f.group(1))]
                current.function = f.group(1)
                continue
            r = _LAST_REASON.match(msg)
            if r:
                current.text += f"; last guard failed: {r.group(1).strip()}"
                continue
            f = _FRAME.match(msg)
            if f:
                current.frames.append(Frame(f.group(1), int(f.group(2)), f.group(3)))
                continue
        if state == "break":
            r = _REASON.match(msg.strip())
            if r:
                reason = r.group(1).strip()
                if reason and not _SKIP_REASON.match(reason):
                    current.text = reason
                    state = "break-detail"
                else:
                    state = "break-title"
                continue
        if state == "break-title" and msg.strip():
            current.text = msg.strip()
            state = "break-detail"
            continue
        if state == "break-detail":
            s = msg.strip()
            if s.startswith("Explanation:") and ":" not in current.text:
                current.text += ": " + s[len("Explanation:"):].strip()
    for e in events:
        if not e.text:
            e.text = "recompiled" if e.kind == "recompilation" else e.kind
    return events
