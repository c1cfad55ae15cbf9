"""A Python loop over a tensor's first dimension in a compiled function fed batches of changing
size, for HPU015.

Dynamo unrolls a Python loop over a tensor (``for row in x``, ``zip(dist, labels)``,
``enumerate(x)``, ``x.unbind()``, a comprehension, ``range(x.shape[0])``, ``range(len(x))``): the
number of passes is the size, so the size is never made dynamic (automatic dynamic does not help)
and every new size is a graph of its own. Measured on torch 2.13 (CPU, ``eager`` backend):

- a batch-hard triplet loss looping ``zip(dist, labels)`` over a batch of ``2 * random.randint(3, 8)``
  rows, ten steps (4 sizes drawn): 4 graphs, 3 recompiles; the same loss vectorized (masks over the
  distance matrix, ``amax``/``amin`` along a dimension): 2 graphs (the one recompile that makes the
  size dynamic);
- ``for row in x`` (and each form above) over ``torch.randn(4 + step, 8)`` for ten steps: 8 graphs, 7
  recompiles and an eager fallback; over ``torch.randn(4, 8 + step)`` (the loop's length fixed, the
  other dimension changing): 2 graphs.

The argument's first dimension is followed back through the loop's names to a loop counter or a
size drawn at random in the loop (``n = random.randint(3, 8)``, ``random.choice([...])``): tensor
factories (the first size), ``torch.arange(n)``, ``.repeat_interleave``/``.repeat`` of such a
tensor, ``x.numel()``/``len(x)``/``x.shape[0]``/``x.size(0)`` of one, and calls that keep the batch
dimension of their first argument (a module, ``F.normalize``, ``.float()``...).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import bound_arguments, child_nodes, code, short, names_in
from hpulint.rules.compiled_region import MANY, counter_values

FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full", "randint", "randperm", "arange",
                       "linspace", "new_zeros", "new_ones", "new_empty", "new_full"})
ITERATING = frozenset({"zip", "enumerate", "reversed", "list", "tuple"})
KEEPS_ROWS = frozenset({"repeat_interleave", "repeat", "float", "half", "bfloat16", "double", "long", "int", "to",
                        "contiguous", "clone", "detach", "normalize", "relu", "softmax", "log_softmax", "sigmoid",
                        "tanh", "abs", "exp", "flatten", "unsqueeze", "squeeze"})
RANDOM_INTS = frozenset({"random.randint", "random.randrange", "random.choice", "numpy.random.randint",
                         "np.random.randint"})

MESSAGE = (
    "`{arg}` goes to the compiled `{name}` with a first dimension that changes from pass to pass ({how}), "
    "and `{name}` loops over it in Python (`{use}`): Dynamo unrolls the loop, so the size is never made "
    "dynamic and each new size is a new graph, {values}. Vectorize the loop (masks over the whole batch, "
    "reductions along a dimension), or pad the batch to a fixed size"
)


def iterated_params(fn: cst.FunctionDef, params: list) -> dict:
    """{param: the loop's text} for the parameters whose first dimension a Python loop of ``fn``
    walks."""
    out: dict = {}
    stack = list(child_nodes(fn.body))
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) in (cst.For, cst.CompFor):
            for p in _walked(n.iter, params):
                out.setdefault(p, f"for ... in {short(n.iter, 40)}")
        elif type(n) is cst.Call and _leaf(n.func) == "unbind":
            row = _unbound(n)
            if row in params:
                out.setdefault(row, code(n))
        stack += list(child_nodes(n))
    return out


def _unbound(call: cst.Call) -> Optional[str]:
    """`x.unbind()`, `x.unbind(0)`, `torch.unbind(x)`, `torch.unbind(x, 0)` -> x."""
    func = call.func
    args = [a.value for a in call.args if a.keyword is None] + \
        [a.value for a in call.args if a.keyword is not None and a.keyword.value == "dim"]
    if type(func) is not cst.Attribute:
        return None
    if code(func.value) == "torch":
        recv, dims = (args[0], args[1:]) if args else (None, [])
    else:
        recv, dims = func.value, args
    if type(recv) is not cst.Name or any(code(d) != "0" for d in dims):
        return None
    return recv.value


def _walked(it: cst.BaseExpression, params: list) -> set:
    if type(it) is cst.Name and it.value in params:
        return {it.value}
    if type(it) is cst.Call and type(it.func) is cst.Name:
        if it.func.value in ITERATING:
            return {a.value.value for a in it.args if type(a.value) is cst.Name and a.value.value in params}
        if it.func.value == "range" and len(it.args) == 1:
            row = _rows_of(it.args[0].value)
            return {row} if row in params else set()
    return set()


def _rows_of(expr: cst.BaseExpression) -> Optional[str]:
    """`x.shape[0]`, `x.size(0)`, `len(x)`, `x.numel()` (of a 1-D tensor) -> x."""
    if type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape" \
            and len(expr.slice) == 1 and code(expr.slice[0].slice) == "0" and type(expr.value.value) is cst.Name:
        return expr.value.value.value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Name:
        if expr.func.attr.value == "size" and len(expr.args) == 1 and code(expr.args[0].value) == "0":
            return expr.func.value.value
        if expr.func.attr.value == "numel" and not expr.args:
            return expr.func.value.value
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "len" and len(expr.args) == 1 \
            and type(expr.args[0].value) is cst.Name:
        return expr.args[0].value.value
    return None


def row_sources(rule, an, expr: cst.BaseExpression, loop, counters: dict, depth: int = 0) -> dict:
    """{name: (values or None, how)} for the loop counters and random draws in ``loop`` that the first
    dimension of the tensor ``expr`` is made of (``values``: how many sizes it can take; None for a
    counter, counted with counter_values)."""
    if depth > 4 or expr is None:
        return {}
    if type(expr) is cst.Name:
        if expr.value in counters:
            return {expr.value: (None, None)}
        value = rule.value_in_loop(expr.value, loop)
        if value is None:
            return {}
        drawn = _random_ints(an, value)
        if drawn is not None:
            return {expr.value: (drawn, f"`{expr.value} = {code(value)}`")}
        return row_sources(rule, an, value, loop, counters, depth + 1)
    if type(expr) is not cst.Call:
        return {}
    leaf = _leaf(expr.func)
    positional = [a.value for a in expr.args if a.keyword is None and not a.star]
    if leaf in FACTORIES and (type(expr.func) is cst.Name or code(expr.func.value) in ("torch", "np", "numpy")
                              or leaf.startswith("new_")):
        size = positional[2] if leaf == "randint" and len(positional) > 2 else \
            positional[0] if positional and leaf not in ("randint", "linspace") else None
        if leaf == "randint":
            size = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "size"), size)
        if type(size) in (cst.Tuple, cst.List):
            size = size.elements[0].value if size.elements else None
        return _size_sources(rule, an, size, loop, counters, depth)
    if type(expr.func) is cst.Attribute and leaf in KEEPS_ROWS and code(expr.func.value) not in ("torch", "F"):
        return row_sources(rule, an, expr.func.value, loop, counters, depth + 1)
    if positional and (leaf in KEEPS_ROWS or type(expr.func) is cst.Name) \
            and not (type(positional[0]) is cst.Name and positional[0].value in counters):
        # `F.normalize(x)`, `embedder(x)`: a module or a function keeps the batch dimension of its
        # input (a tensor: not given a bare counter, whose value says nothing of a batch)
        return row_sources(rule, an, positional[0], loop, counters, depth + 1)
    return {}


def _size_sources(rule, an, size, loop, counters: dict, depth: int) -> dict:
    """What an int size is made of: counters and random draws, directly or through the rows of a
    tensor (`labels.numel()`)."""
    if size is None:
        return {}
    rows = _rows_of(size)
    if rows is not None:
        return row_sources(rule, an, cst.Name(rows), loop, counters, depth + 1)
    out: dict = {}
    for n in names_in(size):
        if n in counters:
            out[n] = (None, None)
            continue
        value = rule.value_in_loop(n, loop)
        drawn = _random_ints(an, value) if value is not None else None
        if drawn is not None:
            out[n] = (drawn, f"`{n} = {code(value)}`")
    return out


def _random_ints(an, value) -> Optional[int]:
    """How many ints `random.randint(a, b)`, `random.randrange(a, b)`, `random.choice([...])`,
    `np.random.randint(a, b)` can give (literal bounds), else None."""
    if type(value) is not cst.Call:
        return None
    qn = an.qualname(value.func) or code(value.func)
    if qn not in RANDOM_INTS:
        return None
    args = [a.value for a in value.args if a.keyword is None]
    if qn == "random.choice":
        lit = args[0] if args else None
        return len(lit.elements) if type(lit) in (cst.List, cst.Tuple) else None
    ints = [int(a.evaluated_value) for a in args if type(a) is cst.Integer]
    if len(ints) != len(args) or len(ints) < 1 or len(ints) > 2:
        return None
    lo, hi = (0, ints[0]) if len(ints) == 1 else ints
    return hi - lo + 1 if qn == "random.randint" else hi - lo


def looped_sizes(rule, an, call: cst.Call, callee: str, loop, counters: dict, fn, skip: int) -> Optional[str]:
    """The message for a call in ``loop`` of the compiled ``callee`` (running ``fn``, whose first ``skip``
    parameters are not passed) with a tensor whose first dimension changes, which ``fn`` loops over."""
    if fn is None:
        return None
    params = [p.name.value for p in fn.params.params][skip:]
    walked = iterated_params(fn, params)
    if not walked:
        return None
    for param, value in bound_arguments(call, params) or ():
        if param not in walked:
            continue
        sources = row_sources(rule, an, value, loop, counters)
        if not sources:
            continue
        counted = [s for s, (n, _) in sources.items() if n is None]
        if rule.unbounded(set(counted), counters):
            n = None
        else:
            n = counter_values(counters, counted) if counted else 1
            if n is None:
                continue
            for drawn, _ in (v for s, v in sources.items() if v[0] is not None):
                n *= drawn
            if n < MANY:
                continue
        how = ", ".join(h if h else f"`{s}`, the loop's counter" for s, (_, h) in sorted(sources.items()))
        upto = any(v[0] is not None for v in sources.values())
        return MESSAGE.format(arg=code(value), name=callee, how=how, use=walked[param],
                              values=_values(n, rule.limit, upto))
    return None


def _values(n: Optional[int], limit: int, upto: bool) -> str:
    if n is None or n - 1 >= limit:
        said = f"up to {n} sizes" if n is not None and upto else f"{n} sizes" if n is not None else \
            "a new size each pass"
        return (f"{said}: a recompile for each new one until `recompile_limit` ({limit}), then Dynamo runs it "
                "eagerly for the rest of the run (eager fallback)")
    if upto:
        return f"up to {n} sizes: up to {n} graphs, up to {n - 1} recompiles (each a full compile)"
    return f"{n} sizes: {n} graphs, {n - 1} recompiles (each a full compile)"


def _leaf(func) -> str:
    return func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""

