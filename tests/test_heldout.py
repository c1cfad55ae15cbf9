"""The xla profile on scripts it was not tuned on: tests/data/heldout/.

The 23 scripts in tests/data/heldout/scripts/ were written (commit 7643bee) before any of them
ran through hpulint or torch_xla, in the style of PyTorch/XLA training and evaluation code, for
the cases of issue 11: Python scalars 0, 1 and others, host tensors and numpy arrays moved with
``.to(device)``, reads every k steps, boolean masks, ``nonzero``, ``if`` on a tensor, short last
batches, optimizers with and without momentum, schedulers, eager mode, ``torch_xla.compile``,
step closures, ``MpDeviceLoader``/``ParallelLoader`` and ``xu.SampleGenerator``.

tests/data/heldout/xla.csv was measured on torch 2.9.0 + torch_xla 2.9.0 (PJRT_DEVICE=CPU) by
``benchmarks/calibrate_xla.py --heldout xla``. The first comparison (hpulint at the commit that
added the scripts) agreed on 19 of 23 rows for compilations (23 of 23 for host transfers). Three
causes were then found with torch_xla and fixed in the simulator in general (not per script):
a scalar operand is taken in the op's float type before the 0/1 test (AdamW's ``1 - lr * wd``
is 1.0 in float32 when OneCycleLR ends at lr 4e-8), and in eager mode ``zeros``/``empty`` run one
graph (the upload graph of that shape), views run as graphs of their own, and each result of a
multi-result op is synced on its own. Rows still different are in ``EXPECTED_DIFFERENCES``.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from hpulint.lazy.replay import replay  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HELDOUT = ROOT / "tests" / "data" / "heldout"
TABLE = HELDOUT / "xla.csv"

with open(TABLE, newline="", encoding="utf-8") as _f:
    ROWS = list(csv.DictReader(_f))

# script -> (simulated compiles, simulated transfers, why they differ from PyTorch/XLA)
EXPECTED_DIFFERENCES = {
    "tests/data/heldout/scripts/nonzero_detections.py": (
        2, 8, "torch.randn(..., device=device) draws from XLA's generator on the real engine and "
              "from the CPU's in the replay: at the fourth batch 7 of 8 scores pass the "
              "threshold on torch_xla and 8 in the replay, so the gathered shape changes (one "
              "more compilation) only on torch_xla; the host reads are the same"),
    "tests/data/heldout/scripts/eager_training_with_sync.py": (
        19, 1, "eager mode: autograd picks the formula of addmm's weight gradient by the strides "
               "of w.t(); an XLA tensor reports contiguous strides (x.t() then mm: the t graph "
               "is the forward's, cached), a CPU tensor the transposed ones (grad.t() then mm: "
               "one more t graph of a new shape)"),
}


def test_the_table_covers_every_held_out_script():
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in (HELDOUT / "scripts").glob("*.py"))
    assert len(scripts) >= 15
    assert [r["script"] for r in ROWS] == scripts
    assert all(r["status"] == "ok" for r in ROWS)
    versions = json.loads((HELDOUT / "versions.json").read_text())
    assert versions["xla"]["torch_xla"].startswith("2.9")
    assert versions["xla"]["PJRT_DEVICE"] == "CPU"


def test_agreement_rate_on_host_transfers_and_compilations():
    compiles_differ = [s for s, (c, _, _) in EXPECTED_DIFFERENCES.items()
                       if c != int(next(r for r in ROWS if r["script"] == s)["compiles"])]
    transfers_differ = [s for s, (_, t, _) in EXPECTED_DIFFERENCES.items()
                        if t != int(next(r for r in ROWS if r["script"] == s)["transfers"])]
    # host transfers: 23 of 23 rows; compilations: 21 of 23 (91.3%, under the 95% target)
    assert transfers_differ == []
    assert (len(ROWS), len(ROWS) - len(compiles_differ)) == (23, 21)


@pytest.mark.parametrize("row", ROWS, ids=[Path(r["script"]).stem for r in ROWS])
def test_xla_profile_on_held_out_script(row):
    sim = replay(str(ROOT / row["script"]), row["args"].split(), profile="xla")
    assert sim["status"] == "ok", sim.get("error")
    got = (sim["compiles"], sim["syncs"])
    real = (int(row["compiles"]), int(row["transfers"]))
    if row["script"] in EXPECTED_DIFFERENCES:
        compiles, transfers, why = EXPECTED_DIFFERENCES[row["script"]]
        assert got == (compiles, transfers), why
        assert got != real, "now equal: take the row out of EXPECTED_DIFFERENCES"
    else:
        assert got == real
