"""A compiled function or module whose output is fed back as its next input, grown: the
decoding loop `logits, past_k = model(ids, past_k)` where forward returns
`torch.cat([past_k, k])`. Each call sees a longer tensor: with dynamic=False every call compiles
a new graph (measured on torch 2.13: 13 calls give 8 graphs, 7 recompiles and an eager
fallback; the default makes the length dynamic after the first change)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in
from hpulint.rules.compiled_region import MANY, distinct_values

GROW_CALLS = ("cat", "concat", "concatenate", "hstack", "vstack", "column_stack")


def fed_back(loop, value: cst.BaseExpression, target: cst.BaseExpression, out: dict) -> None:
    """Records, for an assignment in ``loop``, the names bound to (an element of) a call's result:
    out[id(loop)][name] = (callee code, index in the returned tuple or None)."""
    if type(value) is not cst.Call or type(value.func) not in (cst.Name, cst.Attribute):
        return
    callee = code(value.func)
    if type(target) is cst.Name:
        out.setdefault(id(loop), {})[target.value] = (callee, None)
    elif type(target) in (cst.Tuple, cst.List):
        for j, el in enumerate(target.elements):
            if type(el.value) is cst.Name:
                out.setdefault(id(loop), {})[el.value.value] = (callee, j)


def grows_through_output(rule, call: cst.Call, k: int, loop):
    """("a size", argument, passes or None for more than the limit) when positional argument
    ``k`` of ``call`` is a name the loop re-binds to the same call's output, and that output is
    the argument grown (`torch.cat([arg, new])` in the compiled function); else None."""
    a = call.args[k]
    if a.keyword is not None or a.star or type(a.value) is not cst.Name:
        return None
    name, callee = a.value.value, code(call.func)
    index = _fed_index(rule, loop, name, callee)
    if index is False:
        return None
    fn, skip = _definition(rule.module, callee)
    if fn is None:
        return None
    params = [p.name.value for p in fn.params.params][skip:]
    if k >= len(params) or not _returns_grown(fn, params[k], index):
        return None
    passes = _passes(loop)
    if passes is not None and passes - 1 >= rule.limit:
        passes = None
    if passes is not None and passes < MANY:
        return None
    return "its own output fed back (a tensor it concatenates to)", code(a.value), passes


def _fed_index(rule, loop, name: str, callee: str):
    for lp in loop.chain():
        hit = rule.fed.get(id(lp), {}).get(name)
        if hit is not None and hit[0] == callee:
            return hit[1]
    return False


def _passes(loop) -> Optional[int]:
    total = 1
    for lp in loop.chain():
        node = lp.node
        n = distinct_values(node.iter) if type(node) is cst.For else None
        if n is None:
            return None
        total *= n
    return total



def _definition(module: cst.Module, callee: str):
    """(FunctionDef, parameters to skip) of what ``callee`` runs: a function of that name, or the
    forward of the class the name was built from (`model = torch.compile(Decoder().eval())`)."""
    if module is None:
        return None, 0
    funcs, classes, built = {}, {}, {}
    for n in descendants(module):
        if type(n) is cst.FunctionDef:
            funcs.setdefault(n.name.value, n)
        elif type(n) is cst.ClassDef:
            fwd = next((s for s in n.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"), None)
            if fwd is not None:
                classes[n.name.value] = fwd
        elif type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name:
            made = {c.func.value for c in descendants(n.value) if type(c) is cst.Call and type(c.func) is cst.Name}
            for ref in names_in(n.value):
                made |= built.get(ref, set())
            built[n.targets[0].target.value] = made
    if "." not in callee and callee in funcs and callee not in built:
        return funcs[callee], 0
    cls = next((c for c in sorted(built.get(callee, ())) if c in classes), None)
    return (classes[cls], 1) if cls is not None else (None, 0)


def _returns_grown(fn: cst.FunctionDef, param: str, index) -> bool:
    grown = set()  # names bound in fn to a concatenation with the parameter
    for n in descendants(fn.body):
        if type(n) is cst.Assign and _grows(n.value, param, grown):
            grown |= {t.target.value for t in n.targets if type(t.target) is cst.Name}
    for n in descendants(fn.body):
        if type(n) is cst.Return and n.value is not None:
            out = n.value
            if index is not None:
                if type(out) is not cst.Tuple or index >= len(out.elements):
                    continue
                out = out.elements[index].value
            if _grows(out, param, grown) or (type(out) is cst.Name and out.value in grown):
                return True
    return False


def _grows(expr: cst.BaseExpression, param: str, grown: set) -> bool:
    """`torch.cat([param, new], ...)` (or of a name already grown from it)."""
    if type(expr) is not cst.Call or not expr.args:
        return False
    f = expr.func
    leaf = f.attr.value if type(f) is cst.Attribute else f.value if type(f) is cst.Name else ""
    if leaf not in GROW_CALLS:
        return False
    parts = expr.args[0].value
    if type(parts) not in (cst.List, cst.Tuple) or len(parts.elements) < 2:
        return False
    return any(type(el.value) is cst.Name and (el.value.value == param or el.value.value in grown)
               for el in parts.elements)
