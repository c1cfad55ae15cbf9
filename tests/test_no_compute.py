"""`hpulint verify --no-compute`: device ops give their results' shapes, not their values.

The counts of a script whose control flow does not depend on device values are the same with and
without it (checked here on realistic scripts, on both profiles); small results read as zeros;
ops the meta kernels cannot handle, and in-place ops that change a tensor's shape, run for real.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hpulint.lazy import cli  # noqa: E402
from hpulint.lazy.ops import OpInfo  # noqa: E402
from hpulint.lazy.replay import replay  # noqa: E402
from hpulint.lazy.shapes import NO_COMPUTE, run_shapes_only  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "realistic"


def _counts(r):
    return r["compiles"], r["cached"], r["syncs"], r["mark_steps"], r["status"]


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["xla", "hpu"])
@pytest.mark.parametrize("name, args", [
    ("xla_decoder_only.py", ()), ("gaudi_lazy.py", ()), ("xla_eager.py", ()),
    ("nanogpt/train.py", ("--device=hpu",))])
def test_counts_are_the_same_without_computing(name, args, profile):
    computed = replay(str(REAL / name), list(args), profile=profile)
    shapes = replay(str(REAL / name), list(args), profile=profile, compute=False)
    assert computed["status"] == "ok", computed["error"]
    assert _counts(shapes) == _counts(computed)
    assert shapes["max_graph_nodes"] == computed["max_graph_nodes"]
    assert NO_COMPUTE in shapes["assumptions"] and NO_COMPUTE not in computed["assumptions"]


def test_the_report_says_values_were_not_computed(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\n"
        "import torch_xla.core.xla_model as xm\n"
        "dev = xm.xla_device()\n"
        "w = torch.ones(3, 3).to(dev)\n"
        "for _ in range(3):\n"
        "    w = w @ w + 1.0\n"
        "    xm.mark_step()\n"
        "open(__file__ + '.out', 'w').write(str(w.sum().item()))\n")
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert cli.run(parser.parse_args([str(script), "--profile", "xla", "--no-compute"])) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "s.py.out").read_text() == "0.0"  # a small result reads as zero
    assert "assumption: --no-compute: device ops were not computed" in out
    assert "compilations       2" in out and "host syncs         1" in out


def test_no_compute_is_refused_where_it_does_not_apply(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args([str(script), "--profile", "compile", "--no-compute"])
    assert cli.run(args) == 2
    assert "--no-compute applies to the simulated device" in capsys.readouterr().err


def _op(func, *args, **kwargs):
    return run_shapes_only(func, OpInfo(func), args, kwargs)


def test_results_have_the_layout_of_the_real_op_and_small_ones_are_zero():
    a, b = torch.randn(4, 3), torch.randn(3, 5)
    out = _op(torch.ops.aten.mm.default, a, b)
    assert out.shape == (4, 5) and out.dtype == a.dtype and not out.any()
    t = _op(torch.ops.aten.t.default, b)  # not an OP: the caller runs views for real, but a
    assert t.shape == (5, 3)              # direct call still has the right layout
    vals, idx = _op(torch.ops.aten.max.dim, a, 1)
    assert vals.shape == (4,) and idx.dtype == torch.int64
    parts = _op(torch.ops.aten._foreach_mul.Scalar, [a, b], 2.0)
    assert [p.shape for p in parts] == [(4, 3), (3, 5)]


def test_in_place_ops_are_skipped_unless_they_change_a_shape():
    a = torch.ones(2, 2)
    assert _op(torch.ops.aten.add_.Tensor, a, torch.ones(2, 2)) is a
    assert a.eq(1).all()  # the value was not needed, so it was not computed
    out = torch.empty(0)
    res = _op(torch.ops.aten.add.out, torch.ones(3), torch.ones(3), out=out)
    assert res is out and out.shape == (3,) and out.eq(2).all()  # resized: run for real
    r = torch.zeros(1)
    _op(torch.ops.aten.resize_.default, r, [4])
    assert r.shape == (4,)


def test_an_op_without_a_meta_kernel_runs_for_real():
    x = torch.tensor([3.0, 1.0, 2.0])
    # nonzero's meta kernel cannot know its output size: computed on the values
    assert _op(torch.ops.aten.nonzero.default, x).shape == (3, 1)


def test_a_big_result_is_not_filled(monkeypatch):
    import hpulint.lazy.shapes as shapes

    monkeypatch.setattr(shapes, "ZERO_FILL_LIMIT", 4)
    calls = []
    real_zero = torch.Tensor.zero_
    monkeypatch.setattr(torch.Tensor, "zero_", lambda t: calls.append(t.numel()) or real_zero(t))
    _op(torch.ops.aten.mm.default, torch.randn(2, 2), torch.randn(2, 2))
    _op(torch.ops.aten.mm.default, torch.randn(4, 4), torch.randn(4, 4))
    assert calls == [4]
