"""A batch of one among batches of other sizes, for HPU015.

Dynamo's automatic dynamic shapes make a dimension dynamic at the second size it sees, but a
dynamic size is assumed to be 2 or more: a size of 1 (or 0) is always specialized, so a batch of
one gets a graph of its own ("0/1 specialization"; PyTorch docs, "Dynamic Shapes"). Measured on
torch 2.13 (CPU, ``eager`` backend): batches of 8, 5, 1, 3, 1, 7, 6 rows give 3 graphs and 2
recompiles (8 static, 5 dynamic, 1 specialized), also when the batches come from a generator of
the file that yields ``torch.randint(0, v, (n, 12))`` for each ``n`` of a list it is given; 8, 5,
3, 7 give 2 graphs; 1, 8, 5 give 2 (the first graph is the batch of one); with
``dynamic=True``, 2. So it is reported when the sizes, in order, need 3 graphs: a first size of 2
or more, another size of 2 or more, and a 1 or a 0.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, keyword
from hpulint.rules.compile_batch_sizes import module_literal
from hpulint.rules.compiled_region import SHAPE_FACTORIES

MESSAGE = (
    "`{name}` is called in a loop with a dimension of sizes {sizes} (`{arg}`): the second size makes the dimension "
    "dynamic, but Dynamo assumes a dynamic size is 2 or more and specializes a size of {small} on its own, so "
    "{small_said} gets a graph of its own, {values}. Pad a batch of one to two rows (and drop the extra output), "
    "or compile with `dynamic=True` (one dynamic graph and one for the batch of one: 2 graphs)"
)


def batch_of_one(rule) -> list:
    """(call, message) for each compiled callable of ``rule`` (an HPU015 rule: ``compiled`` name ->
    (compile node, target), ``calls`` in loops) fed sizes that need 3 graphs this way."""
    if "mark_dynamic" in rule.ctx.source:
        return []
    out, done = [], set()
    for call, callee, loop, counters in rule.calls:
        if callee not in rule.compiled or callee in done or _dynamic(rule.compiled[callee][0]):
            continue
        for a in call.args:
            if a.keyword is not None or a.star:
                continue
            got = _sizes(rule, a.value, loop, counters)
            if got is None:
                continue
            sizes, arg = got
            small = sorted({v for v in sizes if v in (0, 1)} - {sizes[0]})
            if sizes[0] < 2 or not any(v >= 2 and v != sizes[0] for v in sizes) or not small:
                continue
            n = 2 + len(small)
            shown = ", ".join(str(v) for v in sizes[:8]) + (", ..." if len(sizes) > 8 else "")
            small_text = " and ".join(str(v) for v in small)
            out.append((call, MESSAGE.format(
                name=callee, sizes=shown, arg=arg, small=small_text,
                small_said={(1,): "a batch of one", (0,): "an empty batch"}.get(tuple(small), "each of them"),
                values=f"{n} graphs, {n - 1} recompiles (each a full compile)")))
            done.add(callee)
            break
    return out


def _dynamic(at) -> bool:
    return type(at) is cst.Call and keyword(at, "dynamic") is not None


def _sizes(rule, arg: cst.BaseExpression, loop, counters: dict) -> Optional[tuple]:
    """(the sizes a dimension of ``arg`` takes, in order, and the code they come from), for a
    factory sized by a loop counter over a literal list of ints, or a loop over a generator of the
    file that yields such a factory for each item of the literal list it is given."""
    expr = arg
    if type(arg) is cst.Name:
        expr = rule.value_in_loop(arg.value, loop) or arg
    if type(expr) is cst.Call:
        for name in _dim_names(expr):
            lp = counters.get(name)
            it = getattr(getattr(lp, "node", None), "iter", None)
            values = _ints(rule.module, it)
            if values is not None:
                return values, code(it)
        return None
    if type(expr) is not cst.Name:
        return None
    for lp in loop.chain():
        node = lp.node
        if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == expr.value:
            return _generated(rule, node.iter)
    return None


def _generated(rule, it) -> Optional[tuple]:
    """`gen([8, 5, 1])` where `def gen(sizes): for n in sizes: yield torch.randn(n, 12)`."""
    if type(it) is not cst.Call or type(it.func) is not cst.Name or not it.args:
        return None
    fn = next((st for st in rule.module.body if type(st) is cst.FunctionDef and st.name.value == it.func.value), None)
    if fn is None or not fn.params.params:
        return None
    values = _ints(rule.module, it.args[0].value)
    first = fn.params.params[0].name.value
    if values is None:
        return None
    for n in descendants(fn.body):
        if type(n) is cst.For and type(n.iter) is cst.Name and n.iter.value == first and type(n.target) is cst.Name:
            for y in descendants(n.body):
                if type(y) is cst.Yield and type(y.value) is cst.Call and n.target.value in _dim_names(y.value):
                    return values, code(it)
    return None


def _dim_names(call: cst.Call) -> set:
    """Names given as a whole dimension of a tensor factory: `torch.randn(n, 12)`,
    `torch.zeros((n, d))`, `torch.randint(0, v, (n, 12))`."""
    leaf = call.func.attr.value if type(call.func) is cst.Attribute else \
        call.func.value if type(call.func) is cst.Name else ""
    positional = [a.value for a in call.args if a.keyword is None]
    if leaf == "randint":
        sizes = positional[2:] + [a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"]
    elif leaf in SHAPE_FACTORIES and leaf not in ("arange", "linspace"):
        sizes = positional
    else:
        return set()
    out = set()
    for s in sizes:
        elements = [e.value for e in s.elements] if type(s) in (cst.Tuple, cst.List) else [s]
        out |= {e.value for e in elements if type(e) is cst.Name}
    return out


def _ints(module: cst.Module, it) -> Optional[list]:
    if type(it) is cst.Name:
        it = module_literal(module, it.value)
    if type(it) not in (cst.List, cst.Tuple) or not it.elements:
        return None
    if not all(type(e.value) is cst.Integer for e in it.elements):
        return None
    return [int(e.value.value) for e in it.elements]
