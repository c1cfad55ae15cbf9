"""Text and JSON reports of a replay (no torch import here)."""
from __future__ import annotations

import json
import os

from .confirm import steps_estimate
from .replay_queries import _fmt

_STATUS = {
    "ok": "ran to the end",
    "stopped": "stopped early",
    "exit": "exited early",
    "error": "failed",
    "timeout": "timed out",
    "crashed": "the replay process died",
    "internal": "hpulint failed",
}


def too_frequent(run: dict) -> list:
    """PyTorch/XLA's pt-xla-profiler "too frequent" lines for these counts.

    torch_xla/csrc/runtime/metrics_analysis.cc: CompileTime is too frequent when there were
    more than 10 step markers (its warm-up) and more than 0.5 compilations per marker;
    TransferFromServerTime when there were more than 0.5 device-to-host transfers per marker.
    """
    out = []
    steps = run.get("mark_steps") or 0
    compiles = run.get("compiles") or 0
    syncs = run.get("syncs") or 0
    if steps > 10 and compiles / steps > 0.5:
        out.append(f"pt-xla-profiler: CompileTime too frequent: {compiles} counts during "
                   f"{steps} steps")
    if steps > 0 and syncs / steps > 0.5:
        out.append(f"pt-xla-profiler: TransferFromServerTime too frequent: {syncs} counts "
                   f"during {steps} steps")
    return out


def as_json(run: dict, findings: list | None = None, unexplained: list | None = None) -> dict:
    if run.get("profile") == "compile":  # real Dynamo: compile_report.py
        from .compile_report import as_json as compile_json

        return compile_json(run, findings, unexplained)
    data = {
        "profile": run.get("profile"),
        "engine": run.get("engine"),
        "script": run.get("script"),
        "status": run.get("status"),
        "compiles": run.get("compiles"),
        "cached": run.get("cached"),
        "syncs": run.get("syncs"),
        "mark_steps": run.get("mark_steps"),
        "max_graph_nodes": run.get("max_graph_nodes"),
        "events": run.get("events", []),
        "findings": findings or [],
        "unexplained": unexplained or [],
        "too_frequent": too_frequent(run),
        "pending_at_exit": run.get("pending_at_exit"),
        "wall_time": run.get("wall_time"),
        "exit_code": run.get("exit_code"),
        "error": run.get("error"),
        "stopped": run.get("stopped"),
    }
    for key in ("optimizer_steps", "backward_passes", "fallback_ops", "stdout", "stderr",
                "lint_error", "scalars", "assumptions", "not_stood_in"):
        if key in run:
            data[key] = run[key]
    return data


def format_json(run, findings=None, unexplained=None) -> str:
    return json.dumps(as_json(run, findings, unexplained), indent=2)


def _show_path(path):
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _where(file, line, script):
    if not line:
        return "?"
    if file and script and os.path.realpath(file) != os.path.realpath(script):
        return f"{_show_path(file)}:{line}"
    return f"line {line}"


def _group_recompiles(run):
    groups = {}
    for e in run.get("events", []):
        if e.get("kind") != "compile" or not e.get("recompile"):
            continue
        cause = e["cause"]
        changes = cause.get("changes", [])
        key = (e.get("site"), e.get("line"), cause.get("kind"),
               tuple((c.get("kind"), c.get("op"), c.get("line"), c.get("input")) for c in changes))
        g = groups.setdefault(key, {"event": e, "count": 0, "firsts": [], "lasts": []})
        g["count"] += 1
        g["lasts"] = changes
        if g["count"] == 1:
            g["firsts"] = changes
    return list(groups.values())


def _range(first, last) -> str:
    f = _fmt
    a = f"{f(first['old'])} -> {f(first['new'])}"
    if first is last or (first.get("old") == last.get("old") and first.get("new") == last.get("new")):
        return a
    return f"{a} ... {f(last['old'])} -> {f(last['new'])}"


def _short(op):
    return op[5:] if op and op.startswith("aten.") else (op or "?")


def format_text(run: dict, findings=None, unexplained=None) -> str:
    if run.get("profile") == "compile":
        from .compile_report import format_text as compile_text

        return compile_text(run, findings, unexplained)
    script = run.get("script")
    shown = _show_path(script) if script else "?"
    engine = run.get("engine")
    device = "PyTorch Lazy Tensor Core (torch._lazy, TorchScript backend)" if engine == "ltc" \
        else "simulated device"
    lines = [f"hpulint verify {shown}  (profile {run.get('profile')}, {device})"]
    for assumption in run.get("assumptions") or []:
        lines.append(f"assumption: {assumption}")
    status = run.get("status")
    how = _STATUS.get(status, status)
    wall = run.get("wall_time")
    detail = ""
    if status == "stopped" or status == "timeout":
        detail = f": {run.get('stopped') or (run.get('error') or {}).get('message', '')}"
    elif status == "exit":
        detail = f": sys.exit({run.get('exit_code')})"
    elif status in ("error", "crashed", "internal"):
        err = run.get("error") or {}
        where = f" at {_where(err.get('file'), err['line'], script)}" if err.get("line") else ""
        detail = f"{where}: {err.get('type', 'error')}: {err.get('message', '')}"
    lines.append(f"{how}{detail}" + (f" ({wall:.2f} s)" if isinstance(wall, (int, float)) else ""))
    if status == "internal":
        lines.append("  this is a bug in hpulint, not in the script: the counts stop where it "
                     "happened (--format json has the details)")
    elif status == "error" and (run.get("error") or {}).get("traceback"):
        lines.append("")
        lines += ["  " + x for x in run["error"]["traceback"].rstrip().splitlines()]
    missing = run.get("not_stood_in") or []
    if missing:
        lines.append(f"  not stood in (asked for by the script): {', '.join(missing)}")
    if status in ("crashed", "timeout") and run.get("stderr"):
        lines.append("  last output of the script:")
        lines += ["    " + x for x in run["stderr"].splitlines()[-10:]]

    def n(v):
        return "n/a" if v is None else str(v)

    lines.append("")
    lines.append(f"  compilations       {n(run.get('compiles'))}")
    lines.append(f"  cached executions  {n(run.get('cached'))}")
    lines.append(f"  host syncs         {n(run.get('syncs'))}")
    lines.append(f"  step markers       {n(run.get('mark_steps'))}")
    mg = run.get("max_graph_nodes")
    unit = "" if mg is None else (" node" if mg == 1 else " nodes")
    lines.append(f"  largest graph      {n(mg)}{unit}")
    for line in too_frequent(run):
        lines.append(line)

    groups = _group_recompiles(run)
    if groups:
        total = sum(g["count"] for g in groups)
        lines.append("")
        lines.append(f"recompilations ({total}):")
        for g in groups:
            e = g["event"]
            site = f"{e.get('site')} at {_where(e.get('file'), e.get('line'), script)}"
            cause = e["cause"]
            if cause.get("kind") in ("constant", "shape") and g["firsts"]:
                parts = []
                for first, last in zip(g["firsts"], g["lasts"]):
                    if first["kind"] == "constant":
                        parts.append(f"constant changed: {_short(first['op'])} at "
                                     f"{_where(first.get('file'), first.get('line'), script)}: "
                                     f"{_range(first, last)}")
                    elif first.get("what") == "count":
                        parts.append(f"number of inputs changed: {_range(first, last)}")
                    else:
                        at = (f" ({_short(first['op'])} at "
                              f"{_where(first.get('file'), first.get('line'), script)})"
                              if first.get("op") else "")
                        parts.append(f"input {first.get('what')} changed: {first.get('input')} "
                                     f"{_range(first, last)}{at}")
                text = "; ".join(parts[:4]) + (f"; and {len(parts) - 4} more" if len(parts) > 4 else "")
            else:
                text = cause.get("summary", "")
            lines.append(f"  {g['count']:>3} x at {site}: {text}")

    syncs = [e for e in run.get("events", []) if e.get("kind") == "sync"]
    if syncs:
        lines.append("")
        lines.append(f"host syncs ({run.get('syncs')}):")
        for e in syncs:
            steps = run.get("mark_steps")
            within = (f"in {len(e.get('steps', []))} of {steps} steps" if steps
                      else "no step markers")
            lines.append(f"  {e['count']:>3} x {e['what']} at "
                         f"{_where(e.get('file'), e.get('line'), script)} ({within})")

    growth = [e for e in run.get("events", []) if e.get("kind") == "growth"]
    for e in growth:
        where = ", ".join(f"line {x}" for x in e.get("lines", [])) or "?"
        lines.append("")
        lines.append(f"graph growth: {e.get('optimizer_steps', 0)} optimizer steps and "
                     f"{e.get('backward_passes', 0)} backward passes ({where}) went into one graph "
                     f"of {e.get('nodes')} recorded ops with no step marker (until "
                     f"{e.get('closed_by', 'the end of the script')})")
    pend = run.get("pending_at_exit")
    if pend:
        lines.append("")
        lines.append(f"pending at exit: {pend['nodes']} ops recorded after the last cut were "
                     f"never compiled (the script ended first)")
    if run.get("fallback_ops"):
        ops = ", ".join(f"{k} x{v}" for k, v in sorted(run["fallback_ops"].items()))
        lines.append("")
        lines.append(f"ran on the CPU (no lowering in this engine): {ops}")

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
                if u["kind"] == "recompile":
                    lines.append(f"  {u['count']:>3} x recompilation at {u.get('site')} line "
                                 f"{u.get('line')}: {u.get('summary')}")
                else:
                    lines.append(f"  {u['count']:>3} x host sync ({u.get('what')}) at "
                                 f"{_where(u.get('file'), u.get('line'), script)}")
    steps = steps_estimate(run)
    if steps and run.get("compiles") is not None and status in ("ok", "stopped"):
        lines.append("")
        lines.append(f"summary: {run['compiles']} compilation{'s' * (run['compiles'] != 1)} "
                     f"and {run['syncs']} host sync{'s' * (run['syncs'] != 1)} in {steps} steps")
    return "\n".join(lines) + "\n"
