"""Dict arguments with one set of keys in different orders, for HPU017.

Dynamo guards a dict argument the compiled code iterates (``for name, ids in features.items()``)
on its keys in order: the same keys in another order fail the guard and recompile. Measured on torch
2.13 (CPU, ``eager`` backend; counts in tests/test_compile_kinds20.py): batches from three collators
that return the same feature keys in three orders, interleaved, given to a compiled step whose model
sums the embeddings of every feature it iterates, are 3 graphs and 2 recompiles; the same batches read
by key only (``features["user"]``) are one graph, and so are batches rebuilt with sorted keys. Two
orders cost one recompile (not reported: what automatic dynamic costs anyway).

Found statically when the argument is a call of a function of the file, or of one picked from a
module-level list or tuple of them, each returning a dict literal with string keys, and the compiled
function (or the `forward` of a module, or a function, it passes the dict to) iterates that parameter.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, loop_head
from hpulint.rules.compile_loop_reach import body_calls, repeated_loops
from hpulint.rules.compile_feedback import _definition
from hpulint.rules.compiled_region import MANY, is_compile_call, recompiles_text
from hpulint.rules.compile_reach_syntax import walk_body

ITERATE = frozenset({"items", "keys", "values"})
MESSAGE = (
    "`{name}` is given `{arg}` in `{loop}`: dicts with the same {nkeys} keys in {n} different orders ({orders}), "
    "and {fn}() iterates `{param}`: Dynamo guards on a dict's keys in order, so each new order is a new graph, "
    "{values}. Give every batch one key order before the call (`{{k: batch[k] for k in sorted(batch)}}`, or "
    "the collators all build it from one key list), or read the entries by key"
)


def key_order_changes(an, module: cst.Module, compiled: set, define, limit: int) -> list:
    """(call, message) for a call of a compiled name in a loop of 3 or more passes given a dict
    whose key order changes (see above). ``define(name)``: (FunctionDef, parameters to skip)."""
    if module is None:
        return []
    defs = {st.name.value: st for st in module.body if type(st) is cst.FunctionDef}
    lists, picked = {}, {}
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                    and type(small.value) in (cst.List, cst.Tuple):
                lists[small.targets[0].target.value] = small.value
            elif type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name \
                    and type(small.value) is cst.IfExp and (is_compile_call(an, small.value.body)
                                                            or is_compile_call(an, small.value.orelse)):
                made = small.value.orelse if is_compile_call(an, small.value.orelse) else small.value.body
                if made.args and type(made.args[0].value) is cst.Name and made.args[0].value.value in defs:
                    # `torch_xla.compile(f) if xla else torch.compile(f)`
                    picked[small.targets[0].target.value] = defs[made.args[0].value.value]
    compiled = compiled | set(picked)
    if not compiled:
        return []
    out = []
    for loop, _, _ in repeated_loops(an, module):
        for call in body_calls(loop.body):
            name = code(call.func)
            if name not in compiled:
                continue
            fn, skip = (picked[name], 0) if name in picked else define(name)
            if fn is None:
                continue
            params = [p.name.value for p in fn.params.params][skip:]
            for k, a in enumerate(call.args):
                if a.keyword is not None or a.star or k >= len(params):
                    continue
                orders = _orders(a.value, defs, lists)
                if len(orders) < MANY or len({tuple(sorted(o)) for o in orders}) != 1:
                    continue
                where = _iterates(module, fn, params[k], 0)
                if where is None:
                    continue
                n = len(orders)
                shown = "; ".join(", ".join(o) for o in sorted(orders)[:3])
                out.append((call, MESSAGE.format(name=name, arg=code(a.value), loop=loop_head(loop, 60),
                                                 nkeys=len(next(iter(orders))), n=n, orders=shown, fn=where[0],
                                                 param=where[1], values=recompiles_text(n, limit))))
                break
    return out


def _orders(arg, defs: dict, lists: dict) -> set:
    """The key orders (tuples of str) of the dicts ``arg`` may be: `collate(...)`, `SOURCES[i](...)`."""
    if type(arg) is not cst.Call:
        return set()
    func = arg.func
    names = []
    if type(func) is cst.Name:
        names = [func.value]
    elif type(func) is cst.Subscript and type(func.value) is cst.Name and func.value.value in lists:
        names = [el.value.value for el in lists[func.value.value].elements if type(el.value) is cst.Name]
    out = set()
    for name in names:
        fn = defs.get(name)
        order = _returned_keys(fn) if fn is not None else None
        if order is not None:
            out.add(order)
    return out


def _returned_keys(fn: cst.FunctionDef):
    """The keys of the dict literal ``fn`` returns (all str, one return), or None."""
    returns = [n for n in walk_body(fn) if type(n) is cst.Return]
    if len(returns) != 1 or type(returns[0].value) is not cst.Dict:
        return None
    keys = []
    for el in returns[0].value.elements:
        if type(el) is not cst.DictElement or type(el.key) is not cst.SimpleString:
            return None
        keys.append(el.key.evaluated_value)
    return tuple(keys)


def _iterates(module, fn: cst.FunctionDef, param: str, depth: int):
    """(function name, parameter) where ``param`` of ``fn`` (or what ``fn`` passes it to: a
    function or a module of the file) is iterated, or None."""
    for n in walk_body(fn):
        if type(n) in (cst.For, cst.CompFor) and _iterated(n.iter, param):
            return fn.name.value, param
    if depth >= 2:
        return None
    for n in walk_body(fn):
        if type(n) is not cst.Call or type(n.func) is not cst.Name:
            continue
        for k, a in enumerate(n.args):
            if a.keyword is None and not a.star and type(a.value) is cst.Name and a.value.value == param:
                callee, skip = _definition(module, n.func.value)
                if callee is None:
                    continue
                params = [p.name.value for p in callee.params.params][skip:]
                if k < len(params):
                    got = _iterates(module, callee, params[k], depth + 1)
                    if got is not None:
                        return got
    return None


def _iterated(it, param: str) -> bool:
    if type(it) is cst.Name:
        return it.value == param
    return type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value in ITERATE \
        and type(it.func.value) is cst.Name and it.func.value.value == param
