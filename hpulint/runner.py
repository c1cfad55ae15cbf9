"""Lint many files: cached results first, then the rest over worker processes.

This module imports the engine (and so libcst) only when a file has to be linted, so a re-run
on unchanged files never pays for the parser's import.
"""
from __future__ import annotations

from pathlib import Path

from hpulint.config import Config


def _light(result):
    """A result that pickles cheaply: no tree, no nodes, fixes reduced to their applicability."""
    from hpulint.model import Fix

    for f in result.findings:
        f.node = None
        if f.fix is not None:
            f.fix = Fix(f.fix.applicability, f.fix.description)
    result.module = None
    result.source = None
    return result


def _lint_for_pool(job: tuple):
    from hpulint.engine import check_file

    path, config = job
    return _light(check_file(Path(path), config))


def lint_files(paths: list, config: Config, jobs: int = 1, cache=None) -> list:
    """Lint many files, reusing cached results and spreading the rest over ``jobs`` processes.

    Returns one :class:`hpulint.engine.FileResult` per path, in the order given.
    """

    results: dict = {}
    keys: dict = {}
    todo = []
    for p in paths:
        name = str(p)
        if cache is not None:
            try:
                data = Path(p).read_bytes()
            except OSError:
                data = None
            if data is not None:
                key = cache.key(name, data)
                hit = cache.get(key)
                if hit is not None:
                    results[name] = _Cached(name, hit[0], hit[1])
                    continue
                keys[name] = key
        todo.append(name)
    if jobs > 1 and len(todo) >= 2 * jobs:
        from concurrent.futures import ProcessPoolExecutor

        chunk = max(1, min(32, len(todo) // (jobs * 4)))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for name, res in zip(todo, pool.map(_lint_for_pool, [(n, config) for n in todo], chunksize=chunk)):
                results[name] = res
    elif todo:
        from hpulint.engine import check_file

        for name in todo:
            results[name] = _light(check_file(Path(name), config))
    if cache is not None:
        for name in todo:
            res = results[name]
            if name in keys and not any("internal error" in e.message or "failed:" in e.message for e in res.errors):
                cache.put(keys[name], res.findings, res.errors)
    return [results[str(p)] for p in paths]


class _Cached:
    """A cached file's result: the same fields the CLI reads from a FileResult."""

    def __init__(self, path: str, findings: list, errors: list) -> None:
        self.path = path
        self.findings = findings
        self.errors = errors
