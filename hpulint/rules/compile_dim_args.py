"""A compiled function whose parameter names a dimension and whose calls give it 3 or more values,
for HPU017.

Dynamo makes an int argument dynamic after it changes once (automatic dynamic shapes), but a
dimension an op reduces or indexes over must be known to build the graph, so the value is
specialized and guarded: each new ``dim`` is a new graph. Measured on torch 2.13 (CPU, ``eager``
backend): a compiled ``pool(x, dim)`` doing ``x.sum(dim)`` called with ``dim=1``, ``2`` and ``0``
is 3 graphs and 2 recompiles (guard at the ``sum``); ``1``, ``2`` and ``(1, 2)`` the same (the
value, then the type); two values 1 recompile (not reported: what automatic dynamic costs anyway);
always the same ``dim``, 1 graph; an int used only in arithmetic (``x * k``) with 3 values, 1
recompile (it becomes dynamic).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants
from hpulint.rules.compiled_region import MANY, recompiles_text

DIM_KEYWORDS = frozenset({"dim", "dims", "axis", "dim0", "dim1", "start_dim", "end_dim"})
# methods whose first positional argument is a dimension (`x.sum(dim)`; each measured: 3 values, 2 recompiles)
DIM_METHODS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "std", "var", "logsumexp",
                         "softmax", "log_softmax", "argmax", "argmin", "cumsum", "cumprod", "flip", "squeeze",
                         "unsqueeze", "all", "any", "count_nonzero", "nansum", "nanmean", "median", "unbind",
                         "size", "select", "narrow", "movedim", "transpose", "flatten"})
# torch functions whose second positional argument is a dimension (`torch.cat(xs, dim)`)
DIM_FUNCTIONS = frozenset({"torch.cat", "torch.stack", "torch.sum", "torch.mean", "torch.amax", "torch.amin",
                           "torch.softmax", "torch.log_softmax", "torch.cumsum", "torch.logsumexp", "torch.flip",
                           "torch.unbind", "torch.squeeze", "torch.unsqueeze", "torch.nn.functional.softmax",
                           "torch.nn.functional.log_softmax", "torch.nn.functional.normalize"})
MESSAGE = (
    "The compiled `{name}` is called with `{param}` = {values} and uses it as a dimension (`{use}`): Dynamo makes an "
    "int argument dynamic after one change, but not a dimension an op works over, so it guards on the value: "
    "{count}. Move the varying axes to a fixed place in the eager caller (`x.flatten(1, 2)`, `movedim`) and reduce "
    "over one dimension, or compile one function per dimension"
)


def dim_arguments(an, module: cst.Module, compiled: dict, definition, limit: int) -> list:
    """(node, message) for each compiled callable (``compiled``: name called -> FunctionDef or None;
    ``definition(name)`` -> (FunctionDef, parameters not passed)) with a parameter used as a dimension
    that the file's calls of it give 3 or more distinct literal values."""
    if module is None or not compiled:
        return []
    calls = [n for n in descendants(module) if type(n) is cst.Call]
    out = []
    for callee in compiled:
        fn, skip = definition(callee)
        if fn is None:
            continue
        params = [p.name.value for p in fn.params.params]
        for param, use in _dim_params(an, fn, set(params)).items():
            k = params.index(param) - skip
            values = []
            for call in calls:
                if code(call.func) != callee:
                    continue
                given = _given(call, param, k)
                text = _literal(given) if given is not None else None
                if text is not None and text not in values:
                    values.append(text)
            if len(values) >= MANY:
                shown = ", ".join(f"`{v}`" for v in values)
                out.append((use, MESSAGE.format(name=callee, param=param, values=shown, use=code(use),
                                                count=recompiles_text(len(values), limit, "values"))))
                break
    return out


def _dim_params(an, fn: cst.FunctionDef, params: set) -> dict:
    """Parameter -> the first call in ``fn`` that passes it (by name, unchanged) as a dimension."""
    out: dict = {}
    for n in descendants(fn.body):
        if type(n) is not cst.Call:
            continue
        positional = [a for a in n.args if a.keyword is None and not a.star]
        dims = [a.value for a in n.args if a.keyword is not None and a.keyword.value in DIM_KEYWORDS]
        if type(n.func) is cst.Attribute and n.func.attr.value in DIM_METHODS and positional \
                and not (an.qualname(n.func) or "").startswith("torch."):
            dims.append(positional[0].value)
        elif (an.qualname(n.func) or "") in DIM_FUNCTIONS and len(positional) > 1:
            dims.append(positional[1].value)
        for d in dims:
            if type(d) is cst.Name and d.value in params:
                out.setdefault(d.value, n)
    return out


def _given(call: cst.Call, param: str, k: int) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == param:
            return a.value
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:k + 1]):
        return None
    return positional[k].value if 0 <= k < len(positional) else None


def _literal(expr: cst.BaseExpression) -> Optional[str]:
    """The text of an int literal (`1`, `-1`) or a tuple/list of them (`(1, 2)`), spaces normalized."""
    if type(expr) is cst.Integer:
        return expr.value
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus and type(expr.expression) is cst.Integer:
        return "-" + expr.expression.value
    if type(expr) in (cst.Tuple, cst.List) and expr.elements:
        parts = [_literal(el.value) for el in expr.elements]
        if all(p is not None for p in parts):
            inner = ", ".join(parts)
            return f"({inner})" if type(expr) is cst.Tuple else f"[{inner}]"
    return None
