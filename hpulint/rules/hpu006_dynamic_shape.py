"""HPU006 dynamic-shape-in-hot-path: an op whose output shape depends on the data, every step.

Sources: Gaudi docs, "HPU Graphs for Training", *Dynamic Ops*: boolean indexing such
as ``tmp[torch.where(tmp > 0)]`` cannot be part of a static graph; the seed isolates it between
``mark_step`` calls and keeps the static parts in their own graphs. *Detecting frequent
graph re-compilations*: a shape that changes every step recompiles every step. On
PyTorch/XLA such ops either recompile per distinct shape or fall back to the host (the PyTorch/XLA debugging guide).
A slice bound that is a loop counter is HPU001's; this rule reports slice bounds read from tensor
data (``n = lengths.max().item(); x[:, :n]``).
"""
from __future__ import annotations

import libcst as cst

import re

from hpulint.analysis.build import mask_value
from hpulint.analysis.syntax import last_name
from hpulint.analysis.values import Arith, CallV, Elem, Join, K, Meth, Named, Ret, RetOf, Used
from hpulint.rules.base import Rule

# `sequence_mask`, `keep_mask` (a bare `mask` may be an index); an environment's `dones`,
# `terminals`: the episode ends of a replay batch, booleans (a float tensor is no index)
_MASK_NAME = re.compile(r"^\w+_mask$|^(?:\w+_)?(?:dones?|terminals?|terminated|truncated)$", re.I)

DYNAMIC = {
    "nonzero": "torch.nonzero",
    "argwhere": "torch.argwhere",
    "masked_select": "torch.masked_select",
    "unique": "torch.unique",
    "unique_consecutive": "torch.unique_consecutive",
}
ALTERNATIVE = {
    "store": "Keep the shape static: `x = torch.where(mask, v, x)` or `x.masked_fill_(mask, v)` instead "
             "of storing through the mask",
    "host-index": "Keep the selection on the device with a fixed shape (`torch.where`, a padded index), "
                  "or do the indexing on the host",
    "mask": "Keep the shape static: `torch.where(mask, x, 0)` (or multiply by the mask) instead of "
            "selecting the elements",
    "nonzero": "Keep the shape static (`torch.where(mask, x, 0)`, a padded `topk`), or isolate "
               "the dynamic part between step markers",
    "repeat_interleave": "Pass `output_size=` so the output shape is known",
    "slice": "Pad to a fixed bucket of sizes, or isolate the dynamic part between step markers",
    "size": "Use a fixed upper bound (the padded or maximum size) and mask the rest, or isolate the "
            "dynamic part between step markers",
}
MESSAGE = (
    "{what}: its output shape depends on the data, so the graph changes with the data and the "
    "device compiles again for each new shape ({why}). {alternative}"
)


class DynamicShapeInHotPath(Rule):
    code = "HPU006"
    name = "dynamic-shape-in-hot-path"
    summary = "boolean-mask indexing, nonzero, one-argument where, unique... in the hot path"
    triggers = ("[", "nonzero", "where", "masked_select", "unique", "repeat_interleave", "argwhere")
    lazy_mode_only = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.stores: set = set()  # ids of subscripts written to (x[mask] = v)
        self.covered: set = set()  # where(...) calls already reported as the index they make

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.stores.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        base = an.value(node.value)
        store = id(node) in self.stores
        for el in node.slice:
            s = el.slice
            if type(s) is cst.Index:
                idx = s.value
                if _is_where1(an, idx):
                    self.covered.add(id(idx))
                    self._report(node, "boolean-mask indexing", "mask", lambda: an.is_device_tensor(base))
                    return
                v = an.value(idx)
                if mask_value(v) or type(idx) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call):
                    what = "a boolean-mask store" if store else "boolean-mask indexing"
                    # (`x[keep_mask]`, `x[prefix_mask[..., 0]]`: a part of a mask is one too)
                    named = _MASK_NAME.search(last_name(idx.value if type(idx) is cst.Subscript else idx)
                                              or "") is not None

                    def is_mask(v=v, base=base, named=named):
                        # (a device tensor named as a mask, `tensor[sequence_mask]`, is one)
                        return an.is_device_tensor(base) and (an.is_mask(v) or (named and an.is_device_tensor(v)))

                    self._report(node, what, "store" if store else "mask", is_mask)

                    def host_index(v=v, base=base):
                        return an.is_device_tensor(base) and an.is_host(v)

                    if not store and an.host_index_source(idx):
                        self._report(node, "a host index array (from NumPy) into a device tensor", "host-index",
                                     host_index)
                    continue  # (`x[i, :, start:end]`: the slices after an index are bounds too)
            else:  # (a store through a data-dependent slice writes a data-dependent extent too)
                parts = [p for p in (s.lower, s.upper, s.step) if p is not None]
                bounds = [an.value(p) for p in parts]
                if bounds:
                    here = an.here()

                    def data_bound(bounds=bounds, base=base, parts=parts, here=here):
                        # a number read from a tensor once, before the step loop, is the same
                        # bound in every pass: one shape, not a new one per step
                        return an.is_device_tensor(base) and any(
                            an.is_device_tensor(b) or (an.is_data_scalar(b) and not an.same_every_pass(here, p))
                            for b, p in zip(bounds, parts))

                    self._report(node, "a slice bound read from tensor data", "slice", data_bound)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        qn = an.qualname(func) or ""
        method = func.attr.value if type(func) is cst.Attribute else None
        first = an.value(node.args[0].value) if node.args else None
        if _is_where1(an, node):
            if id(node) not in self.covered:
                self._report(node, "one-argument `torch.where`", "nonzero", lambda: not an.is_host(first))
            return
        for leaf, full in DYNAMIC.items():
            if qn == full:
                self._report(node, f"`{leaf}`", "nonzero", lambda: not an.is_host(first))
                return
            if method == leaf and not qn.startswith(("torch.", "numpy.")):
                recv = an.value(func.value)
                self._report(node, f"`{leaf}`", "nonzero", lambda recv=recv: an.is_device_tensor(recv))
                return
        topk = qn == "torch.topk" or (method == "topk" and not qn.startswith(("torch.", "numpy.")))
        if qn in SIZED_FACTORIES or topk:
            sizes = _topk_k(node, qn == "torch.topk") if topk else _size_args(node, qn)
            if sizes:
                here = an.here()
                values = [an.value(p) for p in sizes]

                def data_size(values=values, sizes=sizes, here=here):
                    # (a tensor computed here: an element of an argument unpacked, a packed
                    # sequence's `batch_sizes[0]`, may be a host tensor the analysis cannot place)
                    return any(_computed(q) and (an.is_device_tensor(q) or (
                        an.is_data_scalar(q) and not an.same_every_pass(here, p)))
                        for v, p in zip(values, sizes) for q in (v.parts if isinstance(v, Join) else (v,)))

                name = "topk" if topk else qn
                self._report(node, f"a {'bound' if name == 'torch.arange' else 'size'} read from tensor data given "
                                   f"to `{name}` (Python reads it from the device at every call)", "size", data_size)
            return
        if qn == "torch.repeat_interleave" or (method == "repeat_interleave" and not qn.startswith("torch.")):
            repeats = node.args[1:2] if qn == "torch.repeat_interleave" else node.args[:1]
            if any(a.keyword is not None and a.keyword.value == "output_size" for a in node.args):
                return
            if not repeats:
                return
            rep = an.value(repeats[0].value)
            recv = first if qn == "torch.repeat_interleave" else an.value(func.value)
            self._report(node, "`repeat_interleave` without `output_size`", "repeat_interleave",
                         lambda: an.is_device_tensor(recv) and an.is_tensor(rep))

    def _report(self, node: cst.CSTNode, what: str, kind: str, check) -> None:
        an = self.an
        here = an.here()

        def when():
            if not check():
                return None
            return an.every_step(here)

        self.report(node, MESSAGE.format(what=what, why="{why}", alternative=ALTERNATIVE[kind]), when=when)


# factories whose output shape is their arguments: `torch.zeros(batch, n)`, `torch.arange(n)`
SIZED_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "empty", "full", "rand", "randn", "arange"))


def _size_args(call: cst.Call, qn: str) -> list:
    """The expressions that give the output's shape: the positional sizes (or the parts of a
    tuple or list given as the size), the `size=` keyword; for `full`, its size only."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if qn == "torch.full":
        positional = positional[:1]
    kw = [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("size", "end", "start")]
    out = []
    for p in positional + kw:
        if type(p) in (cst.Tuple, cst.List):
            out += [e.value for e in p.elements if type(e) is cst.Element]
        else:
            out.append(p)
    return out


def _computed(v) -> bool:
    """Is the value computed by an operation (a reduction, arithmetic, a call's result), not only
    read out of a parameter or an attribute?"""
    while isinstance(v, (Elem, Named, Used)):
        v = v.base
    if isinstance(v, Join):
        return any(_computed(p) for p in v.parts)
    if isinstance(v, Arith) and v.op == "num":  # `int(batch_sizes[0])`: what the number is read from
        return any(_computed(p) for p in v.parts)
    return isinstance(v, (Arith, Meth, CallV, Ret, RetOf, K))


def _topk_k(call: cst.Call, function: bool) -> list:
    """`k` of `torch.topk(x, k)` / `x.topk(k)` (positional or keyword)."""
    kw = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "k"]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return kw or positional[1:2] if function else kw or positional[:1]


def _is_where1(an, node: cst.BaseExpression) -> bool:
    return type(node) is cst.Call and an.qualname(node.func) == "torch.where" and len(node.args) == 1 \
        and node.args[0].keyword is None

