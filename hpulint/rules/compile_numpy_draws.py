"""NumPy random draws and NumPy functions torch's NumPy lacks in a compiled region, for HPU012
(hpu012_host_read_breaks_graph).

Dynamo runs NumPy calls as torch ops (torch._numpy), but a draw that returns a Python number
(``np.random.uniform(a, b)`` without a size) is a host read, and a function torch's NumPy does not
have (``np.random.permutation``, ``default_rng``...) is not traced: each one a graph break
(measured on torch 2.13, docs/compile-target.md). The same holds for the top-level functions
torch._numpy does not have (``np.interp``, ``np.argpartition``, ``np.nanmean``, ``np.isin``,
``np.digitize``...: "attempted to trace numpy function unsupported by PyTorch", a break at the
call whatever its arguments, Python numbers too); ``np.clip``, ``np.cumsum``, ``np.searchsorted``,
``np.histogram``, ``np.percentile`` and the rest of torch._numpy are traced.
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


# top-level NumPy functions torch._numpy (torch 2.13) does not have, that training and evaluation
# code calls (interp, argpartition, nanmean, isin, digitize, polyval, trapezoid, lexsort, union1d,
# delete, select, unravel_index, partition, nanmax measured: one break each)
NP_UNTRACED = frozenset({
    "interp", "argpartition", "partition", "digitize", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d",
    "lexsort", "delete", "insert", "select", "piecewise", "extract", "compress", "place", "putmask",
    "unravel_index", "ravel_multi_index", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "polyfit",
    "polyval", "poly", "polyadd", "polyder", "polydiv", "polyint", "polymul", "polysub", "roots", "trapezoid",
    "ediff1d", "frexp", "unwrap", "histogram_bin_edges", "apply_along_axis", "apply_over_axes", "asanyarray",
    "asarray_chkfinite", "packbits", "unpackbits", "trim_zeros", "sort_complex", "spacing", "block", "fromiter",
    "frombuffer", "fromfunction", "load", "loadtxt", "save", "savez", "savetxt", "array2string", "array_str",
    "array_repr", "mask_indices", "ix_", "cumulative_sum", "cumulative_prod", "vecdot", "matvec", "vecmat",
})
NP_UNTRACED_WHY = ("Dynamo runs NumPy calls as torch ops, and torch's NumPy has no `{name}` (\"attempted to trace "
                   "numpy function unsupported by PyTorch\")")
FIX_NP_UNTRACED = ("Do it with torch ops in the graph, or run it in the eager code and pass the result in as "
                   "a tensor")


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
