"""Apply fixes: libcst edits, in passes, validated, written atomically.

A pass lints the text, keeps the fixes that are allowed (fixable, safe or unsafe as asked) and
do not overlap, applies them in one libcst transform, and checks that the result still parses.
Fixes that overlap wait for the next pass; after at most ``MAX_PASSES`` passes, or when a pass
changes nothing, the text is final. A pass whose result does not parse is dropped and reported:
the file keeps the text of the last good pass.
"""
from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import libcst as cst

from hpulint.config import Config
from hpulint.engine import _DecodeError, check_source, read_source
from hpulint.model import SAFE, FileError

MAX_PASSES = 10


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: list = field(default_factory=list)  # findings whose fix was applied
    remaining: list = field(default_factory=list)  # findings after fixing
    errors: list = field(default_factory=list)
    encoding: str = "utf-8"
    written: bool = False
    diff_text: Optional[str] = None  # a notebook's diff, per cell (hpulint/notebook)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def hidden_unsafe(self) -> int:
        return sum(1 for f in self.remaining if f.fix is not None and f.fix.applicability != SAFE)


def allowed(finding, config: Config, unsafe: bool) -> bool:
    fix = finding.fix
    if fix is None or not config.fixable_code(finding.code):
        return False
    return fix.applicability == SAFE or unsafe


def fix_source(source: str, path: str, config: Config, unsafe: bool = False, linked=None,
               module_name: Optional[str] = None) -> FixOutcome:
    """Fix ``source``: on its own, or as part of the project whose facts are ``linked``."""
    out = FixOutcome(path, source, source)
    text = source

    def lint(text: str):
        return check_source(text, path, config, keep_tree=True, linked=linked, module_name=module_name)

    result = lint(text)
    for _ in range(MAX_PASSES):
        if result.errors:
            if text == source:
                out.errors += result.errors
            break
        chosen = _non_overlapping([f for f in result.findings if allowed(f, config, unsafe)], result.positions)
        if not chosen:
            break
        new_text = _apply(result.module, chosen)
        problem = _validate(new_text, path)
        if problem is not None:
            codes = ", ".join(sorted({f"{f.code} at line {f.line}" for f in chosen}))
            out.errors.append(FileError(path, f"fixing {codes} produced code that does not parse "
                                              f"({problem}); left that fix out"))
            break
        if new_text == text:
            break
        out.applied += chosen
        text = new_text
        result = lint(text)
    out.fixed = text
    out.remaining = result.findings if not result.errors else []
    return out


def _non_overlapping(findings: list, positions) -> list:
    """A greedy set of fixes whose edited nodes do not overlap (the rest waits a pass).

    Findings that share one Fix (one rewrite of a loop fixes all its `steps[i]`) go together.
    """
    groups: dict = {}
    for f in sorted(findings, key=lambda f: (f.line, f.col)):
        groups.setdefault(id(f.fix), []).append(f)
    chosen, taken = [], []
    for group in groups.values():
        spans = []
        for node in group[0].fix.changes:
            pos = positions.get(node) if positions is not None else None
            if pos is None:
                spans = None
                break
            spans.append(((pos.start.line, pos.start.column), (pos.end.line, pos.end.column)))
        if spans is None:
            continue
        if any(a[0] < b[1] and b[0] < a[1] for a in spans for b in taken):
            continue
        chosen += group
        taken += spans
    return chosen


class _Apply(cst.CSTTransformer):
    def __init__(self, changes: dict) -> None:
        super().__init__()
        self.changes = changes  # id(original node) -> replacement or callable(updated)

    def on_leave(self, original_node, updated_node):
        change = self.changes.get(id(original_node))
        if change is None:
            return updated_node
        return change(updated_node) if callable(change) else change


def _apply(module: cst.Module, findings: list) -> str:
    changes, imports = {}, []
    for f in {id(f.fix): f for f in findings}.values():
        for node, repl in f.fix.changes.items():
            changes[id(node)] = repl
        imports += [i for i in f.fix.imports if i not in imports]
    new = module.visit(_Apply(changes))
    if imports:
        new = _add_imports(new, imports)
    return new.code


def _add_imports(module: cst.Module, imports: list) -> cst.Module:
    """Add import lines not already present, after the last top-level import."""
    existing = {module.code_for_node(s).strip() for s in module.body if _is_import_line(s)}
    missing = [i for i in imports if i.strip() not in existing]
    if not missing:
        return module
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if _is_import_line(stmt) or (i == 0 and _is_docstring(stmt)):
            at = i + 1
    new = [cst.parse_statement(text.strip() + "\n") for text in missing]
    return module.with_changes(body=body[:at] + new + body[at:])


def _is_import_line(stmt) -> bool:
    return type(stmt) is cst.SimpleStatementLine and all(
        type(s) in (cst.Import, cst.ImportFrom) for s in stmt.body)


def _is_docstring(stmt) -> bool:
    return type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Expr \
        and type(stmt.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)


def _validate(text: str, path: str) -> Optional[str]:
    try:
        cst.parse_module(text)
        compile(text, path, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        return str(exc).splitlines()[0]
    return None


def sarif_edits(result, config: Config) -> dict:
    """id(finding) -> the SARIF replacements its fix alone makes, for a result linted with
    ``keep_tree=True`` (no second parse): a list of
    ``{"deletedRegion": {"charOffset", "charLength"}, "insertedContent": {"text"}}``.
    """
    out = {}
    if result.module is None:
        return out
    for f in result.findings:
        if f.fix is not None and f.cell is None and config.fixable_code(f.code):
            out[id(f)] = _replacements(result.source, _apply(result.module, [f]))
    return out


def _replacements(old: str, new: str) -> list:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    reps = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        reps.append({
            "deletedRegion": {"charOffset": starts[i1], "charLength": starts[i2] - starts[i1]},
            "insertedContent": {"text": "".join(b[j1:j2])},
        })
    return reps


def unified_diff(outcome: FixOutcome) -> str:
    if outcome.diff_text is not None:
        return outcome.diff_text
    return "".join(difflib.unified_diff(
        outcome.original.splitlines(keepends=True), outcome.fixed.splitlines(keepends=True),
        fromfile=f"a/{outcome.path}", tofile=f"b/{outcome.path}"))


# --- files -----------------------------------------------------------------------------------


def fix_file(path: Path, config: Config, unsafe: bool = False, write: bool = True, linked=None,
             module_name: Optional[str] = None) -> FixOutcome:
    name = str(path)
    if name.endswith(".ipynb"):  # a notebook: fix its cells, write the JSON back (hpulint/notebook)
        from hpulint.notebook import fix_notebook

        return fix_notebook(path, config, unsafe, write, linked=linked, module_name=module_name)
    try:
        before = path.stat()
        source, encoding = read_source(path)
    except _DecodeError as exc:
        return FixOutcome(name, "", "", errors=[FileError(name, str(exc), exc.line)])
    except OSError as exc:
        return FixOutcome(name, "", "", errors=[FileError(name, f"cannot read: {exc.strerror or exc}")])
    outcome = fix_source(source, name, config, unsafe, linked, module_name)
    outcome.encoding = encoding
    if write and outcome.changed:
        problem = write_atomically(path, outcome.fixed, encoding, before)
        if problem:
            outcome.errors.append(FileError(name, problem))
            outcome.remaining = check_source(source, name, config, linked=linked, module_name=module_name).findings
            outcome.applied = []
        else:
            outcome.written = True
    return outcome


def write_atomically(path: Path, text: str, encoding: str, before: os.stat_result) -> Optional[str]:
    """Replace ``path`` with ``text``; None on success, else why nothing was written."""
    if not before.st_mode & stat.S_IWUSR:
        return "read-only file: not fixed (make it writable to apply the fixes)"
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError as exc:
        return f"the fixed text cannot be encoded as {encoding}: {exc.reason}; not fixed"
    now = path.stat()
    if (now.st_mtime_ns, now.st_size, now.st_ino) != (before.st_mtime_ns, before.st_size, before.st_ino):
        return "the file changed while hpulint was fixing it: not fixed (run again)"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".hpulint")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(before.st_mode))
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return f"cannot write: {exc.strerror or exc}; not fixed"
    return None
