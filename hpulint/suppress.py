"""Suppression comments.

- ``# noqa`` (every code) or ``# noqa: HPU001, HPU005`` on the finding's line, or on the first
  line of the (multi-line) statement that contains it;
- ``# hpulint: ignore[HPU001]`` (or ``# hpulint: ignore`` for every code), same placement;
- ``# hpulint: noqa`` on a line of its own: the whole file.

Comments are found with ``tokenize``, so a ``# noqa`` inside a string does not count. This runs
only for files that have findings.
"""
from __future__ import annotations

import io
import re
import tokenize
from typing import Optional

ALL = "*"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*[,\s]\s*[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"#\s*hpulint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_FILE = re.compile(r"^\s*#\s*hpulint:\s*noqa\s*$", re.I)
# a word every suppression comment above holds (matched the same way): without one, the file
# has no suppression and is not tokenized
_ANY = re.compile(r"noqa|hpulint", re.I)


class Suppressions:
    def __init__(self, source: str) -> None:
        self.by_line: dict = {}  # line -> set of codes or {ALL}
        self.file_level = False
        self._scan(source)

    def _scan(self, source: str) -> None:
        if not _ANY.search(source):
            return
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):  # pragma: no cover
            return
        for tok in tokens:
            if tok.type != tokenize.COMMENT:
                continue
            text = tok.string
            line = tok.start[0]
            if _FILE.match(tok.line) and tok.start[1] == len(tok.line) - len(tok.line.lstrip()):
                self.file_level = True
                continue
            for rx in (_NOQA, _IGNORE):
                m = rx.search(text)
                if m:
                    codes = m.group("codes")
                    found = {ALL} if not codes else {c.strip().upper() for c in re.split(r"[,\s]+", codes) if c.strip()}
                    self.by_line.setdefault(line, set()).update(found)

    def suppressed(self, code: str, line: int, statement_line: Optional[int] = None) -> bool:
        if self.file_level:
            return True
        for ln in (line, statement_line):
            if ln is None:
                continue
            codes = self.by_line.get(ln)
            if codes and (ALL in codes or any(code.startswith(c) for c in codes)):
                return True
        return False
