"""IPython syntax in a code cell, turned into Python that keeps every line where it was.

IPython accepts lines Python does not: line magics (``%time f()``, ``%matplotlib inline``),
shell escapes (``!pip install x``, ``files = !ls``), help (``torch.cat?``, ``??obj``), autocall
escapes (``/f a``, ``,f a b``), and cell magics on a cell's first line (``%%time``,
``%%bash``). Each such line becomes ``pass`` at the line's own indentation with a marker
comment (so it still parses inside a block and keeps its line number), and the marker says
which original line to put back when a fixed cell is written.

A line counts as IPython syntax only where a Python statement could start: not inside a
bracket, a triple-quoted string, or after a backslash continuation (``x = (a\\n % b)`` is a
modulo, not a magic). ``get_ipython().run_line_magic(...)`` lines (what ``jupytext`` and
``nbconvert`` write for magics) are valid Python but fail outside IPython, so they are
neutralised too when they fit on one line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKER = "# hpulint-ipython-line-{}"
_MARKER_RE = re.compile(r"^([ \t]*)pass  # hpulint-ipython-line-(\d+)[ \t]*(\r?\n)?$")

# cell magics whose body is Python (linted and run); any other cell magic (%%bash, %%html,
# %%writefile...) makes the whole cell something else: it is left out.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3"})

_ASSIGN_MAGIC = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_GET_IPYTHON = re.compile(r"^get_ipython\(\)\s*\.")


@dataclass
class Neutralised:
    """One cell's text as Python: ``lines`` (each ending in a newline) and the original text
    of each neutralised line by marker number."""

    lines: list = field(default_factory=list)
    originals: dict = field(default_factory=dict)
    python: bool = True  # False: a non-Python cell magic; the cell is left out


def split_lines(text: str) -> list:
    """Lines with their endings, split on ``\\n`` only (what the tokenizer counts)."""
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def cell_magic(lines: list):
    """The name of the cell magic on the cell's first non-blank line, or None."""
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith("%%"):
            return (s[2:].split() or [""])[0]
        return None
    return None


def neutralise(text: str, first_marker: int) -> Neutralised:
    """``text`` (one cell) as Python; markers are numbered from ``first_marker`` on."""
    out = Neutralised()
    lines = split_lines(text)
    magic = cell_magic(lines)
    if magic is not None and magic not in PYTHON_CELL_MAGICS:
        out.python = False
        return out
    state = _State()
    continuing_magic = False
    seen_cell_magic = False
    indent = ""
    for line in lines:
        body = line.rstrip("\r\n")
        stripped = body.strip()
        at_start = state.at_statement_start()
        is_magic = False
        if continuing_magic:
            is_magic = True
        elif at_start and stripped:
            if stripped.startswith("%%") and not seen_cell_magic and magic is not None:
                is_magic = seen_cell_magic = True
            elif _is_magic_line(stripped, state):
                is_magic = True
        if is_magic:
            n = first_marker + len(out.originals)
            out.originals[n] = line
            if not continuing_magic:  # a continued magic's lines keep its first line's indent
                indent = body[: len(body) - len(body.lstrip())]
            out.lines.append(f"{indent}pass  {MARKER.format(n)}\n")
            continuing_magic = body.endswith("\\")
            continue
        state.feed(body)
        out.lines.append(line if line.endswith("\n") else line + "\n")
    return out


def restore(line: str, originals: dict):
    """(marker number, original line) when ``line`` is a neutralised line, else None."""
    m = _MARKER_RE.match(line)
    if m is None or int(m.group(2)) not in originals:
        return None
    return int(m.group(2)), originals[int(m.group(2))]


def _is_magic_line(s: str, state: "_State") -> bool:
    if s[0] in "%!?/,;":
        return True
    if _ASSIGN_MAGIC.match(s):
        return True
    if _GET_IPYTHON.match(s):
        probe = _State()
        probe.feed(s)
        return probe.at_statement_start()
    code = _code_part(s)
    return code.endswith("?")


def _code_part(s: str) -> str:
    """The line without its comment (strings are skipped over, not parsed)."""
    probe = _State()
    probe.feed(s)
    return s[: probe.code_end].rstrip()


class _State:
    """Just enough of Python's lexer to know where a statement can start: bracket depth,
    an open triple-quoted string, a trailing backslash."""

    def __init__(self) -> None:
        self.depth = 0
        self.triple = None  # the open triple quote, if any
        self.backslash = False
        self.code_end = 0  # where the last fed line's code ends (its comment starts)

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.triple is None and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        self.backslash = False
        self.code_end = n
        while i < n:
            if self.triple is not None:
                j = line.find(self.triple, i)
                k = line.find("\\", i)
                if k != -1 and (j == -1 or k < j):
                    i = k + 2
                    continue
                if j == -1:
                    return
                i = j + 3
                self.triple = None
                continue
            c = line[i]
            if c == "#":
                self.code_end = i
                return
            if c in "\"'":
                if line.startswith(c * 3, i):
                    self.triple = c * 3
                    i += 3
                    continue
                i = _skip_string(line, i + 1, c)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c == "\\" and i == n - 1:
                self.backslash = True
            i += 1


def _skip_string(line: str, i: int, quote: str) -> int:
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        i += 1
    return n
