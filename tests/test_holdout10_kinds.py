"""Kinds the tenth held-out set showed wrong, once it became a development set
(tests/data/real_code_notes.md). Each has a look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def findings(src: str, select: tuple = ()) -> list:
    return [f for f in lint_source(textwrap.dedent(src), "run.py") if not select or f.code in select]


def found(src: str, select: tuple = ()) -> list:
    return [(f.code, f.line) for f in findings(src, select)]


# --- a step marker guarded by a torch.device compared with a string ---------------------------

DEVICE_TEST = """
import torch
import habana_frameworks.torch.core as htcore


def train(model, batches, opt, args):
    if args.device == "hpu":
        args.device = torch.device("hpu")
    model.to(args.device)
    for x, y in batches:
        loss = model(x.to(args.device), y.to(args.device))
        loss.backward()
        if {TEST}:
            htcore.mark_step()
        opt.step()
        if {TEST}:
            htcore.mark_step()
"""


def test_a_marker_under_a_device_object_compared_with_a_string_never_runs():
    # `torch.device("hpu") == "hpu"` is False: the markers never run, the graph is never cut
    out = findings(DEVICE_TEST.replace("{TEST}", 'args.device == "hpu"'), ("HPU004",))
    assert [(f.code, f.line) for f in out] == [("HPU004", 10)]
    assert "`if args.device == \"hpu\":`, which never holds" in out[0].message
    assert "Test `args.device.type == \"hpu\"` instead" in out[0].message
    assert out[0].fix is None  # the fix is to the test, not another marker


def test_a_device_type_test_or_an_inequality_marks_the_step():
    assert found(DEVICE_TEST.replace("{TEST}", 'args.device.type == "hpu"'), ("HPU004",)) == []
    # `!=` a string always holds for a torch.device: the marker runs every step
    assert found(DEVICE_TEST.replace("{TEST}", 'args.device != "cpu"'), ("HPU004",)) == []


def test_the_comparison_before_the_conversion_or_after_a_rebinding_still_holds():
    # the first test sees the string; a name bound to a string again compares as a string
    src = DEVICE_TEST.replace("{TEST}", 'args.device == "hpu"').replace(
        "    model.to(args.device)\n", "    model.to(args.device)\n    args.device = \"hpu\"\n")
    assert found(src, ("HPU004",)) == []
    # converted under a test of another string: on the other path it may still be "hpu"
    src = DEVICE_TEST.replace("{TEST}", 'args.device == "hpu"').replace(
        'if args.device == "hpu":\n        args.device', 'if args.device == "gaudi":\n        args.device')
    assert found(src, ("HPU004",)) == []


def test_a_conversion_on_every_path_makes_any_string_comparison_false():
    src = """
    import torch
    import habana_frameworks.torch.core as htcore


    def train(model, batches, opt, device):
        device = torch.device(device)
        for x, y in batches:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            if device == "hpu:0":
                htcore.mark_step()
            opt.step()
    """
    assert found(src, ("HPU004",)) == [("HPU004", 8)]


# --- a NumPy index built from data, kept in a name, into a device tensor ---------------------

HOST_INDEX = """
import numpy as np
import torch


def train(model, sampler, opt, steps):
    for step in range(steps):
        users, seqs, pos = sampler.next_batch()
        pos = np.array(pos)
        logits = model(users, seqs)
        {INDEX}
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[keep], torch.ones_like(logits[keep]))
        loss.backward()
        opt.step()
"""


def test_a_name_bound_to_a_numpy_index_from_data_selects_a_data_dependent_shape():
    # `keep = np.where(pos != 0)`: how many positions it keeps follows each batch's padding
    assert found(HOST_INDEX.replace("{INDEX}", "keep = np.where(pos != 0)"), ("HPU006",)) == \
        [("HPU006", 12), ("HPU006", 12)]
    rows = HOST_INDEX.replace("{INDEX}", "keep, _ = np.nonzero(pos)")
    assert found(rows, ("HPU006",)) == [("HPU006", 12), ("HPU006", 12)]


def test_a_fixed_numpy_index_or_a_rebound_name_is_no_data_dependent_shape():
    assert found(HOST_INDEX.replace("{INDEX}", "keep = np.arange(4)"), ("HPU006",)) == []
    rebound = HOST_INDEX.replace("{INDEX}", "keep = np.where(pos != 0)\n        keep = slice(0, 4)")
    assert found(rebound, ("HPU006",)) == []


def test_numpy_through_a_star_import_is_numpy(tmp_path, capsys, monkeypatch):
    # `from utils import *` where utils.py imports numpy as np: `np.where` is NumPy's
    from snippets import lint_project

    helpers = "import numpy as np\nimport torch\n\n\ndef seed():\n    return 0\n"
    script = HOST_INDEX.replace("import numpy as np\nimport torch\n", "import torch\nfrom utils import *\n").replace(
        "{INDEX}", "keep = np.where(pos != 0)")
    out = lint_project(tmp_path, {"utils.py": helpers, "train.py": script}, capsys, monkeypatch)
    assert [x for x in out if "HPU006" in x] == ["train.py:12:69:HPU006", "train.py:12:99:HPU006"]
    # a file that binds `np` itself keeps its own meaning
    shadowed = script.replace("from utils import *\n", "from utils import *\nnp = None\n")
    out = lint_project(tmp_path, {"utils.py": helpers, "train.py": shadowed}, capsys, monkeypatch)
    assert [x for x in out if "HPU006" in x] == []
