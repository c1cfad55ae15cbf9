"""Reads the expectation header every file in fixtures/ carries.

A fixture is a runnable script (it runs unchanged on the simulated lazy device) whose first
comment lines say what hpulint must report and what a replay must count::

    # expect: HPU001@12 HPU001@13          (or: expect: none)
    # replay hpu: compiles=10 syncs=0 mark_steps=10
    # replay xla: compiles=10 syncs=0 mark_steps=10
    # replay ltc: compiles=10
    # replay compile: compiles=8 graph_breaks=0 recompiles=7 fallbacks=1
    # target: hpu                          (optional: the [tool.hpulint] target to lint with)

``replay P`` lines give the counts on the simulated device with profile P; ``replay ltc`` gives
PyTorch's real Lazy Tensor Core ``UncachedCompile`` count; ``replay compile`` gives what real
Dynamo (torch 2.13, CPU, eager backend) counts: graphs compiled (``unique_graphs``), graph
breaks, recompilations and eager fallbacks. Keys not given are not checked.

A fixture with a ``replay compile`` line and no ``replay hpu`` line is a *compile fixture*
(``Fixture.kind == "compile"``): it is run on real Dynamo only (tests/test_compile_fixtures.py),
not on the simulated lazy device.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_EXPECT = re.compile(r"^#\s*expect:\s*(.*)$")
_REPLAY = re.compile(r"^#\s*replay\s+(\w+):\s*(.*)$")
_TARGET = re.compile(r"^#\s*target:\s*(\w+)\s*$")
_ITEM = re.compile(r"^(HPU\d{3})@(\d+)$")
COMPILE_KEYS = ("compiles", "graph_breaks", "recompiles", "fallbacks")


@dataclass
class Fixture:
    path: Path
    expect: list = field(default_factory=list)  # [(code, line)], sorted
    replay: dict = field(default_factory=dict)  # profile -> {key: int}
    target: str | None = None

    @property
    def id(self) -> str:
        return str(self.path.relative_to(FIXTURES))

    @property
    def kind(self) -> str:
        """``compile`` for a fixture replayed on real Dynamo only, else ``lazy``."""
        return "compile" if "compile" in self.replay and "hpu" not in self.replay else "lazy"


def parse_fixture(path: Path) -> Fixture:
    fx = Fixture(path=path)
    seen_expect = False
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line.startswith("#"):
            break
        m = _EXPECT.match(line)
        if m:
            seen_expect = True
            body = m.group(1).strip()
            if body != "none":
                for item in body.replace(",", " ").split():
                    im = _ITEM.match(item)
                    if not im:
                        raise ValueError(f"{path}: bad expect item {item!r}")
                    fx.expect.append((im.group(1), int(im.group(2))))
            continue
        m = _REPLAY.match(line)
        if m:
            counts = {}
            for pair in m.group(2).split():
                key, _, value = pair.partition("=")
                if not value.isdigit():
                    raise ValueError(f"{path}: bad replay count {pair!r}")
                if m.group(1) == "compile" and key not in COMPILE_KEYS:
                    raise ValueError(f"{path}: unknown compile count {key!r} "
                                     f"(known: {', '.join(COMPILE_KEYS)})")
                counts[key] = int(value)
            fx.replay[m.group(1)] = counts
            continue
        m = _TARGET.match(line)
        if m:
            fx.target = m.group(1)
    if not seen_expect:
        raise ValueError(f"{path}: fixture has no '# expect:' header line")
    fx.expect.sort(key=lambda cl: (cl[1], cl[0]))
    return fx


PROJECTS = FIXTURES / "projects"  # multi-file projects: linted as projects (tests/test_projects.py)


def all_fixtures() -> list:
    return [parse_fixture(p) for p in sorted(FIXTURES.rglob("*.py")) if PROJECTS not in p.parents]


def project_fixtures() -> dict:
    """{project folder: [Fixture of each of its files]}"""
    out: dict = {}
    for p in sorted(PROJECTS.rglob("*.py")):
        project = PROJECTS / p.relative_to(PROJECTS).parts[0]
        out.setdefault(project, []).append(parse_fixture(p))
    return out


def lazy_fixtures() -> list:
    """The fixtures replayed on the simulated lazy device (every one with ``replay hpu``)."""
    return [fx for fx in all_fixtures() if fx.kind == "lazy"]


def compile_fixtures() -> list:
    """The fixtures replayed on real Dynamo only."""
    return [fx for fx in all_fixtures() if fx.kind == "compile"]
