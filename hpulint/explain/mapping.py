"""From an event's Python frames to a file on disk, its line, and the static findings there.

A log names files as they were where it was written (``/home/me/proj/train.py``). A frame is
found by its longest tail under ``--root`` folders, the log's folder or one of its parents
(``proj/train.py``, then ``train.py``), else as written, else by its tail under the current
folder: a log kept next to its scripts finds them wherever the folder has moved. The file is
linted once (its own ``[tool.hpulint]`` applies) and an event is *covered* when a static finding
of its rule sits on its line, or in the same loop or function; for a recompilation the log
places at a step marker, any finding of a rule that recompiles in that loop covers it.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional

from hpulint.explain.rules import RECOMPILE_RULES, classify, fix_for


class Sources:
    """Finds, reads and lints the files the logs name (each once)."""

    def __init__(self, roots: list) -> None:
        self.roots = [Path(r) for r in roots]
        self._found: dict = {}
        self._lines: dict = {}
        self._findings: dict = {}
        self._scopes: dict = {}

    def find(self, name: str, log: str) -> Optional[Path]:
        key = (name, log)
        if key not in self._found:
            self._found[key] = self._find(name, Path(log).resolve().parent)
        return self._found[key]

    def _find(self, name: str, log_dir: Path) -> Optional[Path]:
        if name.startswith("<"):
            return None
        p = Path(name)
        near = [*self.roots, log_dir, *list(log_dir.parents)[:4]]
        found = _by_tail(p, near)
        if found is None and p.is_file():
            found = p
        return found or _by_tail(p, [Path.cwd()])

    def line(self, path: Path, n: int) -> str:
        lines = self._lines.get(path)
        if lines is None:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = []
            self._lines[path] = lines
        return lines[n - 1] if 1 <= n <= len(lines) else ""

    def findings(self, path: Path) -> list:
        if path not in self._findings:
            from hpulint.config import find_pyproject, load_config
            from hpulint.engine import check_file

            result = check_file(path, load_config(find_pyproject(path)))
            self._findings[path] = [f for f in result.findings if f.cell is None]
        return self._findings[path]

    def scopes(self, path: Path) -> list:
        """[(first, last, is_loop)] line ranges of the file's loops and functions."""
        if path not in self._scopes:
            out = []
            try:
                tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError, OSError):
                tree = None
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((node.lineno, node.end_lineno or node.lineno,
                                isinstance(node, (ast.For, ast.AsyncFor, ast.While))))
            self._scopes[path] = out
        return self._scopes[path]

    def innermost(self, path: Path, line: int, loops_only: bool = False):
        best = None
        for first, last, is_loop in self.scopes(path):
            if first <= line <= last and (is_loop or not loops_only):
                if best is None or last - first < best[1] - best[0]:
                    best = (first, last)
        return best


def _by_tail(path: Path, roots: list) -> Optional[Path]:
    parts = [x for x in path.parts if x not in ("/", "\\")]
    for k in range(len(parts)):
        tail = Path(*parts[k:])
        for root in roots:
            candidate = root / tail
            if candidate.is_file():
                return candidate
    return None


def place(event, sources: Sources, lint: bool = True) -> None:
    """Give the event its source file and line, its rule, its fix, and its static coverage."""
    site = None
    for frame in reversed(event.frames):  # the innermost frame that exists on disk
        path = sources.find(frame.file, event.log)
        if path is not None:
            site = (frame, path)
            break
    if site is not None:
        frame, path = site
        event.file, event.line = str(path), frame.line
        event.source = sources.line(path, frame.line).strip()
    event.rule, event.why = classify(event, event.source)
    if event.rule is None and event.kind == "recompilation" and event.file and lint:
        _recompile_at_marker(event, sources)
    event.fix = fix_for(event.rule)
    if not event.frames:
        event.coverage = "no line in the log"
        event.coverage_note = "the log names no source line (a count for the whole run)"
        return
    if event.file is None:
        event.coverage = "no source"
        event.coverage_note = f"{event.frames[-1].file} is not on this machine (--root DIR to say where)"
        return
    if not lint:
        return
    _coverage(event, sources)


def _recompile_at_marker(event, sources: Sources) -> None:
    """XLA and Gaudi place a recompilation at the step marker: look for its cause in that loop."""
    path = Path(event.file)
    scope = sources.innermost(path, event.line, loops_only=True) or sources.innermost(path, event.line)
    if scope is None:
        return
    hits = [f for f in sources.findings(path) if f.code in RECOMPILE_RULES and scope[0] <= f.line <= scope[1]]
    if hits:
        event.rule = hits[0].code
        event.why = (f"the loop at line {scope[0]} has a {hits[0].code} finding at line {hits[0].line}: "
                     "that pattern compiles a new graph each step")


def _coverage(event, sources: Sources) -> None:
    path = Path(event.file)
    findings = sources.findings(path)
    same_line = [f for f in findings if f.line <= event.line <= f.end_line]
    if event.rule is None:
        if same_line:
            event.static = [(f.code, f.line, f.col) for f in same_line]
            event.coverage = "covered"
            event.coverage_note = "static finding at this line: " + ", ".join(f.code for f in same_line)
        else:
            event.coverage = "not covered"
            event.coverage_note = "no hpulint rule for this event, and no static finding at this line"
        return
    exact = [f for f in same_line if f.code == event.rule]
    if exact:
        event.static = [(f.code, f.line, f.col) for f in exact]
        event.coverage = "covered"
        event.coverage_note = f"static finding {event.rule} at {exact[0].line}:{exact[0].col}"
        return
    rules = RECOMPILE_RULES if event.kind == "recompilation" and event.engine != "dynamo" else (event.rule,)
    scope = sources.innermost(path, event.line)
    near = [f for f in findings if f.code in rules and scope and scope[0] <= f.line <= scope[1]]
    if near:
        event.static = [(f.code, f.line, f.col) for f in near]
        event.coverage = "covered"
        event.coverage_note = (f"static finding {near[0].code} at {near[0].line}:{near[0].col}, in the same "
                               f"{'loop or ' if event.kind == 'recompilation' else ''}function")
        return
    event.coverage = "not covered"
    event.coverage_note = f"no static {event.rule} finding here: the log shows what `hpulint check` misses"
