"""HPU006 dynamic-shape-in-hot-path: an op whose output shape depends on the data, every step.

Sources: seed 001 (Gaudi docs, "HPU Graphs for Training", *Dynamic Ops*): boolean indexing such
as ``tmp[torch.where(tmp > 0)]`` cannot be part of a static graph; the seed isolates it between
``mark_step`` calls and keeps the static parts in their own graphs. Seed 000 (*Detecting frequent
graph re-compilations*): a shape that changes every step recompiles every step. On
PyTorch/XLA such ops either recompile per distinct shape or fall back to the host (seed 003).
A slice bound that is a loop counter is HPU001's; this rule reports slice bounds read from tensor
data (``n = lengths.max().item(); x[:, :n]``).
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule

DYNAMIC = {
    "nonzero": "torch.nonzero",
    "argwhere": "torch.argwhere",
    "masked_select": "torch.masked_select",
    "unique": "torch.unique",
    "unique_consecutive": "torch.unique_consecutive",
}
ALTERNATIVE = {
    "mask": "Keep the shape static: `torch.where(mask, x, 0)` (or multiply by the mask) instead of "
            "selecting the elements",
    "nonzero": "Keep the shape static (`torch.where(mask, x, 0)`, a padded `topk`), or isolate "
               "the dynamic part between step markers",
    "repeat_interleave": "Pass `output_size=` so the output shape is known",
    "slice": "Pad to a fixed bucket of sizes, or isolate the dynamic part between step markers",
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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.stores: set = set()  # ids of subscripts written to: x[mask] = v keeps x's shape
        self.covered: set = set()  # where(...) calls already reported as the index they make

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.stores.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        an = self.an
        if id(node) in self.stores or not an.is_tensor(node.value) or an.is_host(node.value):
            return
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index) and (an.is_mask(s.value) or _is_where1(an, s.value)):
                self.covered.add(id(s.value))
                self._report(node, "boolean-mask indexing", "mask")
                return
            if isinstance(s, cst.Slice) and any(
                    p is not None and an.is_data_scalar(p) for p in (s.lower, s.upper, s.step)):
                self._report(node, "a slice bound read from tensor data", "slice")
                return

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        qn = an.qualname(func) or ""
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if qn.startswith("torch.") and node.args and an.is_host(node.args[0].value):
            return  # torch.unique(host_tensor): runs on the host, the device sees its result as data
        if _is_where1(an, node):
            if id(node) not in self.covered:
                self._report(node, "one-argument `torch.where`", "nonzero")
            return
        for leaf, full in DYNAMIC.items():
            if qn == full or (method == leaf and an.is_tensor(func.value) and not an.is_host(func.value)):
                self._report(node, f"`{leaf}`", "nonzero")
                return
        if qn == "torch.repeat_interleave" or (method == "repeat_interleave" and an.is_tensor(func.value)):
            repeats = node.args[1:2] if qn == "torch.repeat_interleave" else node.args[:1]
            if any(a.keyword is not None and a.keyword.value == "output_size" for a in node.args):
                return
            if repeats and not an.is_tensor(repeats[0].value):
                return  # an int repeat count: the output shape is static
            self._report(node, "`repeat_interleave` without `output_size`", "repeat_interleave")

    def _report(self, node: cst.CSTNode, what: str, kind: str) -> None:
        self.report(node, MESSAGE.format(what=what, why="{why}", alternative=ALTERNATIVE[kind]),
                    when=self.an.hot_context())


def _is_where1(an, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and an.qualname(node.func) == "torch.where" and len(node.args) == 1 \
        and node.args[0].keyword is None
