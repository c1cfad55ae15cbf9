"""HPU009 hpu-graph-limits: HPU Graph APIs used the way only ModuleCacher supports.

Source: Gaudi docs, "HPU Graphs for Training", *Limitations of HPU Graph APIs*: the
basic HPU Graph APIs (capture and replay, ``graph``, ``make_graphed_callables``) take "only
tensors as inputs and outputs" and "inputs can only be provided as positional args";
``ModuleCacher`` handles non-tensor and keyword arguments, and dynamic input shapes with one
cached graph per shape, bounded by ``max_graphs`` (10 by default).

Not reported: a ``ModuleCacher`` without ``max_graphs`` (its default bound is 10), and keyword
arguments to a ``wrap_in_hpu_graph`` module (its forward takes ``*args, **kwargs`` and keys its
cache on both).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import dotted
from hpulint.rules.base import Rule

GRAPH_WRAPPERS = ("make_graphed_callables",)
LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
            cst.Dict, cst.List, cst.Set)
LIMIT = (
    "{what}: HPU Graph APIs take only tensors, as positional arguments (Gaudi docs, \"HPU Graphs for Training\", "
    "https://docs.habana.ai/en/latest/PyTorch/PyTorch_Model_Porting/HPU_Graphs_Training.html); other inputs "
    "are baked into the captured graph or rejected. Pass tensors positionally, or wrap the "
    "module with htcore.hpu.ModuleCacher, which handles keyword and non-tensor arguments"
)


class HpuGraphLimits(Rule):
    code = "HPU009"
    name = "hpu-graph-limits"
    summary = "make_graphed_callables given keyword or non-tensor inputs"
    triggers = ("make_graphed_callables",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.wrapped: set = set()  # names bound to a graph-wrapped callable

    def _api(self, func: cst.BaseExpression):
        qn = self.an.qualname(func) or ""
        leaf = qn.rsplit(".", 1)[-1]
        if qn.startswith(("habana_frameworks", "torch.hpu")) or ".hpu." in qn:
            return leaf
        return None

    def visit_Assign(self, node: cst.Assign) -> None:
        if type(node.value) is cst.Call and self._api(node.value.func) in GRAPH_WRAPPERS:
            for t in node.targets:
                name = dotted(t.target)
                if name:
                    self.wrapped.add(name)

    def visit_Call(self, node: cst.Call) -> None:
        api = self._api(node.func)
        if api == "make_graphed_callables":
            if any(a.keyword is not None and a.keyword.value == "sample_kwargs" for a in node.args):
                self.report(node, LIMIT.format(what="make_graphed_callables with sample_kwargs"))
                return
            sample = node.args[1].value if len(node.args) > 1 else None
            if type(sample) is cst.Tuple and any(_non_tensor(el.value) for el in sample.elements):
                self.report(node, LIMIT.format(what="a non-tensor sample input to make_graphed_callables"))
            return
        name = dotted(node.func)
        if name in self.wrapped:
            if any(a.keyword is not None or a.star == "**" for a in node.args):
                self.report(node, LIMIT.format(what=f"keyword arguments to the graph-wrapped `{name}`"))
            elif any(_non_tensor(a.value) for a in node.args):
                self.report(node, LIMIT.format(what=f"a non-tensor argument to the graph-wrapped `{name}`"))


def _non_tensor(node: cst.BaseExpression) -> bool:
    if isinstance(node, LITERALS):
        return True
    return type(node) is cst.Name and node.value in ("None", "True", "False")
