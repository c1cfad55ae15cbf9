"""A 0-d tensor, one element of a tensor the loop walks, used as the index of a table in a compiled
function, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; tests/test_compile_kinds23.py): ``table[t]`` with
``t`` a 0-d int tensor makes Dynamo read the index as a Python int and guard on its value
(``t.item() == 999``), so a sampler loop ``for t in timesteps: x = step(x, t)`` over 7 timesteps is 7
graphs (6 recompiles); snippet c468 (a DDIM step reading ``scheduler.alphas_cumprod[t]`` over 6
timesteps, ``zip(timesteps[:-1], timesteps[1:])``): 5 recompiles. The index as a 1-element tensor
(``table[t.view(1)]``, ``index_select(0, t.view(1))``) or one timestep per sample (``t.expand(n)``,
c469): one graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants

MESSAGE = (
    "`{sub}` indexes a table with `{param}`, which the loop gives one element of `{source}` at a time (a 0-d tensor): "
    "Dynamo reads a 0-d index as a Python int and guards on its value (`{param}.item() == ...`), so every new value of "
    "`{param}` recompiles the compiled `{name}`, and after `recompile_limit` ({limit}) it runs eagerly for the rest of "
    "the run (eager fallback). Index with a 1-element tensor (`{table}[{param}.view(1)]`, or `index_select`), or "
    "pass one index per sample (`{param}.expand(n)`): one graph"
)
ITERATORS = ("zip", "enumerate", "reversed", "list", "iter")


def scalar_index(module: Optional[cst.Module], fn: Optional[cst.FunctionDef], skip: int, call: cst.Call, loop,
                 callee: str, limit: int) -> Optional[tuple]:
    """(subscript in the compiled function, message) for `table[p]` in ``fn`` whose parameter ``p``
    this call fills with a loop target that iterates a tensor made by torch, or None."""
    if module is None or fn is None or type(getattr(loop, "node", None)) is not cst.For:
        return None
    params = [p.name.value for p in fn.params.params][skip:]
    sources = _tensor_targets(module, loop.node)
    if not sources:
        return None
    for k, a in enumerate(call.args):
        if a.keyword is not None or a.star or k >= len(params) or type(a.value) is not cst.Name:
            continue
        source = sources.get(a.value.value)
        if source is None:
            continue
        param = params[k]
        for n in descendants(fn.body):
            if type(n) is cst.Subscript and len(n.slice) == 1 and type(n.slice[0].slice) is cst.Index \
                    and type(n.slice[0].slice.value) is cst.Name and n.slice[0].slice.value.value == param:
                return n, MESSAGE.format(sub=code(n), param=param, source=source, name=callee, limit=limit,
                                         table=code(n.value))
    return None


def _tensor_targets(module: cst.Module, loop: cst.For) -> dict:
    """Loop target names -> the tensor they walk: `for t in ts`, `for t, p in zip(ts[:-1], ts[1:])`,
    `for i, t in enumerate(ts)`, with `ts` bound at module level to a torch call (`torch.linspace(...).long()`)."""
    it, target = loop.iter, loop.target
    pairs = []
    if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value in ITERATORS:
        args = [a.value for a in it.args]
        names = [e.value for e in target.elements] if type(target) in (cst.Tuple, cst.List) else [target]
        if it.func.value == "enumerate" and len(names) == 2 and args:
            pairs = [(names[1], args[0])]
        elif it.func.value == "zip" and len(names) == len(args):
            pairs = list(zip(names, args))
        elif len(args) == 1:
            pairs = [(target, args[0])]
    else:
        pairs = [(target, it)]
    out = {}
    for name, src in pairs:
        while type(src) is cst.Subscript:  # `ts[:-1]`
            src = src.value
        if type(name) is cst.Name and type(src) is cst.Name and _made_by_torch(module, src.value):
            out[name.value] = src.value
    return out


def _made_by_torch(module: cst.Module, name: str) -> bool:
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name
                                                 for t in small.targets):
                v = small.value
                while type(v) is cst.Call and type(v.func) is cst.Attribute and type(v.func.value) is cst.Call:
                    v = v.func.value  # `torch.linspace(...).long()`
                if type(v) is cst.Call and code(v.func).startswith("torch."):
                    return True
    return False
