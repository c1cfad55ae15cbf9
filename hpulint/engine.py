"""Lint files in two phases: analyse each file, link the project, then finish each file.

*Analyse* (per file): read, parse once with libcst, walk once (:mod:`hpulint.dispatch`: our own
iterative traversal with the analysis and every enabled rule in one dispatch table; libcst's
visitor protocol rebuilds every node it passes and costs about as much as the parse itself). The
walk leaves the file's *summary* (what other files need to know) and the rules' pending reports.

*Link* (per project, :mod:`hpulint.analysis.link`): the summaries of every file, resolved across
files to a fixed point.

*Finish* (per file): the analysis is bound to the linked facts, the rules' ``finish`` and
deferred conditions run, and positions (as libcst's PositionProvider gives them) are computed only for files
that have something to report.
"""
from __future__ import annotations

import ast
import tokenize
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Optional

import libcst as cst

from hpulint.analysis import Analysis
from hpulint.analysis.facts import FileFacts
from hpulint.analysis.summary import summarize
from hpulint.config import Config
from hpulint.dispatch import FileContext, call_rules, walk
from hpulint.model import FileError, Finding
from hpulint.rules import ALL_RULES
from hpulint.suppress import Suppressions


class LintError(Exception):
    """Raised by :func:`lint_source` when the source cannot be linted (syntax error...)."""

    def __init__(self, error: FileError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class FileResult:
    path: str
    findings: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    suppressed: int = 0
    parsed: bool = False
    # kept for --fix: the parsed module the findings' fixes point into
    module: Optional[cst.Module] = None
    positions: Optional[dict] = None  # node -> CodeRange, when keep_tree and there were findings
    source: Optional[str] = None
    encoding: str = "utf-8"
    records: list = field(default_factory=list)  # the project facts the file asked, with answers


@dataclass
class FileState:
    """A file analysed and waiting for the project's facts."""

    path: str
    module_name: str
    source: str
    summary: Optional[dict] = None
    tree: Optional[cst.Module] = None
    ctx: Optional["FileContext"] = None
    errors: list = field(default_factory=list)
    encoding: str = "utf-8"
    notebook: Optional[object] = None  # a notebook's cells, to move findings onto (hpulint/notebook)

    @property
    def pending(self) -> bool:
        """Whether finishing can report anything (a rule ran on the file)."""
        return self.ctx is not None and bool(self.ctx.rules)

    def release(self) -> None:
        """Let go of the tree and the analysis once the file is done with. The rules, the
        analysis' scopes and loops and the deferred reports refer to each other and to the
        tree's nodes: unless those cycles are broken here, only Python's cyclic garbage
        collector frees the tree (the runner keeps the collector off while it lints)."""
        ctx = self.ctx
        if ctx is not None:
            ctx.release()
        self.ctx = None
        self.tree = None


def lint_source(source: str, path: str = "<string>", config: Optional[Config] = None) -> list:
    """Lint Python source text on its own; return its findings (sorted by line, column, code).

    Raises :class:`LintError` when the text cannot be parsed or a rule fails on it.
    """
    result = check_source(source, path, config or Config())
    if result.errors:
        raise LintError(result.errors[0])
    return result.findings


def read_source(path: Path) -> tuple:
    """(text, encoding) of a Python file, honouring a PEP 263 coding line; FileError if not."""
    data = path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    except SyntaxError as exc:
        raise _DecodeError(str(exc), None) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _DecodeError(f"not valid {encoding}: byte 0x{data[exc.start]:02x} cannot be decoded", line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, ("utf-8-sig" if encoding == "utf-8-sig" else encoding)


class _DecodeError(Exception):
    def __init__(self, message: str, line: Optional[int]) -> None:
        super().__init__(message)
        self.line = line


def module_name_for(path: str) -> str:
    """The module name of a file linted on its own (its stem)."""
    stem = Path(path).stem if path not in ("-", "<string>") else "<string>"
    return stem or "<string>"


def analyse_file(path: Path, config: Config, module_name: Optional[str] = None, lint: bool = True,
                 is_package: bool = False, script: bool = True, index: bool = False) -> FileState:
    name = str(path)
    if name.endswith(".ipynb"):  # a notebook: its code cells, joined (hpulint/notebook)
        return _analyse_notebook(path, config, module_name, lint, index)
    try:
        source, encoding = read_source(path)
    except _DecodeError as exc:
        return FileState(name, module_name or module_name_for(name), "", errors=[FileError(name, str(exc), exc.line)])
    except OSError as exc:
        return FileState(name, module_name or module_name_for(name), "",
                         errors=[FileError(name, f"cannot read: {exc.strerror or exc}")])
    state = analyse_source(source, name, config, module_name, lint=lint, is_package=is_package, script=script,
                           index=index)
    state.encoding = encoding
    return state


def _analyse_notebook(path: Path, config: Config, module_name: Optional[str], lint: bool, index: bool,
                      text: Optional[str] = None) -> FileState:
    from hpulint.notebook import Notebook, NotebookError

    name = str(path)
    module_name = module_name or module_name_for(name)
    try:
        nb = Notebook.from_text(text, name) if text is not None else Notebook.load(path)
    except NotebookError as exc:
        return FileState(name, module_name, "", errors=[FileError(name, exc.message, exc.line, exc.col)])
    except OSError as exc:
        return FileState(name, module_name, "", errors=[FileError(name, f"cannot read: {exc.strerror or exc}")])
    state = analyse_source(nb.python, name, config, module_name, lint=lint, index=index)
    state.notebook = nb
    return state


def enabled_rules(source: str, path: str, config: Config) -> list:
    """The rules on for this file whose trigger substrings occur in its text."""
    return [
        r for r in ALL_RULES
        if config.enabled(r.code, path) and (not r.triggers or any(t in source for t in r.triggers))
    ]


def _unchecked(self) -> None:
    """Stands in for CSTNode.__post_init__ (which calls ``_validate``) while the parser builds a tree."""


def parse_module(source: str) -> cst.Module:
    """``cst.parse_module`` without libcst's per-node validation: every node the parser builds
    calls ``_validate`` from ``__post_init__`` (whitespace regexes, name and operator checks),
    which a tree straight from the parser always passes (libcst's own comment there: "It might
    make more sense to move validation work into the visitor, which would allow us to avoid
    validating the tree when parsing a file"). About an eighth of the parse. Nodes made by fixes
    are validated as usual: the hook is put back as soon as the parse returns or raises."""
    node_type = cst.CSTNode
    checked = node_type.__dict__["__post_init__"]
    node_type.__post_init__ = _unchecked
    try:
        return cst.parse_module(source)
    finally:
        node_type.__post_init__ = checked


def syntax_error(path: str, source: str, exc: cst.ParserSyntaxError) -> FileError:
    """The error for a file libcst cannot parse, at the place Python itself names when it agrees
    that the file is invalid: libcst's tokenizer errors all say line 1, and an unclosed bracket is
    reported where the file ends."""
    try:
        compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as py:
        if py.lineno:
            return FileError(path, f"syntax error: {py.msg}", py.lineno, max(py.offset or 1, 1))
    except (ValueError, RecursionError, MemoryError):
        pass  # (null bytes, too deep): libcst's own words
    return FileError(path, f"syntax error: {exc.message}", exc.editor_line, exc.editor_column)


def analyse_source(source: str, path: str, config: Config, module_name: Optional[str] = None,
                   lint: bool = True, is_package: bool = False, script: bool = True,
                   index: bool = False) -> FileState:
    """Phase one: parse and walk a file; keep what finishing it needs, and its summary."""
    module_name = module_name or module_name_for(path)
    state = FileState(path, module_name, source)
    rules = enabled_rules(source, path, config) if lint else []
    if lint and not rules and not index:
        return state  # nothing to check here and no project to summarise it for: not parsed
    try:
        tree = parse_module(source)
    except cst.ParserSyntaxError as exc:
        state.errors.append(syntax_error(path, source, exc))
        return state
    except RecursionError:
        state.errors.append(FileError(path, "too deeply nested for the parser"))
        return state
    ctx = FileContext(path, source, config, Analysis(module_name, is_package, config.target,
                                                      tuple(config.step_markers)))
    ctx.rules = [r(ctx) for r in rules]
    try:
        walk(tree, ctx)
        summary = summarize(ctx.analysis)
    except Exception as exc:  # an analysis bug: report it, keep the run going
        state.errors.append(FileError(path, f"internal error in the analysis: {type(exc).__name__}: {exc}"))
        return state
    summary["path"] = path
    summary["script"] = script
    state.summary = summary
    state.tree = tree
    state.ctx = ctx
    return state


def finish_file(state: FileState, linked, keep_tree: bool = False) -> FileResult:
    """Phase three: bind the file to the project's facts, run the deferred reports, position."""
    result = _finish(state, linked, keep_tree)
    if state.notebook is not None:
        state.notebook.remap(result.findings, result.errors)
    return result


def _finish(state: FileState, linked, keep_tree: bool) -> FileResult:
    result = FileResult(state.path, source=state.source, encoding=state.encoding, errors=list(state.errors))
    if state.ctx is None:
        return result
    result.parsed = True
    if keep_tree:
        result.module = state.tree
    ctx = state.ctx
    module = state.tree
    facts = FileFacts(linked, state.module_name)
    try:
        ctx.analysis.bind(facts)
        for rule in ctx.rules:
            if rule not in ctx.failed:
                call_rules([(rule, lambda _node, rule=rule: rule.finish())], module, ctx)
        raw = ctx.evaluate()
    except Exception as exc:  # an analysis bug: report it, keep the run going
        result.errors.append(FileError(state.path, f"internal error in the analysis: {type(exc).__name__}: {exc}"))
        return result
    result.records = facts.records()
    if not raw and not ctx.crashes:
        return result
    positions = _positions(module)
    if keep_tree:
        result.positions = positions
    path = state.path
    for rule, node, exc in ctx.crashes:
        pos = positions.get(node)
        result.errors.append(
            FileError(path, f"rule {rule.code} failed: {type(exc).__name__}: {exc}",
                      pos.start.line if pos else None, pos.start.column + 1 if pos else None)
        )
    suppressions = Suppressions(state.source) if raw else None
    for rule, node, message, fix, statement in raw:
        pos = positions[node]
        stmt_pos = positions.get(statement) if statement is not None else None
        line = pos.start.line
        if suppressions.suppressed(rule.code, line, stmt_pos.start.line if stmt_pos else None):
            result.suppressed += 1
            continue
        result.findings.append(
            Finding(rule.code, rule.name, message, path, line, pos.start.column + 1,
                    pos.end.line, pos.end.column + 1, fix, node)
        )
    result.findings.sort(key=lambda f: (f.line, f.col, f.code))
    return result


def _positions(module: cst.Module):
    """node -> CodeRange for every node, as libcst's PositionProvider gives them (see
    :mod:`hpulint.positions`)."""
    from hpulint.positions import positions

    return positions(module)


def link(summaries: list, config: Config):
    from hpulint.analysis.link import link as link_project

    return link_project(summaries, config.target)


def check_file(path: Path, config: Config, keep_tree: bool = False) -> FileResult:
    """Lint one file on its own (the project is just this file)."""
    state = analyse_file(path, config)
    result = _finish_alone(state, config, keep_tree)
    result.encoding = state.encoding
    return result


def check_source(source: str, path: str, config: Config, keep_tree: bool = False, linked=None,
                 module_name: Optional[str] = None) -> FileResult:
    """Lint source text: on its own, or with ``linked`` project facts (its own summary is
    replaced by this text's when the file is part of that project)."""
    state = analyse_source(source, path, config, module_name, index=linked is not None)
    if linked is None:
        return _finish_alone(state, config, keep_tree)
    return finish_file(state, relink(linked, state.summary, config), keep_tree)


def relink(linked, summary: Optional[dict], config: Config):
    """``linked`` with ``summary`` in place of its module's (linked again only if it differs)."""
    if summary is None:
        return linked
    known = linked.project.modules.get(summary["module"])
    if known is not None and _same(known, summary):
        return linked
    others = [s for m, s in linked.project.modules.items() if m != summary["module"]]
    return link([*others, summary], config)


def _same(a: dict, b: dict) -> bool:
    keys = ("defs", "classes", "functions", "evidence", "compiled", "package", "script")
    return all(a.get(k) == b.get(k) for k in keys)


def _finish_alone(state: FileState, config: Config, keep_tree: bool) -> FileResult:
    if state.summary is None:
        result = FileResult(state.path, source=state.source, encoding=state.encoding, errors=list(state.errors))
        if state.notebook is not None:
            state.notebook.remap([], result.errors)
        return result
    if not state.pending:
        return FileResult(state.path, source=state.source, encoding=state.encoding, parsed=True)
    return finish_file(state, link([state.summary], config), keep_tree)
