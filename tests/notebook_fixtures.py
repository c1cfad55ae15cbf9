"""Reads the expectation header of the notebooks in fixtures/notebooks/.

The first code cell of each notebook starts with comment lines, like a script fixture's header
(tests/fixture_format.py) but with positions as CELL:LINE::

    # expect: HPU001@4:4 HPU001@4:5        (or: expect: none)
    # replay hpu: compiles=10 syncs=1 mark_steps=10
    # fixed expect: none                    (after --fix --unsafe-fixes, NAME.ipynb.fixed)
    # fixed replay hpu: compiles=2 syncs=1 mark_steps=10
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "fixtures" / "notebooks"

_LINE = re.compile(r"^#\s*(fixed )?(expect|replay (\w+)):\s*(.*)$")
_ITEM = re.compile(r"^(HPU\d{3})@(\d+):(\d+)$")


@dataclass
class NotebookFixture:
    path: Path
    expect: list = field(default_factory=list)  # [(code, cell, line)]
    replay: dict = field(default_factory=dict)  # profile -> {key: int}
    fixed_expect: list | None = None
    fixed_replay: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def fixed(self) -> Path:
        return self.path.with_name(self.path.name + ".fixed")


def _items(body: str, path: Path) -> list:
    if body.strip() == "none":
        return []
    out = []
    for item in body.split():
        m = _ITEM.match(item)
        if not m:
            raise ValueError(f"{path}: bad expect item {item!r}")
        out.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return out


def parse(path: Path) -> NotebookFixture:
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    fx = NotebookFixture(path)
    seen = False
    for line in "".join(first["source"]).splitlines():
        if not line.startswith("#"):
            break
        m = _LINE.match(line)
        if not m:
            continue
        fixed, kind, profile, body = m.groups()
        if kind == "expect":
            items = _items(body, path)
            if fixed:
                fx.fixed_expect = items
            else:
                fx.expect, seen = items, True
        else:
            counts = {k: int(v) for k, _, v in (p.partition("=") for p in body.split())}
            (fx.fixed_replay if fixed else fx.replay)[profile] = counts
    if not seen:
        raise ValueError(f"{path}: no '# expect:' line in the first code cell")
    return fx


def all_notebooks() -> list:
    return [parse(p) for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
