"""Text and JSON reports of a ``--profile compile`` run (real Dynamo; no torch import here)."""
from __future__ import annotations

import json
import os

from .compile_confirm import guard_kind
from .dynamo_logs import first_sourced

_STATUS = {
    "ok": "ran to the end",
    "stopped": "stopped early",
    "exit": "exited early",
    "error": "failed",
    "timeout": "timed out",
    "crashed": "the replay process died",
    "internal": "hpulint failed",
}


def as_json(run: dict, findings=None, unexplained=None) -> dict:
    data = {
        "profile": "compile",
        "compiles": run.get("compiles"),
        "graph_breaks": run.get("graph_breaks"),
        "recompiles": run.get("recompiles"),
        "fallbacks": run.get("fallbacks"),
        "events": run.get("events", []),
        "findings": findings or [],
        "unexplained": unexplained or [],
        "script": run.get("script"),
        "status": run.get("status"),
        "torch": run.get("torch"),
        "backend": run.get("backend"),
        "skipped_frames": run.get("skipped_frames"),
        "frames": run.get("frames"),
        "mark_steps": run.get("mark_steps"),
        "wall_time": run.get("wall_time"),
        "exit_code": run.get("exit_code"),
        "error": run.get("error"),
        "stopped": run.get("stopped"),
    }
    for key in ("stdout", "stderr", "lint_error"):
        if key in run:
            data[key] = run[key]
    return data


def format_json(run, findings=None, unexplained=None) -> str:
    return json.dumps(as_json(run, findings, unexplained), indent=2)


def _show(path):
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _same(a, b):
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def _where(file, line, script):
    if not line:
        return "?"
    if file and script and not _same(file, script):
        return f"{_show(file)}:{line}"
    return f"line {line}"


def _guard(failure, script) -> str:
    if not failure:
        return "?"
    text = failure.get("guard", "?")
    if failure.get("line"):
        text += f" ({_where(failure.get('file'), failure['line'], script)})"
    return text


def _recompile_groups(run):
    groups = {}
    for e in run.get("events", []):
        if e.get("kind") != "recompile":
            continue
        first = first_sourced(e.get("guard_failures") or [])
        key = (e.get("function"), e.get("file"), e.get("def_line"), e.get("call_file"),
               e.get("line"), guard_kind(first.get("guard", "")), first.get("line"))
        g = groups.setdefault(key, {"event": e, "count": 0, "first": first, "last": first})
        g["count"] += 1
        g["last"] = first
    return list(groups.values())


_RESUME = "torch_dynamo_resume_in_"


def _fn(name, file, line, script) -> str:
    """``f (line 3)``; Dynamo's resume functions as ``f after the graph break at line 6``."""
    if name and name.startswith(_RESUME) and "_at_" in name:
        base, _, at = name[len(_RESUME):].rpartition("_at_")
        return f"{base} after the graph break at {_where(file, at, script)}"
    return f"{name} ({_where(file, line, script)})"


def _plural(n, word):
    return f"{n} {word}{'s' * (n != 1)}"


def format_text(run: dict, findings=None, unexplained=None) -> str:
    script = run.get("script")
    shown = _show(script) if script else "?"
    torch_version = run.get("torch") or "?"
    lines = [f"hpulint verify {shown}  (profile compile, real Dynamo, torch {torch_version}, "
             f"backend {run.get('backend') or 'eager'})"]
    status = run.get("status")
    how = _STATUS.get(status, status)
    detail = ""
    if status in ("stopped", "timeout"):
        detail = f": {run.get('stopped') or (run.get('error') or {}).get('message', '')}"
    elif status == "exit":
        detail = f": sys.exit({run.get('exit_code')})"
    elif status in ("error", "crashed", "internal"):
        err = run.get("error") or {}
        where = f" at line {err['line']}" if err.get("line") else ""
        detail = f"{where}: {err.get('type', 'error')}: {err.get('message', '')}"
    wall = run.get("wall_time")
    lines.append(f"{how}{detail}" + (f" ({wall:.2f} s)" if isinstance(wall, (int, float)) else ""))
    if status == "internal":
        lines.append("  this is a bug in hpulint, not in the script (--format json has the details)")
    elif status == "error" and (run.get("error") or {}).get("traceback"):
        lines.append("")
        lines += ["  " + x for x in run["error"]["traceback"].rstrip().splitlines()]
    if status in ("crashed", "timeout") and run.get("stderr"):
        lines.append("  last output of the script:")
        lines += ["    " + x for x in run["stderr"].splitlines()[-10:]]

    def n(v):
        return "n/a" if v is None else str(v)

    lines.append("")
    lines.append(f"  graphs compiled    {n(run.get('compiles'))}")
    lines.append(f"  graph breaks       {n(run.get('graph_breaks'))}")
    lines.append(f"  recompilations     {n(run.get('recompiles'))}")
    lines.append(f"  eager fallbacks    {n(run.get('fallbacks'))}")
    if run.get("skipped_frames"):
        lines.append(f"  skipped functions  {run['skipped_frames']}")

    events = run.get("events", [])
    breaks = [e for e in events if e.get("kind") == "graph_break"]
    if breaks:
        lines.append("")
        lines.append(f"graph breaks ({run.get('graph_breaks')}):")
        for e in breaks:
            tail = "; the whole function runs eagerly" if e.get("frame_skipped") else ""
            called = f" (called at {_where(e['call_file'], e['call_line'], script)})" if e.get("call_line") else ""
            lines.append(f"  {e.get('count', 1):>3} x at {_where(e.get('file'), e.get('line'), script)}{called}: "
                         f"{e.get('reason') or '?'}{tail}")
    groups = _recompile_groups(run)
    if groups:
        lines.append("")
        lines.append(f"recompilations ({run.get('recompiles')}):")
        for g in groups:
            e = g["event"]
            fn = _fn(e.get("function"), e.get("file"), e.get("def_line"), script)
            call = f" called at {_where(e.get('call_file'), e.get('line'), script)}" if e.get("line") else ""
            guard = _guard(g["first"], script)
            if g["count"] > 1 and g["last"].get("guard") != g["first"].get("guard"):
                guard = f"{g['first'].get('guard')} ... {_guard(g['last'], script)}"
            lines.append(f"  {g['count']:>3} x {fn}{call}: guard failed: {guard}")
    falls = [e for e in events if e.get("kind") == "fallback"]
    if falls:
        lines.append("")
        lines.append(f"eager fallbacks ({len(falls)}):")
        for e in falls:
            fn = _fn(e.get("function"), e.get("file"), e.get("def_line"), script)
            call = f" called at {_where(e.get('call_file'), e.get('line'), script)}" if e.get("line") else ""
            lines.append(f"  {fn}{call}: {e.get('limit_name', 'recompile_limit')} ({e.get('limit')}) "
                         f"reached, last guard failure: {_guard(e.get('last_reason'), script)}; "
                         f"it runs eagerly from then on")

    if findings is not None:
        lines.append("")
        if run.get("lint_error"):
            lines.append(f"findings: the linter could not run: {run['lint_error']}")
        elif not findings:
            lines.append("findings: none")
        else:
            lines.append(f"findings ({len(findings)}):")
            for f in findings:
                lines.append(f"  {f['code']} line {f['line']}: {f['status']}: {f.get('evidence', '')}")
    if unexplained is not None:
        lines.append("")
        if not unexplained:
            lines.append("not explained by any finding: nothing")
        else:
            lines.append("not explained by any finding:")
            for u in unexplained:
                if u["kind"] == "graph_break":
                    lines.append(f"  {u['count']:>3} x graph break at "
                                 f"{_where(u.get('file'), u.get('line'), script)}: {u.get('reason')}")
                else:
                    what = "recompilation" if u["kind"] == "recompile" else "eager fallback"
                    lines.append(f"  {u['count']:>3} x {what} of "
                                 f"{_fn(u.get('function'), u.get('file'), u.get('line'), script)}: "
                                 f"{_guard(u.get('first'), script)}")
    if run.get("compiles") is not None and status in ("ok", "stopped"):
        lines.append("")
        lines.append(f"summary: {_plural(run['compiles'], 'graph')}, "
                     f"{_plural(run.get('graph_breaks') or 0, 'graph break')}, "
                     f"{_plural(run.get('recompiles') or 0, 'recompilation')} and "
                     f"{_plural(run.get('fallbacks') or 0, 'eager fallback')}")
    return "\n".join(lines) + "\n"
