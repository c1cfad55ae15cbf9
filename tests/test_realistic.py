"""`hpulint verify`, unchanged, on realistic training scripts (tests/data/realistic/).

The scripts are written for this project in the style of PyTorch/XLA's examples (decoder-only
with torch_xla.compile, MNIST, eager mode, eager with a compiled step, xmp.spawn), a Gaudi
lazy-mode script (htcore markers, hpex optimizer and clipping) and nanoGPT's train.py.

On the xla profile every one of them is a row of tests/data/calibration/xla.csv, measured on real
torch_xla 2.9, and tests/test_calibration.py holds the simulated counts to those (in process).
Here the command itself runs them on the hpu profile, whose counts are the simulation's (no Gaudi
was run), and the nanoGPT case is checked on both profiles against real torch_xla.
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from hpulint.lazy import cli  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "realistic"
TABLE = ROOT / "tests" / "data" / "calibration" / "xla.csv"


def verify(capsys, script, *argv, args=()):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    code = cli.run(parser.parse_args([str(script), *argv, "--format", "json", "--", *args]))
    return code, json.loads(capsys.readouterr().out)


def real_xla(script, args=""):
    with open(TABLE, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["script"] == f"tests/data/realistic/{script}" and row["args"] == args:
                return {k: int(row[k]) for k in ("compiles", "cached", "transfers", "mark_steps")}
    raise KeyError(script)


# script, its arguments, (compiles, cached, syncs, step markers) on the hpu profile
HPU = [
    ("xla_decoder_only.py", (), (2, 4, 2, 18)),
    ("xla_mnist.py", (), (5, 10, 2, 20)),
    ("xla_eager.py", ("--compile-step",), (9, 11, 2, 8)),
    ("xla_spawn.py", (), (3, 3, 3, 9)),
    ("gaudi_lazy.py", (), (3, 9, 3, 12)),
]


@pytest.mark.parametrize("name, args, counts", HPU, ids=[f"{n} {' '.join(a)}" for n, a, _ in HPU])
def test_realistic_script_runs_unchanged_on_the_hpu_profile(capsys, name, args, counts):
    code, data = verify(capsys, REAL / name, "--profile", "hpu", args=args)
    assert code == 0 and data["status"] == "ok", data["error"]
    assert data["not_stood_in"] == []
    assert (data["compiles"], data["cached"], data["syncs"], data["mark_steps"]) == counts


def test_the_hpu_profile_and_real_xla_agree_where_the_engines_do():
    # the lazy-mode scripts with no fallback read before a marker: the two profiles model the
    # same graphs, and the xla one equals real torch_xla
    for name, args, counts in HPU:
        if name in ("xla_decoder_only.py", "gaudi_lazy.py"):
            real = real_xla(name, " ".join(args))
            assert (real["compiles"], real["cached"], real["transfers"], real["mark_steps"]) == \
                counts


def test_gaudi_script_with_max_steps_stops_cleanly(capsys):
    code, data = verify(capsys, REAL / "gaudi_lazy.py", "--profile", "hpu", "--max-steps", "4")
    assert code == 0 and data["status"] == "stopped" and data["mark_steps"] == 4
    assert data["compiles"] == 3  # backward graph, optimizer graph, then the second step's


# nanoGPT (tests/data/realistic/nanogpt): --device=hpu, no markers, numpy-memmap batches indexed
# by a CPU torch.randint, loss.item() logging, 7 iterations (0..6) with evaluations at 0 and 5


def _host_lines():
    lines = (REAL / "nanogpt" / "train.py").read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("def get_batch"))
    return set(range(start + 1, start + 8))


@pytest.mark.parametrize("profile", ["xla", "hpu"])
def test_nanogpt_counts_equal_real_pytorch_xla_and_host_tensors_are_not_device_work(
        capsys, profile):
    code, data = verify(capsys, REAL / "nanogpt" / "train.py", "--profile", profile,
                        args=("--device=hpu",))
    assert code == 0 and data["status"] == "ok", data["error"]
    real = real_xla("nanogpt/train.py", "--device=xla")  # the same script on torch_xla 2.9
    assert (data["compiles"], data["cached"], data["syncs"]) == \
        (real["compiles"], real["cached"], real["transfers"]) == (9, 14, 23)
    # get_batch works on the host (numpy, a CPU randint, torch.stack): no read, no graph there
    host = _host_lines()
    assert not [e for e in data["events"] if e["kind"] == "sync" and e["line"] in host]
    reads = {e["line"]: e["count"] for e in data["events"] if e["kind"] == "sync"}
    assert sum(reads.values()) == 23
