"""Python containers whose length or keys change from one call of a compiled function to the
next, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- **a list or ``collections.deque`` attribute of a plain object that the compiled region appends
  to** (a loss history kept by a helper object): Dynamo guards on its length
  (``len(G['guard'].history) == 3``), so every call recompiles: 8 graphs, 7 recompiles and an
  eager fallback over 12 calls, without ``maxlen`` or with ``maxlen=16``; ``maxlen=k`` stops
  growing after k calls: k + 1 graphs (``maxlen=2``: 3, ``maxlen=4``: 5). A tensor ring buffer
  updated in place: 1 graph.
- **``torch.tensor(ids)`` of a Python list argument** (token ids per sentence): Dynamo guards on
  the list's length (``len(token_ids) == 2``), never made dynamic, so each new length is a
  recompile: sentences of 5 lengths, 5 graphs. (Padded to one length, items 0 and 1 are still
  specialized, ``token_ids[2] == 0``: a recompile per new pattern, not reported.) The tensor
  made in the eager code and passed in: its size is made dynamic after one recompile.
- **a dict argument whose set of keys is one of a few** (tasks picked per batch from a list of
  key tuples): Dynamo guards on the dict's keys: 4 key sets, 4 graphs and 3 recompiles; 2 sets,
  2 graphs.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in
from hpulint.rules.compiled_region import compiled_why, recompiles_text

APPENDS_OBJ = (
    "`{stmt}` in {fn}() appends to `self.{attr}`, a {kind} of a {cls} object that lives across calls, "
    "in the compiled region ({why}): Dynamo guards on the {guard}, so {values}. Keep the history "
    "in a tensor ring buffer updated in place (`torch.roll`, or an index that wraps), or append in the "
    "eager code around the compiled call"
)
GROWS = ("every call recompiles, and after `recompile_limit` ({limit}) Dynamo runs the function eagerly for the "
         "rest of the run (eager fallback)")
TENSOR_OF_LIST = (
    "`{stmt}` makes a tensor from `{param}`, a Python list the caller passes ({arg}), inside the compiled "
    "{fn}(): Dynamo guards on the list's length, which it never makes dynamic, so each new length is a "
    "recompile, and after `recompile_limit` ({limit}) it runs the function eagerly for the rest of "
    "the run (eager fallback). Make the tensor in the eager code and pass it in (its size is made dynamic "
    "after one recompile)"
)
LIST_MAKERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.FloatTensor",
                         "torch.IntTensor"})



def history_findings(an, appends: list, histories: dict, limit: int) -> list:
    """(append call, deferred message) for each `self.<attr>.append(...)` (``appends``: call,
    function scope, attr) on a list or deque of a plain object (``histories``: class name ->
    history_attrs), reported when the function runs in the compiled region."""
    out = []
    for node, fn, attr in appends:
        keyed, attr = attr.endswith("[]"), attr.rstrip("[]")
        kind, maxlen = histories.get(fn.cls.name, {}).get(attr, (None, None))
        if kind is not None and keyed != (kind == "dict of lists"):
            continue  # `self.h[0].append` on a list, `self.maps.append` on a dict
        if kind is None or maxlen is not None and maxlen < 2:
            continue  # maxlen=1: two lengths, one recompile
        values = GROWS.format(limit=limit) if maxlen is None or maxlen >= limit else \
            f"it compiles once per length up to `maxlen`, {recompiles_text(maxlen + 1, limit, 'lengths')}"

        def when(fn=fn, attr=attr, kind=kind, values=values, stmt=code(node)):
            why = compiled_why(an, fn)
            if why is None:
                return None
            guard = "length of each list in it" if kind == "dict of lists" else f"{kind}'s length"
            return APPENDS_OBJ.format(stmt=stmt, fn=fn.name, attr=attr, kind=kind, cls=fn.cls.name, why=why,
                                      values=values, guard=guard)
        out.append((node, when))
    return out


def history_attrs(cls: cst.ClassDef) -> dict:
    """attr -> ("list" | "deque", maxlen or None) for `self.<attr> = []`/`list()`/`deque(...)` in
    ``__init__`` of a class that is not an nn.Module, when no other method re-binds or clears it."""
    bases = [code(b.value) for b in cls.bases]
    if any(b.endswith("Module") or b.endswith("Sequential") for b in bases):
        return {}
    out, reset = {}, set()
    for st in cls.body.body:
        if type(st) is not cst.FunctionDef:
            continue
        for n in descendants(st.body):
            if type(n) is cst.Assign:
                for t in n.targets:
                    tg = t.target
                    if type(tg) is cst.Attribute and code(tg.value) == "self":
                        made = _container(n.value, _int_defaults(st)) if st.name.value == "__init__" else None
                        if made is not None:
                            out[tg.attr.value] = made
                        elif st.name.value != "__init__":
                            reset.add(tg.attr.value)
                    if type(tg) is cst.Subscript and type(tg.value) is cst.Attribute \
                            and code(tg.value.value) == "self" and st.name.value != "__init__":
                        reset.add(tg.value.attr.value)  # `self.maps[k] = []` elsewhere: emptied
            elif type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "clear":
                recv = n.func.value.value if type(n.func.value) is cst.Subscript else n.func.value
                if type(recv) is cst.Attribute and code(recv.value) == "self":
                    reset.add(recv.attr.value)
    return {k: v for k, v in out.items() if k not in reset}


def _int_defaults(fn: cst.FunctionDef) -> dict:
    return {p.name.value: int(p.default.value) for p in fn.params.params if type(p.default) is cst.Integer}


def _container(value: cst.BaseExpression, defaults: dict) -> Optional[tuple]:
    if type(value) is cst.List and not value.elements:
        return "list", None
    if type(value) is cst.Dict and value.elements and all(
            type(el) is cst.DictElement and type(el.value) is cst.List and not el.value.elements
            for el in value.elements):
        return "dict of lists", None  # `{"down": [], "up": []}`: a list per key
    if type(value) is cst.Call and code(value.func) == "list" and not value.args:
        return "list", None
    if type(value) is cst.Call and code(value.func) in ("deque", "collections.deque"):
        maxlen = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "maxlen"),
                      value.args[1].value if len(value.args) > 1 and value.args[1].keyword is None else None)
        if maxlen is None:
            return "deque", None
        if type(maxlen) is cst.Integer:
            return "deque", int(maxlen.value)
        if type(maxlen) is cst.Name and maxlen.value in defaults:
            return "deque", defaults[maxlen.value]  # `maxlen=window`, `window=16` by default
        return None  # a length not known here
    return None


def tensor_of_list(module: cst.Module, definition, callee: str) -> list:
    """(torch.tensor call, parameter, argument said) for `torch.tensor(p)` (or `torch.tensor(p.attr)`)
    in what the compiled ``callee`` runs (``definition``: (FunctionDef, parameters to skip)), where a
    call of ``callee`` in a loop or comprehension passes, for p, a list that its loop makes anew (a
    list comprehension, `list(range(n))`, `[v] * n`, `xs[:n]`, or a call of a function of the file
    that returns one), or objects whose list attribute is made so (`Params(stop=list(range(i)))`)."""
    fn, skip = definition
    if fn is None:
        return []
    params = [p.name.value for p in fn.params.params][skip:]
    made = []
    for n in descendants(fn.body):
        if type(n) is not cst.Call or code(n.func) not in LIST_MAKERS or not n.args:
            continue
        first = n.args[0].value
        if type(first) is cst.Name and first.value in params:
            made.append((n, first.value, None))
        elif type(first) is cst.Attribute and type(first.value) is cst.Name and first.value.value in params:
            made.append((n, first.value.value, first.attr.value))
    if not made:
        return []
    from hpulint.rules.compile_batch_sizes import calls_with_bindings

    returns_list = {f.name.value for f in descendants(module) if type(f) is cst.FunctionDef and _returns_list(f)}
    out = []
    for call, bindings in calls_with_bindings(module, callee):
        bound = set(bindings)
        for node, param, attr in made:
            k = params.index(param)
            arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            if arg is None and k < len(positional):
                arg = positional[k]
            if arg is None:
                continue
            if attr is not None:
                said = _object_lists(module, arg, attr, bindings)
                if said is not None:
                    out.append((node, f"{param}.{attr}", said))
                continue
            if not set(names_in(arg)) & bound:
                continue
            if _varying_list(arg, bound) or (type(arg) is cst.Call and type(arg.func) is cst.Name
                                             and arg.func.value in returns_list):
                out.append((node, param, f"`{code(arg)}`"))
    return out


def _varying_list(v: cst.BaseExpression, names: set) -> bool:
    """A list whose length follows ``names``: a comprehension over them, `list(range(n))`,
    `[v] * n`, `xs[:n]`."""
    if type(v) is cst.ListComp:
        return bool(set(names_in(v)) & names)
    if type(v) is cst.Call and type(v.func) is cst.Name and v.func.value in ("list", "tuple") and v.args:
        return _varying_list(v.args[0].value, names)
    if type(v) is cst.Call and type(v.func) is cst.Name and v.func.value == "range":
        return any(set(names_in(a.value)) & names for a in v.args)
    if type(v) is cst.BinaryOperation and type(v.operator) is cst.Multiply:
        for seq, times in ((v.left, v.right), (v.right, v.left)):
            if type(seq) is cst.List and set(names_in(times)) & names:
                return True
    if type(v) is cst.Subscript:
        bounds = [b for el in v.slice if type(el.slice) is cst.Slice for b in (el.slice.lower, el.slice.upper)]
        return any(b is not None and set(names_in(b)) & names for b in bounds)
    return False


def _object_lists(module: cst.Module, arg: cst.BaseExpression, attr: str, bindings: dict) -> Optional[str]:
    """How the objects passed as ``arg`` get list attributes of changing length: made by a
    constructor call with `attr=<a list whose length follows a loop>` (in the call, or in the
    comprehension that builds what the loop iterates), or listed with 3 or more lengths."""
    if type(arg) is cst.Call:
        given = _keyword(arg, attr)
        if given is not None and _varying_list(given, set(bindings)):
            return f"`{attr}={code(given)}`"
        return None
    if type(arg) is not cst.Name or arg.value not in bindings:
        return None
    it = bindings[arg.value]
    if type(it) is cst.Name:
        it = _module_value(module, it.value)
    if type(it) is cst.ListComp and type(it.elt) is cst.Call:
        targets, f = set(), it.for_in
        while f is not None:
            targets |= set(names_in(f.target))
            f = f.inner_for_in
        given = _keyword(it.elt, attr)
        if given is not None and _varying_list(given, targets):
            return f"the `{attr}` of each `{code(it.elt)}`"
    if type(it) in (cst.List, cst.Tuple):
        lengths = {len(g.elements) for el in it.elements if type(el.value) is cst.Call
                   for g in [_keyword(el.value, attr)] if type(g) in (cst.List, cst.Tuple)}
        if len(lengths) >= 3:
            return f"the `{attr}` lists of the objects in `{code(bindings[arg.value])}`, of {len(lengths)} lengths"
    return None


def _keyword(call: cst.Call, name: str):
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _module_value(module: cst.Module, name: str):
    out = None
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                    and small.targets[0].target.value == name:
                out = small.value
    return out


def _returns_list(fn: cst.FunctionDef) -> bool:
    """The function returns a list comprehension (or a list concatenated to one)."""
    for n in descendants(fn.body):
        if type(n) is cst.Return and n.value is not None:
            v = n.value
            while type(v) is cst.BinaryOperation and type(v.operator) is cst.Add:
                v = v.left
            if type(v) is cst.ListComp:
                return True
    return False


def key_sets(it: cst.BaseExpression) -> Optional[int]:
    """How many different sets of keys a literal list of literal tuples/lists of strings holds
    (`[("depth",), ("depth", "normals"), ("segment",)]`), or None."""
    if type(it) not in (cst.List, cst.Tuple) or not it.elements:
        return None
    sets = set()
    for el in it.elements:
        v = el.value
        if type(v) not in (cst.List, cst.Tuple) or not all(type(x.value) is cst.SimpleString for x in v.elements):
            return None
        sets.add(frozenset(code(x.value) for x in v.elements))
    return len(sets)
