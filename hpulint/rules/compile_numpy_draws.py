"""NumPy random draws in a compiled region, for HPU012 (hpu012_host_read_breaks_graph).

Dynamo runs NumPy calls as torch ops (torch._numpy), but a draw that returns a Python number
(``np.random.uniform(a, b)`` without a size) is a host read, and a function torch's NumPy does not
have (``np.random.permutation``, ``default_rng``...) is not traced: each one a graph break
(measured on torch 2.13, docs/compile-target.md).
"""
from __future__ import annotations

import libcst as cst

NP_SCALAR = ("Dynamo runs NumPy calls as torch ops, but this draw returns a Python number, read "
             "to the host")
NP_MISSING = "Dynamo runs NumPy calls as torch ops, and torch's NumPy has no `{name}`"
FIX_NP = ("Draw it with torch in the graph (`torch.empty(()).uniform_(a, b)`, `torch.rand(())`), "
          "or draw it in the eager code and pass it in as a tensor")
# torch._numpy.random (torch 2.13): what Dynamo can run; the position of each one's `size`
NP_RANDOM = {"rand": 0, "randn": 0, "random": 0, "random_sample": 0, "sample": 0, "uniform": 2,
             "normal": 2, "randint": 2, "choice": 1, "seed": None, "shuffle": None}


def np_random_break(name: str, call: cst.Call):
    """Why `np.random.<name>(...)` breaks the graph (measured on 2.13), or None: a function torch's
    NumPy lacks, or a draw with no size (a Python number)."""
    if name not in NP_RANDOM:
        return NP_MISSING.format(name=f"np.random.{name}")
    at = NP_RANDOM[name]
    if at is None:
        return None
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    sized = len(positional) > at or any(a.keyword is not None and a.keyword.value == "size" for a in call.args) \
        or any(a.star for a in call.args)
    return None if sized else NP_SCALAR
