"""Every fix, proven by replay: each bad fixture, fixed, equals its reviewed `.fixed` text, still
prints the same results, and shows on the simulated device the drop the rule page promises."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from fixture_format import FIXTURES  # noqa: E402
from hpulint import Config  # noqa: E402
from hpulint.fix import fix_source  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402

BAD = sorted(p for p in FIXTURES.glob("HPU00*/bad_*.py") if p.with_suffix(".fixed").exists())

# what each fix promises, per profile: (key, before, after) checks on the replay counts
PROMISES = {
    "HPU001": lambda a, b: a["compiles"] >= 9 and b["compiles"] <= 2,  # a new graph per pass -> one
    "HPU002": lambda a, b: a["syncs"] >= 10 and b["syncs"] == 0,  # a sync per forward -> none
    "HPU003": lambda a, b: a["compiles"] >= 10 and b["compiles"] <= 3,  # a new shape per step -> fixed
    "HPU004": lambda a, b: a["mark_steps"] == 0 and b["mark_steps"] >= 10  # one growing graph ->
    and b["max_graph_nodes"] * 5 < a["max_graph_nodes"] and b["cached"] >= 10,  # a small cached one
}


def test_every_fixable_rule_has_a_fixed_fixture():
    assert sorted({p.parent.name for p in BAD}) == sorted(PROMISES)


@pytest.mark.parametrize("path", BAD, ids=[p.parent.name + "/" + p.name for p in BAD])
def test_fix_is_exact_idempotent_and_proven_by_replay(path, tmp_path, capsys):
    out = fix_source(path.read_text(), str(path), Config(), unsafe=True)
    assert out.errors == [] and out.remaining == []
    assert out.fixed == path.with_suffix(".fixed").read_text()
    assert fix_source(out.fixed, str(path), Config(), unsafe=True).fixed == out.fixed
    fixed = tmp_path / path.name
    fixed.write_text(out.fixed)
    for profile in ("hpu", "xla"):
        capsys.readouterr()
        before = replay(str(path), profile=profile)
        printed_before = capsys.readouterr().out
        after = replay(str(fixed), profile=profile)
        printed_after = capsys.readouterr().out
        assert before["status"] == after["status"] == "ok", (before["error"], after["error"])
        assert printed_after == printed_before  # the fixed script computes the same results
        assert PROMISES[path.parent.name](before, after), (profile, before, after)
