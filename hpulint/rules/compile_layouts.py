"""Inputs of several memory layouts, for HPU015.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md): Dynamo guards on each input
tensor's strides ("tensor 'images' stride mismatch at index 0"). Automatic dynamic makes the stride
*values* of one layout dynamic after one recompile (a center crop of 16 out of 20, then of 16 out of
24: 2 graphs with a contiguous batch), but each new kind of layout is a new graph: a contiguous
batch, a batch permuted from HWC without a copy (the same strides as ``channels_last``) and a crop
taken by slicing give 3 graphs and 2 recompiles; with a transposed batch too, 4; with a broadcast
(``expand``) or a strided (``[::2]``) view, one more each. Slicing the first dimension keeps a batch
contiguous; ``.contiguous()`` (or ``torch.stack`` in a collate) gives every batch one layout.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants
from hpulint.rules.compile_forms import tensor_form
from hpulint.rules.compiled_region import MANY, recompiles_text

NEUTRAL = frozenset({"float", "half", "bfloat16", "double", "detach", "cpu", "requires_grad_", "clone"})
LAYOUTS = (
    "`{name}` is called with tensors of {n} different memory layouts ({said}): Dynamo guards on each input's "
    "strides, and automatic dynamic shapes make stride values dynamic within one layout, not a new layout, so "
    "each new one is a new graph: {values}. Give every input one layout before the call (`x.contiguous()`, or "
    "`.contiguous(memory_format=torch.channels_last)` for all of them)"
)
SAID = {"dense": "contiguous", "sliced": "a slice of a larger tensor", "stepped": "a strided slice",
        "expanded": "a broadcast view"}


def input_layouts(module: cst.Module, compiled: set, looped: list, value_in_loop, every_call: list) -> list:
    """(callee, the layouts) for each compiled callable given tensors of 3 or more memory layouts at
    one argument position: at its call sites, or in a loop through a name the loop assigns from a
    literal list of functions of the file (`images = SOURCES[step % 3]()`), or a `for` over one
    (``looped``: (call, callee, loop) of the calls in loops)."""
    if module is None or not compiled:
        return []
    defs = {st.name.value: st for st in module.body if type(st) is cst.FunctionDef}
    lists = {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                    and type(small.value) in (cst.List, cst.Tuple):
                lists[small.targets[0].target.value] = small.value
    loop_of = {id(call): loop for call, _, loop in looped}
    seen: dict = {}  # (callee, position) -> {layout: None}
    for call in every_call:
        if type(call.func) is not cst.Name or call.func.value not in compiled:
            continue
        for k, a in enumerate(x for x in call.args if x.keyword is None and not x.star):
            for got in _sources(a.value, loop_of.get(id(call)), value_in_loop, defs, lists):
                if got is not None:
                    seen.setdefault((call.func.value, k), {})[got] = None
    out = []
    for (callee, _), layouts in seen.items():
        if len(layouts) >= MANY:
            out.append((callee, list(layouts)))
    return out


def layouts_message(callee: str, layouts: list, limit: int) -> str:
    said = ", ".join(_said(x) for x in layouts)
    return LAYOUTS.format(name=callee, n=len(layouts), said=said, values=recompiles_text(len(layouts), limit,
                                                                                          "layouts"))


def _said(layout) -> str:
    kind, order = layout
    if kind == "dense" and order is not None and list(order) != sorted(order):
        return "channels-last order" if order == (0, 3, 1, 2) else "a permuted or transposed view"
    return SAID[kind]


def _sources(expr, loop, value_in_loop, defs: dict, lists: dict) -> list:
    """The layouts an argument may have: its own, or each item's of what the loop picks it from."""
    if type(expr) is cst.Name and loop is not None:
        value = value_in_loop(expr.value, loop)
        if value is not None:
            return _sources(value, None, value_in_loop, defs, lists)
        for lp in loop.chain():
            node = lp.node
            if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == expr.value:
                items = _items(node.iter, lists)
                return [layout(i, defs) for i in items] if items else []
    if type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Subscript:
        items = _items(expr.func.value, lists)  # `SOURCES[step % 3]()`
        return [layout(cst.Call(func=i), defs) for i in items] if items else []
    if type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Name and loop is not None:
        for lp in loop.chain():  # `for load in SOURCES: f(load())`
            node = lp.node
            if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == expr.func.value:
                items = _items(node.iter, lists)
                return [layout(cst.Call(func=i), defs) for i in items] if items else []
    return [layout(expr, defs)]


def _items(it, lists: dict) -> list:
    if type(it) is cst.Name:
        it = lists.get(it.value)
    return [el.value for el in it.elements] if type(it) in (cst.List, cst.Tuple) else []


def layout(expr, defs: dict, local: Optional[dict] = None, depth: int = 0) -> Optional[tuple]:
    """(kind, memory order) of a tensor expression: ("dense", order) for a factory call, a permute or
    transpose of one, `.contiguous()`; ("sliced" / "stepped" / "expanded", order) for a view of one; or
    None when not known. The order is the rank of each dimension from the outermost (0) to the
    innermost: channels-last NCHW is (0, 3, 1, 2), as an NHWC tensor permuted to NCHW. A call of a
    function of the file (or of a lambda) is its returned value."""
    if depth > 8:
        return None
    local = local or {}
    if type(expr) is cst.Lambda:
        return layout(expr.body, defs, {}, depth + 1)
    if type(expr) is cst.Name and expr.value in local:
        return layout(local[expr.value], defs, local, depth + 1)
    if type(expr) is cst.Subscript:
        inner = layout(expr.value, defs, local, depth + 1)
        return _sliced(expr, inner) if inner is not None else None
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Lambda and not expr.args:
        return layout(func.body, defs, {}, depth + 1)
    if type(func) is cst.Name and func.value in defs:
        return _returned(defs[func.value], defs, depth)
    form = tensor_form(expr)
    if form is not None:
        return "dense", tuple(range(form[0]))
    if type(func) is not cst.Attribute:
        return None
    method = func.attr.value
    inner = layout(func.value, defs, local, depth + 1)
    if inner is None:
        return None
    kind, order = inner
    if method == "contiguous" or method == "to" and _memory_format(expr) is not None:
        fmt = _memory_format(expr)
        if fmt == "channels_last" and order is not None and len(order) == 4:
            return "dense", (0, 3, 1, 2)
        if method == "contiguous" and fmt in (None, "contiguous_format"):
            return "dense", tuple(range(len(order))) if order is not None else None
        return None
    if method in NEUTRAL and not expr.args or method == "to" and _memory_format(expr) is None:
        return inner
    if kind != "dense" or order is None:
        return None
    dims = [_int(a.value) for a in expr.args if a.keyword is None and not a.star]
    if None in dims:
        return None
    dims = [d % len(order) for d in dims]
    if method == "permute" and sorted(dims) == list(range(len(order))):
        return "dense", tuple(order[d] for d in dims)
    if method in ("transpose", "swapaxes", "swapdims") and len(dims) == 2:
        new = list(order)
        new[dims[0]], new[dims[1]] = new[dims[1]], new[dims[0]]
        return "dense", tuple(new)
    if method == "t" and not dims and len(order) == 2:
        return "dense", (order[1], order[0])
    if method in ("expand", "expand_as"):
        return "expanded", order
    return None


def _sliced(sub: cst.Subscript, inner) -> Optional[tuple]:
    kind, order = inner
    if kind != "dense":
        return None
    out = kind
    for k, el in enumerate(sub.slice):
        s = el.slice
        if type(s) is cst.Index:
            return None  # an int index drops a dimension: not worked out
        full = s.lower is None and s.upper is None
        if s.step is not None:
            out = "stepped"
        elif not full and k > 0 and out == "dense":
            out = "sliced"
    return out, order


def _returned(fn: cst.FunctionDef, defs: dict, depth: int) -> Optional[tuple]:
    """The layout a function of the file returns (the same on every `return`), with its locals."""
    local = {}
    got = set()
    for n in descendants(fn.body):
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name:
            local[n.targets[0].target.value] = n.value
    for n in descendants(fn.body):
        if type(n) is cst.Return and n.value is not None:
            got.add(layout(n.value, defs, local, depth + 1))
    return got.pop() if len(got) == 1 else None


def _memory_format(call: cst.Call) -> Optional[str]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "memory_format":
            return a.value.attr.value if type(a.value) is cst.Attribute else code(a.value)
    return None


def _int(node) -> Optional[int]:
    if type(node) is cst.Integer:
        return int(node.value)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return -int(node.expression.value)
    return None
