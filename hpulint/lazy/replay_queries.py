"""What a replay did at a line of the script: the recompilations, syncs and graph growth its
events record there, and the extent of the loops, tests and functions around a line. The checks
in ``confirm.py`` ask these. (No torch import here.)"""
from __future__ import annotations

import ast
import os

EVERY_STEP = 0.8
HOST_RUN = "runs on the host"  # what a data-dependent op's host run says in a sync event


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


def _recompiles_with(run, keep):
    """(recompile count, changes) for the recompilations whose cause has changes ``keep`` accepts."""
    n = 0
    found = []
    for e in _recompiles(run):
        hit = [c for c in e.get("cause", {}).get("changes", []) if keep(c)]
        if hit:
            n += 1
            found.extend(hit)
    return n, found


def _changes_at(run, script, line, kinds):
    """(recompile count, changes) for recompilations whose cause has a change at ``line``."""
    return _recompiles_with(run, lambda c: c.get("kind") in kinds and c.get("line") == line
                            and _same_file(c.get("file"), script))


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


def _every_step(count, steps) -> tuple:
    need = max(2, int(EVERY_STEP * steps)) if steps else 2
    return count >= need, need


def _made_at(run, script, line):
    """(recompile count, changes) for recompilations caused by a shape made at ``line`` (an
    input computed or uploaded there) or by a constant that changed at ``line``."""
    def keep(c):
        if c.get("kind") == "shape":
            return c.get("what") == "shape" and c.get("from_line") == line and _same_file(c.get("from_file"), script)
        return c.get("kind") == "constant" and c.get("line") == line and _same_file(c.get("file"), script)

    return _recompiles_with(run, keep)


def _host_runs_at(run, script, line):
    """(count, what) of the data-dependent ops that ran on the host at ``line``."""
    evs = [e for e in run.get("events", []) if e.get("kind") == "sync" and e.get("line") == line
           and HOST_RUN in (e.get("what") or "") and _same_file(e.get("file"), script)]
    return sum(e["count"] for e in evs), ", ".join(sorted({e["what"] for e in evs}))


def _shorter(old, new) -> bool:
    """A batch shorter in its first dimension, the same in the others."""
    return (isinstance(old, list) and isinstance(new, list) and len(old) == len(new) >= 1
            and new[0] < old[0] and new[1:] == old[1:])


def _short_batches(run, script, line):
    """(recompile count, changes) for recompilations caused by a shorter batch of the
    DataLoader made at ``line``."""
    return _recompiles_with(run, lambda c: c.get("kind") == "shape" and c.get("loader_line") == line
                            and _same_file(c.get("loader_file"), script) and _shorter(c.get("old"), c.get("new")))


def scope_range(source: str, line: int) -> tuple:
    """(line, last line) of the smallest loop or function around ``line``: where the batch padded
    at ``line`` is used."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return (line, line)
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or end - node.lineno < best[1] - best[0]):
                best = (node.lineno, end)
    return (line, best[1]) if best else (line, line)


def _new_length(c) -> bool:
    old, new = c.get("old"), c.get("new")
    return (isinstance(old, list) and isinstance(new, list) and len(old) == len(new) > 1
            and old[0] == new[0] and old[1:] != new[1:])


def _padded_lengths(run, script, rng):
    """(recompile count, changes) for recompilations caused by an input of a new length (a
    dimension after the first) uploaded within ``rng``."""
    return _recompiles_with(run, lambda c: c.get("kind") == "shape" and c.get("what") == "shape"
                            and _new_length(c) and _same_file(c.get("from_file"), script)
                            and rng[0] <= (c.get("from_line") or 0) <= rng[1])


def statement_ranges(source: str) -> dict:
    """line of a test -> (first line, last line) of the ``if``/``while``/``assert``/conditional
    expression that tests it (the smallest, when several start there)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)):
            rng = (node.lineno, node.end_lineno or node.lineno)
            for line in {node.test.lineno, node.lineno}:
                old = out.get(line)
                if old is None or rng[1] - rng[0] < old[1] - old[0]:
                    out[line] = rng
    return out


def _path_lines(change, script) -> list:
    """The lines of this file where a recompiled graph differs from the last one at its site."""
    kind = change.get("kind")
    if kind == "grew":
        return [] if change.get("carried") else list(change.get("lines", []))
    if not _same_file(change.get("file"), script):
        return []
    if kind == "ops":
        return [x for x in (change.get("old_line"), change.get("new_line")) if x]
    return [change["line"]] if change.get("line") else []


def _paths_in(run, script, lo, hi) -> int:
    """Recompilations whose graph differs from the last one at its site in ops recorded
    between lines ``lo`` and ``hi`` (other ops, or the same ops on other shapes): another
    path through the branch or loop there."""
    n = 0
    for e in _recompiles(run):
        if any(lo <= x <= hi for c in e.get("cause", {}).get("changes", [])
               for x in _path_lines(c, script)):
            n += 1
    return n


def _read(source, script):
    if source is None and script and os.path.exists(script):
        with open(script, encoding="utf-8") as fh:
            return fh.read()
    return source or ""


def _attr(f, name, default=None):
    if isinstance(f, dict):
        return f.get(name, default)
    return getattr(f, name, default)
