"""The data every part of hpulint shares: findings, fixes and errors.

Nothing here imports libcst at module level beyond typing, and nothing imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass
class Fix:
    """An autofix: libcst node replacements inside one parsed module.

    ``changes`` maps a node of the parsed module (by identity) to its replacement: a node, a
    ``libcst.FlattenSentinel`` (to insert statements) or ``libcst.RemovalSentinel.REMOVE``.
    ``imports`` are module-level import statements (source text) that the fix needs; they are
    added once, after the file's last top-level import.
    """

    applicability: str  # SAFE or UNSAFE
    description: str
    changes: dict = field(default_factory=dict)
    imports: tuple = ()


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    line: int
    col: int  # 1-based, like the text output
    end_line: int
    end_col: int
    fix: Optional[Fix] = None
    node: Any = field(default=None, repr=False, compare=False)
    cell: Optional[int] = None  # a notebook's cell (1-based over all cells); line and col are in it

    @property
    def where(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"

    @property
    def fix_applicability(self) -> Optional[str]:
        return self.fix.applicability if self.fix else None

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "path": self.path,
            "cell": self.cell,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "message": self.message,
            "fix": self.fix_applicability,
        }


@dataclass
class FileError:
    """A file hpulint could not lint: unreadable, not UTF-8, a syntax error, a rule crash."""

    path: str
    message: str
    line: Optional[int] = None
    col: Optional[int] = None
    cell: Optional[int] = None  # a notebook's cell; line and col are then in the cell

    def __str__(self) -> str:
        where = self.path
        if self.cell is not None:
            where += f":cell {self.cell}"
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: error: {self.message}"


class ConfigError(Exception):
    """A bad [tool.hpulint] table or command line: exit status 2."""
