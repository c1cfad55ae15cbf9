"""A string attribute that ``forward`` reads, set to a new value between calls of a compiled module
through a setter method, for HPU016 (the int case is HPU016's own).

Measured on torch 2.13 (CPU, ``eager`` backend; tests/test_compile_kinds23.py): Dynamo treats a
module's string attribute as a constant and guards on it (for a ``ModuleDict`` key, in torch's
``container.py`` ``__getitem__``), so a ``set_adapter(name)`` method storing ``name`` on every layer
(``block.active_adapter = name``) before each call, over 3 adapter names, is 3 graphs (2
recompiles); snippet c456 (LoRA adapters in ``nn.ModuleDict``s, three customers): 2 recompiles. The
adapters' weights copied into one slot instead (c457), or the adapter picked by an index tensor,
one graph; two names, one recompile (not reported).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants

MESSAGE = (
    "`{call}` sets `{attr}`, a string `forward` reads (`self.{attr}`), to {n} values over the loop (`{values}`) "
    "between calls of the compiled `{compiled}`: Dynamo treats a module's string attribute as a constant and guards "
    "on it, so each new value is a recompile ({n} graphs, {rec} recompiles; from `recompile_limit` ({limit}) on, an "
    "eager fallback). Keep the choice in a tensor (an index into stacked weights), copy the selected weights into one "
    "slot in the eager code, or compile one model per value"
)


def str_attr_cycles(module: Optional[cst.Module], compiled_of: dict, limit: int) -> list:
    """(setter call, message) for `obj.m(v)` in a loop that also calls a compiled module, where a method
    `m` of the file's classes stores its parameter as `x.attr`, `self.attr` is read in a `forward`, and `v`
    takes 3 or more string values (a loop over a literal list of strings or of tuples holding them)."""
    if module is None or not compiled_of:
        return []
    nodes = list(descendants(module))
    classes = [n for n in nodes if type(n) is cst.ClassDef]
    reads, setters = set(), {}
    for cls in classes:
        for st in cls.body.body:
            if type(st) is not cst.FunctionDef:
                continue
            params = [p.name.value for p in st.params.params]
            body = list(descendants(st.body))
            if st.name.value == "forward":
                reads |= {n.attr.value for n in body if type(n) is cst.Attribute and type(n.value) is cst.Name
                          and n.value.value == "self"}
                continue
            for n in body:
                if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Attribute \
                        and type(n.value) is cst.Name and n.value.value in params[1:]:
                    setters[st.name.value] = (params.index(n.value.value) - 1, n.targets[0].target.attr.value)
    if not setters:
        return []
    literals = _literal_lists(module)
    out = []
    for loop in (n for n in nodes if type(n) is cst.For):
        inner = list(descendants(loop.body))
        if not any(type(c) is cst.Call and type(c.func) is cst.Name and c.func.value in compiled_of for c in inner):
            continue
        for c in inner:
            if type(c) is not cst.Call or type(c.func) is not cst.Attribute or c.func.attr.value not in setters:
                continue
            k, attr = setters[c.func.attr.value]
            if attr not in reads or k >= len(c.args) or type(c.args[k].value) is not cst.Name:
                continue
            values = _values(loop, c.args[k].value.value, literals)
            if len(values) >= 3:
                compiled = next(c2.func.value for c2 in inner if type(c2) is cst.Call and type(c2.func) is cst.Name
                                and c2.func.value in compiled_of)
                n = len(values)
                out.append((c, MESSAGE.format(call=code(c), attr=attr, n=n, values="`, `".join(values),
                                              compiled=compiled, rec=n - 1, limit=limit)))
    return out


def _values(loop: cst.For, name: str, literals: dict) -> list:
    """The distinct strings ``name`` takes over ``loop`` (its iterable a literal, or a module-level name
    bound to one); [] when not known."""
    it = loop.iter
    if type(it) is cst.BinaryOperation and type(it.operator) is cst.Multiply:
        it = it.left  # `TASKS * 2`
    elements = it.elements if type(it) in (cst.List, cst.Tuple) else literals.get(it.value) \
        if type(it) is cst.Name else None
    if not elements:
        return []
    target = loop.target
    if type(target) is cst.Name and target.value == name:
        picked = [el.value for el in elements]
    elif type(target) in (cst.Tuple, cst.List):
        names = [e.value.value if type(e.value) is cst.Name else None for e in target.elements]
        if name not in names:
            return []
        k = names.index(name)
        picked = [el.value.elements[k].value if type(el.value) in (cst.Tuple, cst.List)
                  and k < len(el.value.elements) else None for el in elements]
    else:
        return []
    if any(type(p) is not cst.SimpleString for p in picked):
        return []
    out = []
    for p in picked:
        if p.evaluated_value not in out:
            out.append(p.evaluated_value)
    return out


def _literal_lists(module: cst.Module) -> dict:
    out = {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and type(small.value) in (cst.List, cst.Tuple):
                for t in small.targets:
                    if type(t.target) is cst.Name:
                        out[t.target.value] = small.value.elements
    return out
