"""Batch sizes that change from one call of a compiled function to the next without a loop
counter saying so, for HPU015. Measured on torch 2.13 (CPU, ``eager`` backend;
docs/compile-target.md):

- **a batch padded to its own longest item** (``pad_sequence``, or ``F.pad``/a tensor factory sized by
  ``max(len(d) for d in docs)`` in a collate function of the file): its length follows the data,
  so with ``dynamic=False`` every new length is a new graph (documents sorted by length, batches of
  4: 8 graphs, 7 recompiles and an eager fallback); padded to a fixed maximum, one graph.
- **``torch._dynamo.mark_static`` in a helper** on a tensor made from the helper's parameter
  (``torch.stack(queue)``, ``torch.cat(chunks)``, the parameter itself), where the callers pass a
  list or tensor whose size follows a loop (``[torch.randn(32) for _ in range(n)]`` for ten queue
  sizes: 8 graphs, 7 recompiles and an eager fallback; one queue size, one graph).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code, descendants, names_in
from hpulint.rules.compiled_region import SHAPE_FACTORIES, distinct_values

PADDED = "a size padded to the longest item of each batch"
FROM_PARAMETER = ("torch.stack", "torch.cat", "torch.concat", "torch.vstack", "torch.as_tensor", "torch.tensor")


def padded_to_longest(an, module: cst.Module, expr: cst.BaseExpression, value_in_loop, loop) -> bool:
    """``expr`` is a batch padded to its own longest item: `pad_sequence(...)`, or a call of a
    function of the file that pads to (or allocates) the longest length of what it is given."""
    for _ in range(3):
        if type(expr) is cst.Name:
            got = value_in_loop(expr.value, loop)
            if got is None:
                return False
            expr = got
            continue
        break
    if type(expr) is not cst.Call:
        return False
    if (an.qualname(expr.func) or "").endswith("pad_sequence"):
        return True
    if type(expr.func) is not cst.Name:
        return False
    fn = next((st for st in module.body if type(st) is cst.FunctionDef and st.name.value == expr.func.value), None)
    return fn is not None and _pads_to_longest(an, fn)


def _pads_to_longest(an, fn: cst.FunctionDef) -> bool:
    longest = set()
    for n in descendants(fn.body):
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and type(n.value) is cst.Call and type(n.value.func) is cst.Name and n.value.func.value == "max" \
                and _measures_lengths(n.value):
            longest.add(n.targets[0].target.value)
    for n in descendants(fn.body):
        if type(n) is not cst.Call:
            continue
        qn = an.qualname(n.func) or ""
        if qn.endswith("pad_sequence"):
            return True
        leaf = qn.rsplit(".", 1)[-1]
        if longest and (leaf == "pad" or leaf in SHAPE_FACTORIES or leaf in ("full", "new_zeros", "new_full")) \
                and any(set(names_in(a.value)) & longest for a in n.args):
            return True
    return False


def _measures_lengths(call: cst.Call) -> bool:
    """`max(len(d) for d in docs)`, `max(map(len, docs))`, `max(t.shape[0] for t in xs)`."""
    for n in descendants(call):
        if type(n) is cst.Name and n.value == "len":
            return True
        if type(n) is cst.Attribute and n.attr.value in ("shape", "size"):
            return True
    return False


def marked_parameter(an, fn: cst.FunctionDef, name: str) -> Optional[tuple]:
    """(parameter, how) when the tensor ``name`` that `mark_static` marks in ``fn`` is a parameter
    of ``fn`` or is made from one (`batch = torch.stack(queue).to(device)`), else None."""
    params = [p.name.value for p in fn.params.params]
    seen = 0
    while seen < 4:
        seen += 1
        if name in params:
            return name, None
        value = _assigned_in(fn, name)
        if value is None:
            return None
        base = _strip_moves(value)
        if type(base) is cst.Name:
            name = base.value
            continue
        if type(base) is cst.Call and (an.qualname(base.func) or "") in FROM_PARAMETER and base.args \
                and type(base.args[0].value) is cst.Name and base.args[0].value.value in params:
            return base.args[0].value.value, code(base.func)
        return None
    return None


def _strip_moves(expr):
    """`torch.stack(q).to(device)`, `.float()`, `.contiguous()`: what they were called on."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute \
            and expr.func.attr.value in ("to", "float", "half", "bfloat16", "contiguous", "cuda", "detach", "long"):
        expr = expr.func.value
    return expr


def _assigned_in(fn: cst.FunctionDef, name: str):
    out = None
    for n in descendants(fn.body):
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and n.targets[0].target.value == name:
            out = n.value
    return out


def comprehension_length(expr: cst.BaseExpression, counters) -> set:
    """`[torch.randn(32) for _ in range(n)]`: the loop names (among ``counters``) its length follows."""
    if type(expr) not in (cst.ListComp, cst.GeneratorExp):
        return set()
    f, out = expr.for_in, set()
    while f is not None:
        it = f.iter
        if type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "range":
            out |= {c for a in it.args for c in names_in(a.value) if c in counters}
        f = f.inner_for_in
    return out


def calls_with_bindings(module: cst.Module, callee: str) -> list:
    """(call, {name: what its `for` or comprehension iterates}) for each call of ``callee`` inside
    loops or comprehensions."""
    out = []
    stack = [(module, {})]
    while stack:
        n, bound = stack.pop()
        if type(n) is cst.For:
            bound = {**bound, **{t: n.iter for t in names_in(n.target)}}
        elif type(n) in (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp):
            f = n.for_in
            while f is not None:
                bound = {**bound, **{t: f.iter for t in names_in(f.target)}}
                f = f.inner_for_in
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == callee and bound:
            out.append((n, bound))
        stack += [(c, bound) for c in child_nodes(n)]
    return out


def size_values(module: cst.Module, arg: cst.BaseExpression, bound: dict) -> Optional[tuple]:
    """(loop names the size of ``arg`` follows, values they take or None when not known) for a list
    comprehension over `range(n)` or a tensor factory sized by `n`, `n` bound by a loop around the call."""
    names = comprehension_length(arg, bound)
    if not names and type(arg) is cst.Call:
        leaf = arg.func.attr.value if type(arg.func) is cst.Attribute else \
            arg.func.value if type(arg.func) is cst.Name else ""
        if leaf in SHAPE_FACTORIES:
            names = {c for a in arg.args if a.keyword is None for c in names_in(a.value) if c in bound}
    if not names:
        return None
    total = 1
    for n in sorted(names):
        it = bound[n]
        if type(it) is cst.Name:
            it = module_literal(module, it.value)
        count = distinct_values(it) if it is not None else None
        if count is None:
            return names, None
        total *= count
    return names, total


def module_literal(module: cst.Module, name: str):
    """The list or tuple literal the module's top level last binds to ``name`` (`SIZES = [8, 5]`)."""
    out = None
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                    and small.targets[0].target.value == name:
                out = small.value if type(small.value) in (cst.List, cst.Tuple) else None
    return out
