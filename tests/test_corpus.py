"""Precision and robustness on real code: the installed torch package (library code, not
training loops). Every finding there was reviewed; tests/data/torch_findings.txt lists them
with the reason each is one a user would agree with. A new finding fails this test until it is
reviewed (a false positive is a bug to fix in the rule, not a line to add).

The suite lints a fixed part of the package, to stay within its time budget: every file with a
reviewed finding and a quarter of the others, chosen by a hash of the path (the same files on
every machine and every run). ``python benchmarks/torch_package.py`` checks all of it."""
from __future__ import annotations

import zlib

import pytest

from torch_corpus import compare, lint_files, reviewed, torch_files


def in_sample(rel: str, with_findings: set) -> bool:
    return rel in with_findings or zlib.crc32(rel.encode()) % 4 == 0


@pytest.mark.slow
def test_torch_package_is_quiet_and_never_crashes_the_linter():
    files = torch_files()
    if files is None:
        pytest.skip("torch is not installed")
    assert len(files) > 2000
    with_findings = {r[0] for r in reviewed()}
    sample = [f for f in files if in_sample(f[0], with_findings)]
    assert len(files) // 5 < len(sample) < len(files) // 3
    found, errors = lint_files(sample)
    # libcst may reject a file; a rule or the analysis must never fail
    assert errors == []
    new, gone = compare(found, {rel for rel, _ in sample})
    assert new == [], "new findings on torch/: review them (benchmarks/torch_package.py)"
    assert gone == [], "reviewed findings no longer reported: update the list"


def test_a_function_that_returns_itself_called_on_a_parameter_ends():
    # torch/_export/serde/serialize.py: `_resolve_schema_cls(cls)` returns
    # `_resolve_schema_cls(cls.__forward_arg__)` or its parameter, and `_dict_to_dataclass` recurses
    # through it; resolving what a call returns substituted the arguments anew at each level until
    # Python's recursion limit
    files = torch_files()
    if files is None:
        pytest.skip("torch is not installed")
    from pathlib import Path

    from hpulint.config import Config
    from hpulint.engine import check_file

    path = next(p for rel, p in files if rel == "_export/serde/serialize.py")
    result = check_file(Path(path), Config())
    assert result.errors == []
