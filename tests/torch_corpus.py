"""Linting the installed torch package file by file, compared with the reviewed findings in
``tests/data/torch_findings.txt``: shared by ``tests/test_corpus.py`` (a fixed part of the
package) and ``benchmarks/torch_package.py`` (all of it)."""
from __future__ import annotations

import importlib.util
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Optional

from hpulint.config import Config
from hpulint.engine import check_file

REVIEWED = Path(__file__).parent / "data" / "torch_findings.txt"


def torch_root() -> Optional[Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def torch_files() -> Optional[list]:
    """(path relative to the package, absolute path) of every .py file, sorted."""
    root = torch_root()
    if root is None:
        return None
    return sorted((p.relative_to(root).as_posix(), str(p)) for p in root.rglob("*.py"))


def reviewed() -> set:
    out = set()
    for line in REVIEWED.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            where, code = line.split()
            path, lineno = where.rsplit(":", 1)
            out.add((path, int(lineno), code))
    return out


def _lint(path: str):
    r = check_file(Path(path), Config())
    return [(f.code, f.line) for f in r.findings], [str(e) for e in r.errors]


def lint_files(files: list) -> tuple:
    """Findings {(rel, line, code)} and the errors other than libcst rejecting a file's syntax
    (a rule or the analysis must never fail)."""
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_lint, [p for _, p in files], chunksize=16))
    found, errors = set(), []
    for (rel, _), (findings, errs) in zip(files, results):
        found |= {(rel, line, code) for code, line in findings}
        errors += [e for e in errs if "syntax error" not in e]
    return found, errors


def compare(found: set, linted: set) -> tuple:
    """(new, gone): findings not reviewed, and reviewed findings in the linted files no longer
    reported."""
    expected = {r for r in reviewed() if r[0] in linted}
    return sorted(found - expected), sorted(expected - found)
