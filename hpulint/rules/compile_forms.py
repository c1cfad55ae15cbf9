"""Tensor properties Dynamo guards on and never makes dynamic, for HPU015.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- **rank and dtype of an input**: automatic dynamic shapes make a *size* symbolic after one
  recompile, but a tensor of another rank ("tensor 'x' rank mismatch") or another dtype
  ("dtype mismatch") is a new graph every time: inputs of rank 2, 3 and 4 give 3 graphs and 2
  recompiles, uint8, float16 and float32 inputs the same; two ranks or two dtypes recompile once
  (what automatic dynamic costs anyway, not reported).
- **a size used as a dict key**: a cache of masks keyed by the sequence length, filled inside the
  compiled region (``if T not in cache: cache[T] = ...``): Dynamo guards on the dict's keys and
  keeps the size static instead of making it dynamic ("tensor 'x' size mismatch" on every new
  length), so twelve lengths give 8 graphs, 7 recompiles and an eager fallback; one length, 2
  graphs (the fill, then the hit). One buffer of the largest size, sliced (``mask[:T, :T]``):
  2 graphs for twelve lengths.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in

FACTORIES = {"randn": "float32", "rand": "float32", "zeros": "float32", "ones": "float32", "empty": "float32",
             "randint": "int64", "full": "float32"}
CASTS = {"half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16", "long": "int64",
         "int": "int32", "byte": "uint8", "bool": "bool"}
DTYPES = {"float16": "float16", "half": "float16", "float32": "float32", "float": "float32", "float64": "float64",
          "double": "float64", "bfloat16": "bfloat16", "uint8": "uint8", "int8": "int8", "int32": "int32",
          "int64": "int64", "long": "int64", "bool": "bool"}
NEUTRAL = frozenset({"contiguous", "detach", "clone", "cpu", "requires_grad_"})

FORMS = (
    "`{name}` is called with tensors of {n} different {what} ({said}): Dynamo guards on each input's "
    "rank and dtype, and automatic dynamic shapes do not cover them (they make sizes dynamic, not ranks or "
    "dtypes), so each new one is a new graph: {values}. Give the input one form before the call (reshape it "
    "to one rank, cast it to one dtype), or compile one function per form"
)
SIZE_KEY = (
    "The compiled `{name}` runs {fn}(), which keys the dict `{cache}` by a size (`{stmt}`): Dynamo "
    "guards on the dict's keys and keeps a size used as a key static instead of making it dynamic, so each "
    "new size is a recompile, and after `recompile_limit` ({limit}) Dynamo runs it eagerly for the rest of "
    "the run (eager fallback). Keep one tensor of the largest size (a buffer) and slice it to the size "
    "(`mask[:T, :T]`: made dynamic after one recompile), or build the value in the graph each call"
)


def tensor_form(expr: cst.BaseExpression) -> Optional[tuple]:
    """(rank, dtype) of a tensor a literal factory call makes (`torch.randn(4, 3, 16, 16)`,
    `torch.randint(0, 256, (2, 3, 8, 8), dtype=torch.uint8)`, `torch.rand(2, 3).half()`), or None."""
    dtype = None
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Call:
        method = expr.func.attr.value
        if method in CASTS and not expr.args:
            dtype = dtype or CASTS[method]
        elif method == "to" and expr.args and _dtype(expr.args[0].value):
            dtype = dtype or _dtype(expr.args[0].value)
        elif method not in NEUTRAL:
            return None
        expr = expr.func.value
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or code(expr.func.value) != "torch":
        return None
    leaf = expr.func.attr.value
    if leaf not in FACTORIES:
        return None
    positional = [a.value for a in expr.args if a.keyword is None and not a.star]
    if leaf == "randint":
        positional = positional[2:] if len(positional) >= 3 else positional[1:]
    elif leaf == "full":
        positional = positional[:1]
    if len(positional) == 1 and type(positional[0]) in (cst.Tuple, cst.List):
        sizes = [el.value for el in positional[0].elements]
    else:
        sizes = positional
    if not sizes or any(type(s) is cst.StarredElement for s in sizes):
        return None
    for a in expr.args:
        if a.keyword is not None and a.keyword.value == "dtype":
            dtype = dtype or _dtype(a.value)
            if _dtype(a.value) is None:
                return None
    return len(sizes), dtype or FACTORIES[leaf]


def _dtype(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.Attribute and code(node.value) == "torch":
        return DTYPES.get(node.attr.value)
    return None



def input_forms(module: cst.Module, compiled: set, calls: list, fors: list) -> list:
    """(callee, the first call with a second form, {form: first line}) for each compiled callable
    of the file called with tensors of 3 or more (rank, dtype) forms at one argument position: at
    its call sites (`predict(torch.randn(3, 16, 16))`, `predict(torch.randn(4, 3, 16, 16))`), or
    in a loop over a literal list of tensors or of lambdas that make them (`for load in sources:
    f(load())`). ``calls`` and ``fors``: the file's calls and `for` loops, in source order."""
    if module is None or not compiled:
        return []
    literals = {}  # module-level name -> literal list/tuple
    for st in module.body:
        if type(st) is cst.SimpleStatementLine:
            for small in st.body:
                if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                        and type(small.value) in (cst.List, cst.Tuple):
                    literals[small.targets[0].target.value] = small.value
    loops = {}  # for target name -> iterable (literal)
    for n in fors:
        if type(n.target) is cst.Name:
            it = literals.get(n.iter.value) if type(n.iter) is cst.Name else n.iter
            if type(it) in (cst.List, cst.Tuple):
                loops[n.target.value] = it
    seen: dict = {}  # (callee, position) -> [(form, call)]
    for n in calls:
        if type(n.func) is not cst.Name or n.func.value not in compiled:
            continue
        for k, a in enumerate(x for x in n.args if x.keyword is None):
            for form in _arg_forms(a.value, loops):
                seen.setdefault((n.func.value, k), []).append((form, n))
    out = []
    for (callee, _), hits in seen.items():
        forms: dict = {}
        second = None
        for form, call in hits:
            if form not in forms:
                forms[form] = call
                if len(forms) == 2:
                    second = call
        if len(forms) >= 3:
            out.append((callee, second, list(forms)))
    return out


def _arg_forms(expr: cst.BaseExpression, loops: dict) -> list:
    form = tensor_form(expr)
    if form is not None:
        return [form]
    if type(expr) is cst.Name and expr.value in loops:
        items = [el.value for el in loops[expr.value].elements]
    elif type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Name and expr.func.value in loops:
        items = [el.value.body for el in loops[expr.func.value].elements if type(el.value) is cst.Lambda]
    else:
        return []
    forms = [tensor_form(i) for i in items]
    return forms if forms and all(f is not None for f in forms) else []


def forms_text(forms: list) -> tuple:
    """(what differs, how it is said) for the forms found."""
    ranks = {r for r, _ in forms}
    dtypes = {d for _, d in forms}
    if len(dtypes) == 1:
        return "ranks", ", ".join(f"{r} dimensions" for r in sorted(ranks))
    if len(ranks) == 1:
        return "dtypes", ", ".join(sorted(dtypes))
    return "ranks and dtypes", ", ".join(f"{r}-d {d}" for r, d in forms)


# --- a size used as a dict key -----------------------------------------------------------------

SIZE_CALLS = frozenset({"size", "dim"})


def is_size(expr: cst.BaseExpression) -> bool:
    """`x.shape[1]`, `x.size(1)`, `x.shape[-2:]`, `tuple(x.shape)`, `(x.shape[0], x.shape[1])`."""
    for n in descendants(expr):
        if type(n) is cst.Attribute and n.attr.value == "shape":
            return True
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "size":
            return True
    return False


def size_params(calls: list, fn: cst.FunctionDef) -> set:
    """Parameters of ``fn`` that a call of it in the file (``calls``: every Call of the file) fills
    with a size (`self.causal_mask(x.shape[1])`)."""
    params = [p.name.value for p in fn.params.params]
    name = fn.name.value
    out = set()
    for n in calls:
        f = n.func
        called = f.attr.value if type(f) is cst.Attribute else f.value if type(f) is cst.Name else None
        if called != name:
            continue
        skip = 1 if type(f) is cst.Attribute and params and params[0] in ("self", "cls") else 0
        for k, a in enumerate(n.args):
            if a.keyword is None and not a.star and k + skip < len(params) and is_size(a.value):
                out.add(params[k + skip])
            elif a.keyword is not None and a.keyword.value in params and is_size(a.value):
                out.add(a.keyword.value)
    return out


def size_key(calls: list, fn: cst.FunctionDef, key: cst.BaseExpression) -> bool:
    """The key is a size: written as one, or a parameter that callers (``calls``: every Call of the
    file) fill with one, or a local assigned one (`T = x.shape[1]`)."""
    if is_size(key):
        return True
    names = set(names_in(key))
    if not names:
        return False
    if names & size_params(calls, fn):
        return True
    for n in descendants(fn.body):
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and n.targets[0].target.value in names and is_size(n.value):
            return True
    return False


def dict_names(assigns: list) -> set:
    """Names and attribute names bound to an empty dict anywhere in the file (`_cache = {}` in a
    class body, `self.masks = {}`, a module-level `MASKS = dict()`); ``assigns``: every Assign of
    the file."""
    out = set()
    for n in assigns:
        if (type(n.value) is cst.Dict and not n.value.elements
                or type(n.value) is cst.Call and not n.value.args
                and code(n.value.func) in ("dict", "OrderedDict", "collections.OrderedDict")):
            for t in n.targets:
                if type(t.target) is cst.Name:
                    out.add(t.target.value)
                elif type(t.target) is cst.Attribute:
                    out.add(t.target.attr.value)
    return out


def built_from(assigns: list) -> dict:
    """name -> the names called in what it was last assigned, transitively (`block = Block()`);
    ``assigns``: every Assign of the file, in source order."""
    built: dict = {}
    for n in assigns:
        if len(n.targets) == 1 and type(n.targets[0].target) is cst.Name:
            made = called_names(n.value)
            for ref in names_in(n.value):
                made |= built.get(ref, set())
            built[n.targets[0].target.value] = made
    return built


def called_names(node: cst.CSTNode) -> set:
    return {c.func.value for c in descendants(node) if type(c) is cst.Call and type(c.func) is cst.Name}


def module_callees(module: cst.Module) -> dict:
    """name -> (FunctionDef, parameters not passed) for what a call by that name runs: the file's
    module-level functions, and module-level instances of the file's classes (`model = MDSR()`: its
    `forward`, without `self`)."""
    out: dict = {}
    classes: dict = {}
    assigns = []
    for st in module.body:
        if type(st) is cst.FunctionDef:
            out[st.name.value] = (st, 0)
        elif type(st) is cst.ClassDef:
            classes[st.name.value] = st
        elif type(st) is cst.SimpleStatementLine:
            assigns += [s for s in st.body if type(s) is cst.Assign]
    for name, made in built_from(assigns).items():
        cls = next((c for c in sorted(made) if c in classes and _forward_of(classes[c]) is not None), None)
        if cls is not None and name not in out:
            out[name] = (_forward_of(classes[cls]), 1)
    return out


def _forward_of(cls: cst.ClassDef):
    return next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"), None)
