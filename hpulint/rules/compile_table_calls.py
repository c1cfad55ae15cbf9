"""Calls known by their qualified name to break the graph in a compiled region, for HPU012: clock
reads and Python random draws Dynamo skips, `copy.deepcopy` of a tensor or module, `torch.autograd`
calls, NumPy draws and functions `torch._numpy` lacks, and the torch functions of
:mod:`hpulint.rules.compile_untraced_ops`. Each entry's measurement is with its table."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.rules.compile_numpy_draws import FIX_NP, FIX_NP_UNTRACED, NP_UNTRACED, NP_UNTRACED_WHY, np_random_break
from hpulint.rules.compile_read_messages import (AUTOGRAD, CLOCKS, DEEPCOPY, FIX_BACKWARD, FIX_DEEPCOPY, FIX_RANDOM,
                                                 FIX_TIME, PY_RANDOM, SKIPPED)
from hpulint.rules.compile_untraced_ops import TORCH_UNTRACED
from hpulint.rules.compiled_region import is_tensor


def table_call(an, node: cst.Call, qn: str) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call of ``qn`` that breaks the graph, else None."""
    module, _, name = qn.rpartition(".")
    if (module == "time" and name in CLOCKS) or (module == "random" and name in PY_RANDOM):
        kind = "a C builtin" if module == "time" or name in ("random", "getrandbits") else "marked as skipped"
        return (f"`{qn}()`", SKIPPED.format(name=qn, kind=kind), FIX_TIME if module == "time" else FIX_RANDOM,
                lambda: True)
    if qn == "copy.deepcopy" and node.args:
        v = an.value(node.args[0].value)
        return "`copy.deepcopy()`", DEEPCOPY, FIX_DEEPCOPY, lambda: is_tensor(an, v) or an.kind(v) == "model"
    if qn in ("torch.autograd.grad", "torch.autograd.backward"):
        return f"`{qn}()`", AUTOGRAD, FIX_BACKWARD, lambda: True
    if qn.startswith("numpy.random.") and qn.count(".") == 2:
        why = np_random_break(name, node)
        return (f"`np.random.{name}(...)`", why, FIX_NP, lambda: True) if why is not None else None
    if qn.startswith("numpy.") and qn.count(".") == 1 and qn[6:] in NP_UNTRACED:
        return f"`np.{qn[6:]}(...)`", NP_UNTRACED_WHY.format(name=f"np.{qn[6:]}"), FIX_NP_UNTRACED, lambda: True
    if qn in TORCH_UNTRACED:
        return f"`{qn}(...)`", TORCH_UNTRACED[qn][0], TORCH_UNTRACED[qn][1], lambda: True
    return None
