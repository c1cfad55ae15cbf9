"""The compile fixes, proven on real Dynamo: each bad compile fixture with a `.fixed` file, fixed,
equals that reviewed text, is stable under a second fix, prints the same results, and shows the
drop in graphs, graph breaks, recompiles and eager fallbacks that the rule page promises. A rule
whose fix is unsafe (HPU012: the moved print) fixes nothing without --unsafe-fixes."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from fixture_format import FIXTURES  # noqa: E402
from hpulint import Config  # noqa: E402
from hpulint.fix import fix_source  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402

pytestmark = pytest.mark.slow

BAD = sorted(p for p in FIXTURES.glob("HPU01[2-7]/bad_*.py") if p.with_suffix(".fixed").exists())
KEYS = ("compiles", "graph_breaks", "recompiles", "fallbacks")

# what each fix promises: (before, after) Dynamo counts
PROMISES = {
    # the print of a returned value moved out of the compiled function: its breaks are gone
    "HPU012": lambda a, b: a["graph_breaks"] >= 1 and b["graph_breaks"] == 0
    and b["compiles"] <= a["compiles"] and b["recompiles"] == 0 and b["fallbacks"] == 0,
    # dynamic=False removed, or mark_static -> maybe_mark_dynamic: a storm that ends in an eager
    # fallback -> a dynamic size (at most the one recompile of automatic dynamic shapes)
    "HPU015": lambda a, b: a["recompiles"] >= 7 and a["fallbacks"] == 1
    and b["compiles"] <= 2 and b["recompiles"] <= 1 and b["fallbacks"] == 0 and b["graph_breaks"] == 0,
}
UNSAFE = ("HPU012",)


def test_every_compile_fix_has_a_fixed_fixture():
    assert sorted({p.parent.name for p in BAD}) == sorted(PROMISES)


@pytest.mark.parametrize("path", BAD, ids=[p.parent.name + "/" + p.name for p in BAD])
def test_compile_fix_is_exact_safe_and_proven_by_dynamo(path, tmp_path, capsys):
    unsafe = path.parent.name in UNSAFE
    if unsafe:  # withheld without --unsafe-fixes
        assert fix_source(path.read_text(), str(path), Config(), unsafe=False).fixed == path.read_text()
    out = fix_source(path.read_text(), str(path), Config(), unsafe=unsafe)
    assert out.errors == [] and out.remaining == []
    assert out.fixed == path.with_suffix(".fixed").read_text()
    assert fix_source(out.fixed, str(path), Config(), unsafe=unsafe).fixed == out.fixed
    fixed = tmp_path / path.name
    fixed.write_text(out.fixed)
    capsys.readouterr()
    before = replay(str(path), profile="compile")
    printed_before = capsys.readouterr().out
    after = replay(str(fixed), profile="compile")
    printed_after = capsys.readouterr().out
    assert before["status"] == after["status"] == "ok", (before["error"], after["error"])
    assert printed_before and printed_after == printed_before  # the fixed script computes the same
    counts = ({k: before[k] for k in KEYS}, {k: after[k] for k in KEYS})
    assert PROMISES[path.parent.name](*counts), counts
