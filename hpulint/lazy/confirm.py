"""Does the replay show the mechanism each static finding claims? (No torch import here.)

A finding at line L is **confirmed** when the replay shows, at L:

* HPU001: recompilations caused by a constant that changed at L;
* HPU002, HPU005: a host sync at L in (about) every step: at least 2, and at least 80% of the
  steps (optimizer steps if the script has any, else backward passes, else step markers);
* HPU003: at least 2 recompilations caused by an input shape (or constant) of the op at L;
* HPU004 (the finding is on a ``for``/``while`` line): the graph grew with no step marker over
  more than one training iteration, recorded from a line inside that loop.

Otherwise it is **not reproduced** (with what the replay did see there); codes the verifier
does not know are **not checked**. ``unexplained()`` lists the recompilations and syncs that no
finding accounts for: the linter's blind spots.
"""
from __future__ import annotations

import ast
import os

KNOWN = ("HPU001", "HPU002", "HPU003", "HPU004", "HPU005")
EVERY_STEP = 0.8


def _same_file(a, b) -> bool:
    if not a or not b:
        return False
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def loop_ranges(source: str) -> list:
    """(first line, last line) of every ``for``/``while`` loop in ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            out.append((node.lineno, node.end_lineno or node.lineno))
    return sorted(out)


def _loop_at(loops, line):
    starting = [r for r in loops if r[0] == line]
    if starting:
        return min(starting, key=lambda r: r[1] - r[0])
    containing = [r for r in loops if r[0] <= line <= r[1]]
    return min(containing, key=lambda r: r[1] - r[0]) if containing else None


def steps_estimate(run: dict) -> int:
    return run.get("optimizer_steps") or run.get("backward_passes") or run.get("mark_steps") or 0


def _recompiles(run):
    return [e for e in run.get("events", []) if e.get("kind") == "compile" and e.get("recompile")]


def _changes_at(run, script, line, kinds):
    """(recompile count, changes) for recompilations whose cause has a change at ``line``."""
    n = 0
    found = []
    for e in _recompiles(run):
        hit = [c for c in e.get("cause", {}).get("changes", [])
               if c.get("kind") in kinds and c.get("line") == line and _same_file(c.get("file"), script)]
        if hit:
            n += 1
            found.extend(hit)
    return n, found


def _values(changes) -> str:
    if not changes:
        return ""
    first, last = changes[0], changes[-1]
    op = first.get("op") or ""
    op = op[5:] if op.startswith("aten.") else op
    if first is last:
        return f"{op}: {_fmt(first['old'])} -> {_fmt(first['new'])}"
    return (f"{op}: {_fmt(first['old'])} -> {_fmt(first['new'])} ... "
            f"{_fmt(last['old'])} -> {_fmt(last['new'])}")


def _fmt(v):
    if isinstance(v, list):
        return "(" + ", ".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _syncs_at(run, script, line):
    evs = [e for e in run.get("events", []) if e.get("kind") == "sync" and e.get("line") == line
           and _same_file(e.get("file"), script)]
    count = sum(e["count"] for e in evs)
    what = ", ".join(sorted({e["what"] for e in evs}))
    return count, what


def _growth_in(run, script, lo, hi):
    for e in run.get("events", []):
        if e.get("kind") == "growth":
            for f, line in e.get("stack", []) or [(None, x) for x in e.get("lines", [])]:
                if lo <= line <= hi and (f is None or _same_file(f, script)):
                    return e
        if e.get("kind") == "compile" and e.get("recompile") and e["cause"].get("kind") == "grew":
            for c in e["cause"].get("changes", []):
                if c.get("carried") and any(lo <= x <= hi for x in c.get("lines", [])):
                    return e
    return None


def _attr(f, name, default=None):
    if isinstance(f, dict):
        return f.get(name, default)
    return getattr(f, name, default)


def confirm(findings, run_result: dict, source: str | None = None) -> list:
    """One dict per finding: ``{"code", "line", "status", "message", ...counts}``.

    ``findings`` are ``hpulint.model.Finding`` objects (or dicts with ``code`` and ``line``);
    ``run_result`` is what ``replay.run``/``replay.replay`` returned. ``source`` is the
    script's text, used to find a loop's extent for HPU004 (read from ``run_result["script"]``
    when not given).
    """
    script = run_result.get("script")
    steps = steps_estimate(run_result)
    loops = None
    out = []
    for f in findings:
        code, line = _attr(f, "code"), _attr(f, "line")
        item = {"code": code, "line": line, "name": _attr(f, "name"), "message": _attr(f, "message")}
        if code == "HPU001":
            n, ch = _changes_at(run_result, script, line, ("constant",))
            item["recompiles"] = n
            if n >= 1:
                item["status"] = "confirmed"
                item["evidence"] = (f"{n} recompilation{'s' * (n != 1)} caused by a constant that "
                                    f"changed at this line ({_values(ch)})")
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"no recompilation was caused by a constant at this line "
                                    f"({run_result.get('compiles')} compilations, "
                                    f"{run_result.get('mark_steps')} step markers)")
        elif code == "HPU003":
            n, ch = _changes_at(run_result, script, line, ("shape", "constant"))
            item["recompiles"] = n
            if n >= 2:
                item["status"] = "confirmed"
                what = (f"input {ch[0].get('input')}" if ch[0]["kind"] == "shape"
                        else "a constant")
                item["evidence"] = (f"{n} recompilations: {what} of the op at this line changed "
                                    f"every step ({_values(ch)})")
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"{n} recompilation{'s' * (n != 1)} caused by a shape at "
                                    f"this line (needs 2 or more)")
        elif code in ("HPU002", "HPU005"):
            count, what = _syncs_at(run_result, script, line)
            item["syncs"] = count
            item["steps"] = steps
            need = max(2, int(EVERY_STEP * steps)) if steps else 2
            if count >= need:
                item["status"] = "confirmed"
                item["evidence"] = f"{count} host syncs ({what}) in {steps} steps"
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"{count} host sync{'s' * (count != 1)} at this line in "
                                    f"{steps} steps (every step needs {need})")
        elif code == "HPU004":
            if loops is None:
                text = source
                if text is None and script and os.path.exists(script):
                    with open(script, encoding="utf-8") as fh:
                        text = fh.read()
                loops = loop_ranges(text or "")
            rng = _loop_at(loops, line)
            if rng is None:
                item["status"] = "not reproduced"
                item["evidence"] = "no loop at this line"
            else:
                ev = _growth_in(run_result, script, rng[0], rng[1])
                item["loop"] = list(rng)
                if ev is None:
                    item["status"] = "not reproduced"
                    item["evidence"] = (f"no graph grew across iterations of the loop at lines "
                                        f"{rng[0]}-{rng[1]}")
                elif ev["kind"] == "growth":
                    item["status"] = "confirmed"
                    item["evidence"] = (f"{ev.get('optimizer_steps', 0)} optimizer steps and "
                                        f"{ev.get('backward_passes', 0)} backward passes went into "
                                        f"one graph with no step marker ({ev.get('nodes')} nodes)")
                else:
                    item["status"] = "confirmed"
                    item["evidence"] = ev["cause"]["summary"]
        else:
            item["status"] = "not checked"
            item["evidence"] = "the verifier has no check for this rule"
        out.append(item)
    return out


def unexplained(findings, run_result: dict, source: str | None = None) -> list:
    """Recompilations and host syncs in the replay that no finding explains."""
    script = run_result.get("script")
    by_code = {}
    for f in findings:
        by_code.setdefault(_attr(f, "code"), set()).add(_attr(f, "line"))
    recompile_lines = by_code.get("HPU001", set()) | by_code.get("HPU003", set())
    sync_lines = by_code.get("HPU002", set()) | by_code.get("HPU005", set())
    loops = []
    if by_code.get("HPU004"):
        text = source
        if text is None and script and os.path.exists(script):
            with open(script, encoding="utf-8") as fh:
                text = fh.read()
        all_loops = loop_ranges(text or "")
        loops = [r for r in (_loop_at(all_loops, x) for x in by_code["HPU004"]) if r]
    groups = {}
    for e in _recompiles(run_result):
        cause = e.get("cause", {})
        changes = cause.get("changes", [])
        lines = {c.get("line") for c in changes if _same_file(c.get("file"), script)}
        if cause.get("kind") == "grew" and any(c.get("carried") for c in changes):
            grown = {x for c in changes for x in c.get("lines", [])}
            if any(lo <= x <= hi for x in grown if x for lo, hi in loops):
                continue
        elif lines & recompile_lines:
            continue
        key = ("recompile", e.get("line"), cause.get("kind"),
               tuple(sorted((c.get("kind", ""), c.get("op") or "", c.get("line") or 0)
                            for c in changes)))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"kind": "recompile", "line": e.get("line"), "site": e.get("site"),
                               "cause": cause.get("kind"), "count": 0,
                               "summary": cause.get("summary")}
        g["count"] += 1
    out = list(groups.values())
    for e in run_result.get("events", []):
        if e.get("kind") == "sync" and not (e.get("line") in sync_lines and
                                            _same_file(e.get("file"), script)):
            out.append({"kind": "sync", "line": e.get("line"), "file": e.get("file"),
                        "what": e.get("what"), "count": e.get("count")})
    return out
