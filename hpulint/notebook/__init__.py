"""Jupyter notebooks (``.ipynb``): lint, fix and replay their code cells as one script.

A notebook is read with the standard library's ``json``. Its code cells, in order, are joined
into one Python source (IPython magics and shell escapes become ``pass`` lines, see
:mod:`hpulint.notebook.magics`, so every line keeps its number); findings on that source are
mapped back to ``cell N, line L``. Cells are numbered from 1 over all cells, markdown included,
the way an editor shows them. A fix edits the joined source; the changed lines go back into
their cells, and only the changed cells' ``source`` values are replaced in the file's text.

Cells with a non-Python cell magic (``%%bash``, ``%%writefile``...) are left out; so are raw and
markdown cells.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hpulint.notebook import jsontext
from hpulint.notebook.magics import neutralise, restore, split_lines

SUFFIX = ".ipynb"


def is_notebook(path) -> bool:
    return str(path).endswith(SUFFIX)


class NotebookError(ValueError):
    """The file is not a notebook hpulint can read or write back; ``line`` is in the file."""

    def __init__(self, message: str, line: Optional[int] = None, col: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


@dataclass
class Cell:
    number: int  # 1-based over all cells
    text: str  # the cell's source as Jupyter joins it
    span: jsontext.SourceSpan
    first_line: int = 0  # 1-based line of its first line in the joined source (0: left out)
    n_lines: int = 0


@dataclass
class Notebook:
    path: str
    text: str  # the file's text (without a BOM)
    bom: bool
    cells: list  # code cells
    python: str = ""  # the joined source
    origin: list = field(default_factory=list)  # joined line (0-based) -> (cell number, line)
    originals: dict = field(default_factory=dict)  # marker -> original IPython line

    # --- reading ---------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, path: str) -> "Notebook":
        bom = text.startswith("\ufeff")
        if bom:
            text = text[1:]
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not a valid notebook: invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            if isinstance(data, dict) and "worksheets" in data:
                raise NotebookError("nbformat 3 notebooks are not supported (convert with `jupyter nbconvert --to notebook`)")
            raise NotebookError("not a valid notebook: no top-level \"cells\" list")
        spans = jsontext.source_spans(text)
        cells = []
        for i, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict):
                raise NotebookError(f"not a valid notebook: cell {i + 1} is not an object", _line_of(text, None))
            if cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            if isinstance(src, list) and all(isinstance(s, str) for s in src):
                src = "".join(src)
            if not isinstance(src, str) or i not in spans:
                raise NotebookError(f"not a valid notebook: cell {i + 1} has no source text",
                                    _line_of(text, spans.get(i)))
            cells.append(Cell(i + 1, src, spans[i]))
        nb = cls(path, text, bom, cells)
        nb._join()
        return nb

    @classmethod
    def load(cls, path) -> "Notebook":
        data = Path(path).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise NotebookError(f"not valid UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded", line) from None
        return cls.from_text(text, str(path))

    def _join(self) -> None:
        lines = []
        for cell in self.cells:
            part = neutralise(cell.text, len(self.originals))
            if not part.python:
                continue
            self.originals.update(part.originals)
            cell.first_line = len(lines) + 1
            cell.n_lines = len(part.lines)
            lines += part.lines
            self.origin += [(cell.number, k + 1) for k in range(len(part.lines))]
        self.python = "".join(lines)

    # --- positions -----------------------------------------------------------------------------

    def where(self, line: Optional[int]):
        """(cell number, line in the cell) of a joined-source line, or (None, line)."""
        if line is None or not 1 <= line <= len(self.origin):
            return None, line
        return self.origin[line - 1]

    def remap(self, findings: list, errors: list) -> None:
        """Findings and errors on the joined source, moved to their cells (in place)."""
        for f in findings:
            cell, f.line = self.where(f.line)
            _, f.end_line = self.where(f.end_line)
            f.cell = cell
        for e in errors:
            if e.cell is None:
                e.cell, e.line = self.where(e.line)
                # the parser's own "error at L:C" counts lines of the joined cells: drop it
                e.message = re.sub(r"\berror at \d+:\d+: ", "", e.message)

    # --- writing -------------------------------------------------------------------------------

    def cell_texts(self, python: str) -> dict:
        """Cell number -> its new text, for every Python cell, given a new joined source."""
        old = python_lines = split_lines(self.python)
        new = split_lines(python)
        owner = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            for k in range(j2 - j1):
                if tag == "equal":
                    src = i1 + k
                elif tag == "replace":
                    src = min(i1 + k, i2 - 1)
                else:  # insert: with the line before it (a marker goes after its statement)
                    src = i1 - 1 if i1 > 0 else 0
                owner.append(self.origin[src][0] if python_lines else None)
        texts = {c.number: [] for c in self.cells if c.first_line}
        seen_markers = set()
        last = 0
        for line, cell in zip(new, owner):
            if cell is None or cell < last:
                raise NotebookError("the fixed code no longer splits into the notebook's cells")
            last = cell
            back = restore(line, self.originals)
            if back is not None:
                seen_markers.add(back[0])
                line = back[1] if back[1].endswith("\n") else back[1] + "\n"
            texts[cell].append(line)
        lost = set(self.originals) - seen_markers
        if lost:
            k = min(lost)
            raise NotebookError(f"a fix would remove the IPython line {self.originals[k].strip()!r}")
        out = {}
        for cell in self.cells:
            if not cell.first_line:
                continue
            text = "".join(texts[cell.number])
            if not cell.text.endswith("\n") and text.endswith("\n"):
                text = text[:-1]
            out[cell.number] = text
        return out

    def with_python(self, python: str) -> str:
        """The notebook file's text with the cells changed to match ``python``."""
        texts = self.cell_texts(python)
        style = jsontext.Style(self.text)
        out = self.text
        for cell in sorted(self.cells, key=lambda c: -c.span.start):
            new = texts.get(cell.number)
            if new is None or new == cell.text:
                continue
            out = out[: cell.span.start] + style.source(new, cell.span) + out[cell.span.end:]
        check = Notebook.from_text(out, self.path)  # what we wrote reads back as intended
        if {c.number: c.text for c in check.cells if c.first_line} != {
                n: t for n, t in texts.items()}:  # pragma: no cover - a bug in the writer
            raise NotebookError("internal error: the written notebook does not read back")
        return ("\ufeff" if self.bom else "") + out

    def relabel(self, report: str, script: str, is_json: bool = False) -> str:
        """A ``hpulint verify`` report with its script lines as cell and line (see .run)."""
        from hpulint.notebook.run import relabel_json, relabel_text

        return (relabel_json if is_json else relabel_text)(self, report, script)

    def diff(self, python: str) -> str:
        """A unified diff per changed cell (``a/nb.ipynb:cell 3``)."""
        texts = self.cell_texts(python)
        chunks = []
        for cell in self.cells:
            new = texts.get(cell.number)
            if new is None or new == cell.text:
                continue
            name = f"{self.path}:cell {cell.number}"
            chunks += difflib.unified_diff(
                _with_newline(cell.text).splitlines(True), _with_newline(new).splitlines(True),
                fromfile=f"a/{name}", tofile=f"b/{name}")
        return "".join(chunks)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _line_of(text: str, span) -> Optional[int]:
    if span is None:
        return None
    return text.count("\n", 0, span.start) + 1


# --- the hooks engine.py, fix.py and cli.py call --------------------------------------------------


def check_notebook(path, config, keep_tree: bool = False, text: Optional[str] = None, linked=None,
                   module_name: Optional[str] = None):
    """Lint a notebook file (or its ``text``): a FileResult whose findings carry their cell."""
    from hpulint.engine import FileResult, check_source
    from hpulint.model import FileError

    name = str(path)
    try:
        nb = Notebook.from_text(text, name) if text is not None else Notebook.load(path)
    except NotebookError as exc:
        return FileResult(name, errors=[FileError(name, exc.message, exc.line, exc.col)])
    except OSError as exc:
        return FileResult(name, errors=[FileError(name, f"cannot read: {exc.strerror or exc}")])
    result = check_source(nb.python, name, config, keep_tree=keep_tree, linked=linked, module_name=module_name)
    nb.remap(result.findings, result.errors)
    return result


def fix_notebook(path, config, unsafe: bool = False, write: bool = True, text: Optional[str] = None, linked=None,
                 module_name: Optional[str] = None):
    """Fix a notebook's cells; write the file back (unless ``write`` is false or ``text`` given)."""
    from hpulint.fix import FixOutcome, fix_source, write_atomically
    from hpulint.model import FileError

    name = str(path)
    try:
        before = Path(path).stat() if text is None else None
        nb = Notebook.from_text(text, name) if text is not None else Notebook.load(path)
    except NotebookError as exc:
        return FixOutcome(name, "", "", errors=[FileError(name, exc.message, exc.line, exc.col)])
    except OSError as exc:
        return FixOutcome(name, "", "", errors=[FileError(name, f"cannot read: {exc.strerror or exc}")])
    outcome = fix_source(nb.python, name, config, unsafe, linked, module_name)
    nb.remap([], outcome.errors)
    nb.remap(outcome.applied, [])
    joined_fixed = outcome.fixed
    outcome.original = outcome.fixed = nb.text
    if joined_fixed == nb.python:
        nb.remap(outcome.remaining, [])
    elif not outcome.errors:
        try:
            outcome.fixed = nb.with_python(joined_fixed)
            outcome.diff_text = nb.diff(joined_fixed)
            # the remaining findings are on the fixed code: map them with the fixed cells
            Notebook.from_text(outcome.fixed, name).remap(outcome.remaining, [])
        except NotebookError as exc:
            outcome.errors.append(FileError(name, f"{exc.message}; not fixed"))
            outcome.remaining, outcome.applied = _findings(nb, config, linked, module_name), []
            return outcome
    if write and text is None and outcome.changed:
        problem = write_atomically(Path(path), outcome.fixed, "utf-8", before)
        if problem:
            outcome.errors.append(FileError(name, problem))
            outcome.remaining, outcome.applied = _findings(nb, config, linked, module_name), []
        else:
            outcome.written = True
    return outcome


def _findings(nb: Notebook, config, linked=None, module_name: Optional[str] = None) -> list:
    from hpulint.engine import check_source

    result = check_source(nb.python, nb.path, config, linked=linked, module_name=module_name)
    nb.remap(result.findings, [])
    return result.findings


def python_source(path) -> str:
    """The joined Python source of a notebook's code cells (what ``hpulint verify`` runs)."""
    return Notebook.load(path).python


def run_notebook(path) -> dict:
    """Run a notebook's code cells in order as ``__main__``; return its globals."""
    from hpulint.notebook.run import run

    return run(path)
