"""Modules switched to other classes in place (``module.__class__ = X``) between calls of a compiled
module, for HPU016.

Dynamo guards on the type of each submodule the compiled module runs (in torch's
``container.py``), so measured on torch 2.13 (CPU, ``eager`` backend): every ``nn.Linear`` of a
compiled ``nn.Sequential`` switched in place to ``Half``, then ``Double`` (``for kind in (nn.Linear,
Half, Double): m.__class__ = kind``, two calls each), 3 graphs and 2 recompiles; a quantization
schedule through a ``convert(model, cls)`` helper called with ``QATLinear`` then ``Int8SimLinear``
(c460), 2 recompiles. One switch (a warm-up then ``QATLinear``, c461) is one recompile, and a switch
before the first call one graph: not reported.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants

MESSAGE = (
    "`{target} = ...` switches modules to {n} classes in place ({classes}) between calls of the compiled "
    "`{compiled}`: Dynamo guards on the type of each submodule the compiled module runs, so each new class is a "
    "recompile (with the class the modules had first, each switch). Switch once before compiling, or keep one "
    "class whose `forward` picks the behaviour from a tensor buffer or a flag set once per phase"
)


def class_swaps(module: Optional[cst.Module], compiled_of: dict) -> list:
    """(assignment, message) for `X.__class__ = V` that takes 2 or more class values over the file's
    loops (a loop over a literal tuple of classes, directly or through a helper's parameter)."""
    if module is None or not compiled_of:
        return []
    nodes = list(descendants(module))
    defs = {n.name.value: n for n in nodes if type(n) is cst.FunctionDef}
    out = []
    for n in nodes:
        if type(n) is not cst.Assign or len(n.targets) != 1:
            continue
        tgt = n.targets[0].target
        if type(tgt) is not cst.Attribute or tgt.attr.value != "__class__":
            continue
        classes = _values(nodes, defs, n, n.value)
        if len(classes) < 2:
            continue
        compiled = sorted(compiled_of)[0]
        out.append((n, MESSAGE.format(target=code(tgt), n=len(classes), classes=", ".join(f"`{c}`" for c in classes),
                                      compiled=compiled)))
    return out


def _values(nodes: list, defs: dict, at: cst.CSTNode, value: cst.BaseExpression) -> list:
    """The class names ``value`` takes: a loop target over a literal tuple or list of names, or a
    parameter of the function holding ``at`` that its calls fill with such a name (or constants)."""
    if type(value) is not cst.Name:
        return []
    name = value.value
    for n in nodes:  # `for kind in (A, B, C):` anywhere in the file binding the name
        if type(n) is cst.For and type(n.target) is cst.Name and n.target.value == name:
            got = _literal_names(n.iter)
            if got:
                return got
    fn = next((d for d in defs.values() if any(s is at for s in descendants(d.body))), None)
    if fn is None:
        return []
    params = [p.name.value for p in fn.params.params]
    if name not in params:
        return []
    k = params.index(name)
    seen: list = []
    for n in nodes:
        if type(n) is not cst.Call or type(n.func) is not cst.Name or n.func.value != fn.name.value:
            continue
        args = [a.value for a in n.args if a.keyword is None]
        given = args[k] if k < len(args) else next((a.value for a in n.args if a.keyword is not None
                                                    and a.keyword.value == name), None)
        if type(given) is cst.Name:
            more = _values(nodes, {}, n, given) or ([given.value] if given.value != "None" else [])
            seen += [c for c in more if c not in seen]
    return seen


def _literal_names(it: cst.BaseExpression) -> list:
    if type(it) not in (cst.Tuple, cst.List):
        return []
    out = []
    for el in it.elements:
        v = el.value
        if type(v) is cst.Name and v.value == "None":
            continue
        if type(v) not in (cst.Name, cst.Attribute):
            return []
        out.append(code(v))
    return out
