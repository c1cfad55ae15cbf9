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

The second set, 20 scripts in tests/data/heldout/scripts2/, was written (commit 1256ab2) and
committed before any of them ran, for cases the first set did not stress: gradient accumulation
with a step every k micro-batches, a warmup factor and a clamp bound that are Python floats
changing every step, ``torch.where`` against mask indexing, ``.tolist()`` every step,
``xm.all_reduce``/``xm.mesh_reduce`` on one device, ``argmax`` and ``.item()`` in evaluation,
bucketed padding, ``repeat``/``expand`` by a step-dependent count, LSTM and GRU, dropout in train
and eval, a ``while`` loop that breaks on ``loss.item()``, ``torch.randperm`` moved to the device,
``zero_grad(set_to_none=False)``, ``clip_grad_norm_`` logged every k steps, ``MpDeviceLoader``
with a step closure, an EMA model, label smoothing and early stopping. Its table,
tests/data/heldout/xla2.csv (``calibrate_xla.py --heldout --set 2 xla``, same versions), was
compared once with the simulator unchanged: compilations equal on 18 of 20 rows, host transfers
on 19 of 20 (the honest estimate). The two causes were then found on torch_xla and modelled in
general: equal Python scalars of one type share one device-data parameter of a graph, and
``xm.mesh_reduce`` goes through ``xla_rendezvous`` (syncs, all-gathers on the device, reads
back). Now 20 of 20 on both; ``EXPECTED_DIFFERENCES_2`` says what the first run differed in.

The third set, 20 scripts in tests/data/heldout/scripts3/, was written (commit d900baf) and
committed before any of them ran, by someone who did not read the simulator: a transformer
encoder with a key padding mask, ``cross_entropy(..., ignore_index=-100)``, bf16
``torch.autocast("xla")``, activation checkpointing, ``CosineAnnealingLR`` with
``opt.step()`` + ``xm.mark_step()`` and ``StepLR`` with ``xm.optimizer_step``, weight tying,
``nn.Embedding(padding_idx=0)``, a CNN with BatchNorm in train and eval, ``torch.manual_seed`` at
every epoch, in-place ops through views, ``sort``/``topk``/``cumsum``, ``scatter_add_``, a metric
accumulated on the device and read once per epoch, a loss weight from a Python list (1.0, 0.0 and
others), ``no_grad`` inference with two batch sizes, a device tensor indexed by a loop variable,
``torch.tensor(list).to(device)`` every step, ``.shape`` in Python arithmetic and a state_dict
copied to the CPU every k steps. Its table, tests/data/heldout/xla3.csv
(``calibrate_xla.py --heldout --set 3 xla``, same versions), was measured before any hpulint run
(one script fixed and its row re-measured alone: torch.utils.checkpoint's non-reentrant form
fails on XLA tensors in torch 2.9, so it uses torch_xla.utils.checkpoint); rows that differ
after the first comparison go into ``EXPECTED_DIFFERENCES_3`` with their cause.
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
TABLE_2 = HELDOUT / "xla2.csv"
TABLE_3 = HELDOUT / "xla3.csv"


def _rows(table):
    with open(table, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


ROWS = _rows(TABLE)
ROWS_2 = _rows(TABLE_2)
ROWS_3 = _rows(TABLE_3)

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

# The first measurement differed on two rows (compilations 18 of 20, host transfers 19 of 20):
# ema_model_update.py (3 compilations against 4: torch_xla gives equal Python scalars of a graph
# one device-data parameter, and the EMA decay is 0.5 at step 8, so mul_(decay) and
# add_(p, alpha=1 - decay) share one) and mesh_reduce_all_reduce_single.py (8 compilations and 8
# transfers against 7 and 20: xm.mesh_reduce went through xla_rendezvous on torch_xla, a host
# call in the replay). Both causes were found on torch_xla and modelled in general
# (hpulint/lazy/scalar_data.py, hpulint/lazy/shims/xla_collectives.py, and live views computed
# at a step marker: the rendezvous reads slices of the gathered payload after its last sync).
EXPECTED_DIFFERENCES_2 = {
}

# The first (and only) comparison of set 3, simulator unchanged: 19 of 20 rows equal on both
# counts. The other stops at an import the replay does not stand in for, with the message that
# names it (torch_xla.utils.checkpoint; torch's own checkpoint cannot simply take its place: it
# looks up a `torch.xla` device module for the tensors' device).
EXPECTED_DIFFERENCES_3 = {
}
NOT_STOOD_IN_3 = {
    "tests/data/heldout/scripts3/gradient_checkpointing_blocks.py": "torch_xla.utils.checkpoint",
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


def test_the_second_table_covers_every_script_of_the_second_set():
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in (HELDOUT / "scripts2").glob("*.py"))
    assert len(scripts) == 20
    assert [r["script"] for r in ROWS_2] == scripts
    assert all(r["status"] == "ok" for r in ROWS_2)
    versions = json.loads((HELDOUT / "versions.json").read_text())
    assert versions["xla2"]["torch_xla"].startswith("2.9")
    assert versions["xla2"]["PJRT_DEVICE"] == "CPU"


def test_agreement_rate_on_the_second_set():
    real = {r["script"]: (int(r["compiles"]), int(r["transfers"])) for r in ROWS_2}
    compiles_differ = [s for s, (c, _, _) in EXPECTED_DIFFERENCES_2.items() if c != real[s][0]]
    transfers_differ = [s for s, (_, t, _) in EXPECTED_DIFFERENCES_2.items() if t != real[s][1]]
    # first measurement: compilations 18 of 20, host transfers 19 of 20; after the two fixes
    # (scalar data shared by value, the rendezvous of mesh_reduce) 20 of 20 on both
    assert (len(ROWS_2), len(ROWS_2) - len(compiles_differ),
            len(ROWS_2) - len(transfers_differ)) == (20, 20, 20)


def test_the_third_table_covers_every_script_of_the_third_set():
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in (HELDOUT / "scripts3").glob("*.py"))
    assert len(scripts) == 20
    assert [r["script"] for r in ROWS_3] == scripts
    assert all(r["status"] == "ok" for r in ROWS_3)
    versions = json.loads((HELDOUT / "versions.json").read_text())
    assert versions["xla3"]["torch_xla"].startswith("2.9")
    assert versions["xla3"]["PJRT_DEVICE"] == "CPU"


def test_agreement_rate_on_the_third_set():
    real = {r["script"]: (int(r["compiles"]), int(r["transfers"])) for r in ROWS_3}
    compiles_differ = [s for s, (c, _, _) in EXPECTED_DIFFERENCES_3.items() if c != real[s][0]]
    transfers_differ = [s for s, (_, t, _) in EXPECTED_DIFFERENCES_3.items() if t != real[s][1]]
    # the first comparison: 19 of 20 equal on each (the row that does not run counts as differing)
    assert len(ROWS_3) - len(compiles_differ) - len(NOT_STOOD_IN_3) == 19
    assert len(ROWS_3) - len(transfers_differ) - len(NOT_STOOD_IN_3) == 19


def _check(row, expected):
    sim = replay(str(ROOT / row["script"]), row["args"].split(), profile="xla")
    assert sim["status"] == "ok", sim.get("error")
    got = (sim["compiles"], sim["syncs"])
    real = (int(row["compiles"]), int(row["transfers"]))
    if row["script"] in expected:
        compiles, transfers, why = expected[row["script"]]
        assert got == (compiles, transfers), why
        assert got != real, "now equal: take the row out of the expected differences"
    else:
        assert got == real


@pytest.mark.parametrize("row", ROWS, ids=[Path(r["script"]).stem for r in ROWS])
def test_xla_profile_on_held_out_script(row):
    _check(row, EXPECTED_DIFFERENCES)


@pytest.mark.parametrize("row", ROWS_2, ids=[Path(r["script"]).stem for r in ROWS_2])
def test_xla_profile_on_second_held_out_set(row):
    _check(row, EXPECTED_DIFFERENCES_2)


@pytest.mark.parametrize("row", ROWS_3, ids=[Path(r["script"]).stem for r in ROWS_3])
def test_xla_profile_on_third_held_out_set(row):
    missing = NOT_STOOD_IN_3.get(row["script"])
    if missing is not None:
        sim = replay(str(ROOT / row["script"]), row["args"].split(), profile="xla")
        assert sim["status"] == "error" and sim["error"]["type"] == "NotStoodInModule"
        assert f"does not stand in for {missing}" in sim["error"]["message"]
        return
    _check(row, EXPECTED_DIFFERENCES_3)
