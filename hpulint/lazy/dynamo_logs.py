"""Dynamo's log records, read: the graph break's reason, a recompilation's guard failures and the
user source each guard came from (``TORCH_LOGS=graph_breaks,recompiles`` text, torch 2.13)."""
from __future__ import annotations

import os
import re
import sys

_BREAK_AT = re.compile(r"(?:Graph break in user code|Graph break \(user stack suppressed due to "
                       r"duplicate graph break\) in user code) at (.+?):(\d+)\n")
_REASON = re.compile(r"Graph Break Reason: (.*)")
_SKIP = re.compile(r"torch\.compile will skip tracing the frame (\S+) \((.+?):(\d+)\)")
_SKIP_AT = re.compile(r'File "(.+?)", line (\d+)')
_RECOMPILING = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)\n")
_LIMIT = re.compile(r"torch\._dynamo hit config\.(\w+) \((\d+)\)\s+function: '(.+?)' \((.+?):(\d+)\)"
                    r"\s+last reason: (.*?)\n", re.S)


def _reason(message):
    """The graph break's own reason (Dynamo puts a generic "Encountered graph break when
    attempting to trace CALL ..." line first when the break happened in a call)."""
    m = _REASON.search(message)
    if not m:
        return ""
    lines = [x.strip() for x in message[m.start(1):].splitlines()]
    lines = [x for x in lines if x]
    for i, line in enumerate(lines[:4]):
        if line.startswith(("Encountered graph break when attempting", "Failed to handle graph "
                            "break gracefully", "Graph break encountered")):
            continue
        return line
    return lines[0] if lines else ""


_FAILURE = re.compile(r"^(\d+/\d+): (.*?)(?:\s+# (.*?)\s+# (.+?):(\d+) in (\S+).*)?$")


def guard_failures(message):
    """The guard failures of a ``Recompiling function`` message, the newest cache entry first:
    ``{"entry": "0/3", "guard": "L['n'] == 3", "file": ..., "line": ..., "code": ...}`` (file,
    line and code: the user source the guard came from, when Dynamo names it)."""
    out = []
    for raw in message.splitlines():
        text = raw.strip()
        if not text.startswith("- "):
            continue
        m = _FAILURE.match(text[2:].strip())
        if not m:
            continue
        item = {"entry": m.group(1), "guard": m.group(2).strip()}
        if m.group(4):
            code, file, line = m.group(3).strip(), m.group(4), int(m.group(5))
            # a guard specialised at its first use (`b, n, _ = x.shape`, or `F.embedding` in
            # torch's own code) names the user line that needed it after that
            # (`... and if seq_len > self.cached:  # file:28 in forward`): that line is the cause
            later = [s for s in _SOURCE.finditer(text) if not _torch_file(s.group(2))]
            if later:
                code, file, line = later[-1].group(1).strip(), later[-1].group(2), int(later[-1].group(3))
            item.update({"code": code, "file": file, "line": line})
        out.append(item)
    return out


_SOURCE = re.compile(r"(?:# |\) and )([^#]*?)\s+# (\S+?):(\d+) in ")


def _torch_file(short: str) -> bool:
    """A file name as Dynamo shortens it that is torch's own (`nn/modules/sparse.py`)."""
    import torch

    return not os.path.isabs(short) and os.path.exists(os.path.join(os.path.dirname(torch.__file__), short))


def _shortened(path):
    """The file name as Dynamo prints it in a guard's comment (``shorten_filename``: the
    directories the file shares with torch's own are dropped)."""
    from torch.utils._traceback import shorten_filename

    return shorten_filename(path)


def _module_files():
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__file__", None)
        if isinstance(name, str):
            yield name


def _full_path(failure, files=(), cache=None):
    """Dynamo shortens the file name in a guard's comment: give the full name back.

    The guard's source is usually the compiled function's file, but not always (a
    ``functools.partial`` is compiled through torch's own wrapper, and the guard is on the
    wrapped function's line): ``files`` (the function's file, the user frames' files) are tried
    first, then the files of the modules loaded."""
    short = failure.get("file")
    if not short or os.path.isabs(short):
        return failure
    full = cache.get(short) if cache is not None else None
    if full is None:
        full = next((f for f in files if f and _shortened(f) == short), None) or \
            next((f for f in _module_files() if _shortened(f) == short), None)
    if full:
        failure["file"] = full
        if cache is not None:
            cache[short] = full
    return failure


def first_sourced(failures) -> dict:
    """The newest guard failure that names a user source line (a guard such as a
    ``requires_grad`` mismatch comes with none), else the newest one; {} when there is none."""
    return next((f for f in failures if f.get("line")), failures[0] if failures else {})
