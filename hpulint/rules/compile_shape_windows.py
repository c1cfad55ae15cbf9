"""A pooling window computed from an input's size in a compiled region, for HPU015.

By default the second size Dynamo sees makes a dimension symbolic (automatic dynamic shapes: one
recompile), but a pooling op needs its ``kernel_size``/``stride``/``padding`` as Python ints to build
the graph, so a window computed from a symbolic size specializes that size again and guards on it:
each new input size is a new graph. Measured on torch 2.13 (CPU, ``eager`` backend): a compiled
spatial pyramid pooling with ``F.max_pool2d(x, kernel_size=math.ceil(h / n), ...)`` (``h`` from
``x.shape``) over 5 image sizes is 5 graphs and 4 recompiles (guard at the pooling line), the same with
``F.avg_pool2d(x, x.shape[-1] // 2)``; ``F.adaptive_max_pool2d(x, n)`` over the same sizes is 2 graphs
(one recompile); a view sized from the same shape (``x.view(b, -1, h // 2, 2)``) 2 graphs; the
window from the shape but one input size, 1 graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in, target_names
from hpulint.rules.compile_forms import is_size
from hpulint.rules.compiled_region import MANY, distinct_values, literal_ints

POOLS = frozenset(f"torch.nn.functional.{kind}_pool{d}d" for kind in ("max", "avg", "lp") for d in (1, 2, 3)) | \
    frozenset(f"torch.{kind}_pool{d}d" for kind in ("max", "avg") for d in (1, 2, 3)) | \
    frozenset({"torch.nn.functional.max_pool1d_with_indices", "torch.nn.functional.max_pool2d_with_indices",
               "torch.nn.functional.max_pool3d_with_indices"})
WINDOW_ARGS = (("kernel_size", 1), ("stride", 2), ("padding", 3))
MESSAGE = (
    "`{op}` in {fn}() takes its window (`{arg}`) from the input's size, and `{compiled}` is called with sizes that "
    "change from call to call: a pooling window must be a Python int to build the graph, so Dynamo specializes the "
    "size it comes from and guards on it. Unlike a size that only flows through tensor ops (made dynamic after one "
    "recompile), each new input size is then a new graph, and after `recompile_limit` ({limit}) Dynamo runs it "
    "eagerly for the rest of the run. Use an adaptive pool (`F.adaptive_max_pool2d(x, n)`: the output size is fixed "
    "and the window follows the input inside the op), or bring the inputs to a few sizes"
)


def shape_window(an, node: cst.Call) -> Optional[str]:
    """The text of a pooling call's window argument computed from a size in the same function
    (`kernel_size=window` with `window = (math.ceil(h / n), ...)` and `h, w = x.shape[-2:]`), or None."""
    qn = an.qualname(node.func) or ""
    fn = an.function
    if qn not in POOLS or fn.kind != "function" or type(fn.node) is not cst.FunctionDef:
        return None
    positional = [a for a in node.args if a.keyword is None and not a.star]
    assigned = _assigned(fn.node)
    for name, k in WINDOW_ARGS:
        arg = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == name),
                   positional[k].value if k < len(positional) else None)
        if arg is not None and _from_size(arg, assigned, 0):
            return f"{name}={code(arg)}" if len(code(arg)) <= 40 else name
    return None


_ASSIGNED: dict = {}  # id of a function node -> (the node, its _assigned): the last few functions asked


def _assigned(fn: cst.FunctionDef) -> dict:
    """Local name -> expressions assigned to it in ``fn`` (a tuple unpacking gives each name the whole value)."""
    hit = _ASSIGNED.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    if len(_ASSIGNED) > 64:
        _ASSIGNED.clear()
    out: dict = {}
    _ASSIGNED[id(fn)] = (fn, out)
    sized = False
    for n in descendants(fn.body):
        if not sized and (type(n) is cst.Attribute and n.attr.value == "shape"
                          or type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "size"):
            sized = True
        if type(n) is cst.Assign:
            for t in n.targets:
                for name in target_names(t.target):
                    out.setdefault(name, []).append(n.value)
        elif type(n) in (cst.AnnAssign, cst.AugAssign) and type(n.target) is cst.Name and n.value is not None:
            out.setdefault(n.target.value, []).append(n.value)
    if not sized:
        out.clear()  # no size read anywhere in the function: nothing assigned comes from one
    return out


def _from_size(expr: cst.BaseExpression, assigned: dict, depth: int) -> bool:
    if is_size(expr):
        return True
    if depth >= 4 or not assigned:
        return False
    return any(_from_size(v, assigned, depth + 1) for name in set(names_in(expr)) for v in assigned.get(name, ()))


def sizes_vary(rule, module: cst.Module, name: str) -> bool:
    """``name`` is called in a loop with a tensor sized by a loop target that takes 3 or more listed
    ints: `for size in SIZES:` or `for step, size in enumerate(SIZES):` over a literal list (also one
    bound at the module's top level), `x = torch.randn(4, 3, size, size)`."""
    for call, callee, loop, counters in rule.calls:
        if callee != name:
            continue
        listed = _listed_ints(module, loop)
        if not listed:
            continue
        known = dict(counters)
        for target, (lp, _) in listed.items():
            known.setdefault(target, lp)
        for a in call.args:
            shape = rule.shape_counters(a.value, loop, known)
            if any(listed.get(n, (None, 0))[1] >= MANY for n in shape):
                return True
    return False


def _listed_ints(module: cst.Module, loop) -> dict:
    """For-target name -> (loop, number of distinct values) for the loops around ``loop`` that walk a
    literal list of ints, directly or through `enumerate`."""
    from hpulint.rules.compile_batch_sizes import module_literal

    out = {}
    for lp in loop.chain():
        node = getattr(lp, "node", None)
        if type(node) is not cst.For:
            continue
        target, it = node.target, node.iter
        if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "enumerate" and len(it.args) == 1 \
                and type(target) is cst.Tuple and len(target.elements) == 2:
            target, it = target.elements[1].value, it.args[0].value
        if type(it) is cst.Name and module is not None:
            it = module_literal(module, it.value)
        if type(target) is cst.Name and it is not None and literal_ints(it):
            out[target.value] = (lp, distinct_values(it))
    return out
