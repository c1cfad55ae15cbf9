"""A run frees each file's tree by reference counts, with Python's cyclic collector off.

The runner turns the collector off while it lints (it would otherwise walk every kept tree again
and again): that is only safe if nothing done with a file keeps its tree in a reference cycle.
These tests lint every fixture and look at what the collector would have had to free.
"""
from __future__ import annotations

import gc
from pathlib import Path

import libcst as cst
import pytest

import hpulint.runner as runner
from fixture_format import ROOT
from hpulint import Config
from hpulint.engine import FileState, parse_module
from hpulint.runner import lint_files

FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list:
    """Half of the fixtures (every rule's), copied into a project of their own: in place,
    linting them would index the whole hpulint checkout they belong to."""
    root = tmp_path_factory.mktemp("fixtures")
    (root / "pyproject.toml").write_text("[project]\nname = 'copies'\n")
    out = []
    for i, src in enumerate(FIXTURES[::2]):
        dst = root / f"{src.parent.name}_{i}_{src.name}"
        dst.write_text(src.read_text())
        out.append(dst)
    return out


def _garbage_after(fn) -> list:
    """What only the cyclic collector can free once ``fn()`` has returned (collector off)."""
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        results = fn()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_on:
            gc.enable()
    assert results
    return garbage


def test_the_fixtures_lint_with_every_tree_freed_by_reference_counts(files):
    assert len(files) > 50
    garbage = _garbage_after(lambda: lint_files(files, Config(), jobs=1))
    # (what is left is the linked project's facts, freed once per run, and small closures)
    assert [o for o in garbage if isinstance(o, cst.CSTNode)] == []


def test_if_a_cycle_kept_trees_the_run_would_still_collect_them(monkeypatch, files):
    # no tree kept between the phases (as on a repository far over KEEP_BYTES), and release
    # broken: every tree is left to the collector
    monkeypatch.setattr(runner, "KEEP_BYTES", 0)
    monkeypatch.setattr(FileState, "release", lambda self: None)
    monkeypatch.setattr(runner, "GC_OBJECTS", 10**9)
    unbounded = _nodes_in(_garbage_after(lambda: lint_files(files, Config(), jobs=1)))
    monkeypatch.setattr(runner, "GC_OBJECTS", 20_000)
    bounded = _nodes_in(_garbage_after(lambda: lint_files(files, Config(), jobs=1)))
    assert unbounded > 20_000
    assert bounded < unbounded / 4  # what is left: made since the last collection


def _nodes_in(objects: list) -> int:
    return sum(isinstance(o, cst.CSTNode) for o in objects)


def test_a_run_leaves_the_collector_as_it_found_it(files):
    for on in (True, False):
        (gc.enable if on else gc.disable)()
        lint_files(files[:1], Config(), jobs=1)
        assert gc.isenabled() is on
    gc.enable()


def test_the_unvalidated_parse_puts_libcst_s_validation_back():
    assert parse_module("x = 1\n").code == "x = 1\n"
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    for _ in range(2):  # after a parse that succeeded and one that raised
        with pytest.raises(cst.CSTValidationError):
            cst.Name("")
        with pytest.raises(cst.CSTValidationError):
            cst.SimpleWhitespace("x")
