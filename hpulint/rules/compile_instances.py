"""Instances of one module class, each compiled on its own, built with different structures, for HPU016.

Measured on torch 2.13 (CPU, ``eager`` backend; fixtures in fixtures/HPU016): the instances share
the class's ``forward`` code object and so one compile cache, and Dynamo guards on each module's
structure: the length of an ``nn.ModuleList`` it iterates ("len(self._modules['layers']._modules)
!= 1") and the shapes of its parameters ("size mismatch ... Guard failed on a parameter"). Four task
heads of one class with four different (depth, output channels) pairs, each given to
``torch.compile``: 4 graphs, 3 recompiles; four identical instances (regional compilation of a stack
of equal blocks): one graph; two structures: one recompile (not reported).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in
from hpulint.rules.compiled_region import MANY, distinct_values, recompiles_text

MESSAGE = (
    "`{compile}` compiles each instance of `{cls}` in `{holder}` on its own, and they are built with {n} "
    "different structures ({what}): every instance runs the one `{cls}.forward` code object, which has one "
    "compile cache, and Dynamo guards on the module's structure (the length of a module list, the shapes of "
    "its parameters), so {values}. Compile the parent module once (Dynamo inlines each instance with its own "
    "structure: one graph per call site, no recompile), or compile only instances of one structure"
)
CONTAINERS = ("ModuleDict", "ModuleList", "Sequential", "dict", "list", "tuple")


def per_instance_compiles(module: cst.Module, sites: list, limit: int) -> list:
    """(compile call, message) for each ``(compile call, iterable)`` in ``sites`` (a compile of the
    target of a comprehension or loop over ``iterable``) whose instances are of one class of the file,
    built with 3 or more different values of the constructor arguments that set their structure."""
    if module is None or not sites:
        return []
    assigned = {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
                assigned[small.targets[0].target.value] = small.value
    classes = {st.name.value: st for st in module.body if type(st) is cst.ClassDef}
    out = []
    for call, iterable in sites:
        holder = _root(iterable)
        if holder is None or holder not in assigned:
            continue
        got = _structures(assigned[holder], assigned, classes)
        if got is None:
            continue
        cls, n, what = got
        if n < MANY:
            continue
        out.append((call, MESSAGE.format(compile=code(call), cls=cls, holder=holder, n=n, what=what,
                                         values=recompiles_text(n, limit, unit="structures"))))
    return out


def _root(it: cst.BaseExpression) -> Optional[str]:
    """`heads`, `heads.items()`, `heads.values()` -> heads."""
    if type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value in ("items", "values") \
            and not it.args:
        it = it.func.value
    return it.value if type(it) is cst.Name else None


def _unwrap(value: cst.BaseExpression) -> cst.BaseExpression:
    for _ in range(2):
        if type(value) is cst.Call and len(value.args) == 1 and code(value.func).rsplit(".", 1)[-1] in CONTAINERS:
            value = value.args[0].value
    return value


def _structures(value, assigned: dict, classes: dict) -> Optional[tuple]:
    """(class name, number of different structures, what differs) for a holder built as instances of
    one class of the file: a comprehension over a literal (or a module-level literal's `.items()`),
    or a literal list/dict of constructor calls."""
    value = _unwrap(value)
    if type(value) in (cst.List, cst.Tuple):
        calls = [el.value for el in value.elements if type(el) is cst.Element]
    elif type(value) is cst.Dict:
        calls = [el.value for el in value.elements if type(el) is cst.DictElement]
    else:
        calls = None
    if calls is not None:
        if not calls or any(type(c) is not cst.Call or type(c.func) is not cst.Name for c in calls):
            return None
        names = {c.func.value for c in calls}
        if len(names) != 1 or next(iter(names)) not in classes:
            return None
        cls = classes[next(iter(names))]
        keep = _structural(cls)
        keys = set()
        for c in calls:
            bound = _bind_args(cls, c)
            if bound is None:
                return None
            keys.add(tuple(_int_text(code(bound[p])) for p in sorted(bound) if p in keep))
        params = sorted(p for p in _bind_args(cls, calls[0]) or {} if p in keep)
        return cls.name.value, len(keys), ", ".join(f"`{p}`" for p in params)
    if type(value) in (cst.ListComp, cst.GeneratorExp, cst.DictComp):
        elt = value.value if type(value) is cst.DictComp else value.elt
        f = value.for_in
        if f.inner_for_in is not None or f.ifs or type(elt) is not cst.Call or type(elt.func) is not cst.Name \
                or elt.func.value not in classes:
            return None
        cls = classes[elt.func.value]
        keep = _structural(cls)
        bound = _bind_args(cls, elt)
        if bound is None:
            return None
        varying = {p: a for p, a in bound.items() if p in keep and set(names_in(a)) & set(names_in(f.target))}
        if not varying:
            return None
        elements = _elements(f.iter, assigned)
        if elements is None:
            n = distinct_values(f.iter)
            if n is None:
                return None
            return cls.name.value, n, ", ".join(f"`{p}`" for p in sorted(varying))
        keys = set()
        for el in elements:
            env = _bind(f.target, el)
            if env is None:
                return None
            used = [n for a in varying.values() for n in names_in(a) if n in env]
            keys.add(tuple(_int_text(env[n]) for n in used))
        return cls.name.value, len(keys), ", ".join(f"`{p}`" for p in sorted(varying))
    return None


def _elements(it, assigned: dict) -> Optional[list]:
    """The elements a `for` over ``it`` gives, as expressions (a pair for a dict's `.items()`)."""
    items = False
    if type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value in ("items", "values") \
            and not it.args:
        items = it.func.attr.value == "items"
        it = it.func.value
        if type(it) is cst.Name:
            it = assigned.get(it.value)
        if type(it) is not cst.Dict:
            return None
        pairs = [(el.key, el.value) for el in it.elements if type(el) is cst.DictElement]
        return [p if items else p[1] for p in pairs]
    if type(it) is cst.Name:
        it = assigned.get(it.value)
    if type(it) in (cst.List, cst.Tuple):
        return [el.value for el in it.elements if type(el) is cst.Element]
    return None


def _bind(target, value) -> Optional[dict]:
    """Names of a `for` target -> the text of the part of ``value`` each takes."""
    if type(target) is cst.Name:
        return {target.value: code(value) if isinstance(value, cst.CSTNode) else str(value)}
    if type(target) in (cst.Tuple, cst.List):
        parts = list(value) if isinstance(value, tuple) else \
            [el.value for el in value.elements] if type(value) in (cst.Tuple, cst.List) else None
        if parts is None or len(parts) != len(target.elements):
            return None
        out = {}
        for t, v in zip(target.elements, parts):
            got = _bind(t.value, v)
            if got is None:
                return None
            out.update(got)
        return out
    return None


def _int_text(text: str) -> str:
    """The text of a value, with every float literal taken as one value (only ints and structures
    are counted: a float setting was not measured here)."""
    try:
        float(text)
    except ValueError:
        return text
    return text if text.lstrip("-").isdigit() else "<float>"


def _init(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "__init__"), None)


def _bind_args(cls: cst.ClassDef, call: cst.Call) -> Optional[dict]:
    """__init__ parameter -> argument expression of a constructor call."""
    init = _init(cls)
    if init is None or any(a.star for a in call.args):
        return None
    params = [p.name.value for p in init.params.params][1:]
    out = {}
    for k, a in enumerate(call.args):
        name = a.keyword.value if a.keyword is not None else params[k] if k < len(params) else None
        if name is None:
            return None
        out[name] = a.value
    return out


def _structural(cls: cst.ClassDef) -> set:
    """The __init__ parameters that set the module's structure: given to a call in __init__ (a layer's
    size, `range(depth)` for a module list), or stored as `self.<attr>` that forward reads."""
    init = _init(cls)
    if init is None:
        return set()
    params = {p.name.value for p in init.params.params}
    forward = next((st for st in cls.body.body if type(st) is cst.FunctionDef and st.name.value == "forward"), None)
    read = set()
    if forward is not None:
        read = {n.attr.value for n in descendants(forward.body) if type(n) is cst.Attribute
                and type(n.value) is cst.Name and n.value.value == "self"}
    out = set()
    for n in descendants(init.body):
        if type(n) is cst.Call and not (type(n.func) is cst.Attribute and n.func.attr.value == "__init__"):
            for a in n.args:
                out |= set(names_in(a.value)) & params
        elif type(n) is cst.Assign and type(n.value) is not cst.Call:
            for t in n.targets:
                tg = t.target
                if type(tg) is cst.Attribute and type(tg.value) is cst.Name and tg.value.value == "self" \
                        and tg.attr.value in read:
                    out |= set(names_in(n.value)) & params
    return out - {"self"}
