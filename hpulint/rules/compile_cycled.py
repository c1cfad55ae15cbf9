"""Arguments a loop cycles over a few values Dynamo guards on one by one, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md), each value is a graph of its
own (a recompile per new one, below the limit or not):

- strings and Enum members from a literal list (`for mode in ("a", "b", "c")`, `for p in Pooling`),
  dicts whose keys are one of a few sets, arguments cycled over three or more container types;
- **nested tuples or lists of different structures** (parse trees given as nested tuples of word ids,
  walked by a recursive helper): Dynamo guards on the length of every tuple it reads and on the type
  of every item (``___check_type_id(tree[0], ...)``), and first compiles the ints in it as constants,
  so each new structure is a new graph: three structures, 3 graphs; nine, 8 graphs and an eager
  fallback; one structure with other ints, 2 graphs (the ints made dynamic after one recompile);
- **a ``functools.partial`` whose keyword changes**: Dynamo guards on a partial's keywords
  (``loss_fn.keywords['beta'] == 1.0``) as on arguments: a float used in tensor arithmetic is made
  dynamic after one recompile (2 graphs), but one that ``F.smooth_l1_loss(beta=)``,
  ``F.huber_loss(delta=)``, ``F.dropout(p=)``... take as a number is not: 4 values, 4 graphs (also
  through a function of the file that gives it to one). The partial rebuilt with the same value
  every step: 1 graph;
- **functions, modules of different classes, dtypes** (an activation ablation passing ``F.relu``,
  ``F.gelu``, ``F.silu`` in turn): compile_cycled_callables.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, names_in
from hpulint.rules.compile_containers import key_sets
from hpulint.rules.compile_cycled_callables import callables_or_dtypes
from hpulint.rules.compile_specialized import FLOAT_ARGS, FUNCTIONAL, _modulo, specialized_uses, values_text
from hpulint.rules.compiled_region import MANY, counter_values

PARTIALS = ("functools.partial", "partial")
STRUCTURE = (
    "`{arg}` is a nested {kind} of {n} different structures ({how}) from one call of the compiled `{name}` "
    "to the next: Dynamo guards on the length of every tuple or list it reads and on the type of every item "
    "(and first compiles the ints in it as constants), so it compiles the function at least once per "
    "structure, {values}. Pass the structure as tensors (node features and child indices, one level at a time), "
    "or keep the recursion in the eager code and compile the cell that combines two children"
)
PARTIAL = (
    "`{arg}` is `{partial}`{maker}, whose `{kw}` changes from one call of the compiled `{name}` to the next ({how}): "
    "Dynamo guards on a partial's keywords as on arguments, and {said} takes this float as a number (never "
    "made dynamic, unlike a float used in tensor arithmetic), so it compiles the function once per value, "
    "{values}. Keep `{kw}` fixed (or a few values, compiled once each), or pass it as a float tensor and do "
    "that step with tensor arithmetic"
)


def cycled(rule, call: cst.Call, loop, counters: dict):
    """(argument, what it is, the loop, guard, values) for an argument that a `for` around the
    call sets to each of a few strings or Enum members (`for mode in ("a", "b", "c")`,
    `for pooling in Pooling`): a recompile per value, below the limit or not."""
    for a in call.args:
        if type(a.value) is not cst.Name:
            continue
        value = rule.value_in_loop(a.value.value, loop)
        if type(value) is cst.Subscript and len(value.slice) == 1 \
                and type(value.slice[0].slice) is cst.Index \
                and set(names_in(value.slice[0].slice.value)) & set(counters):
            # `name = ["a", "b", "c"][i % 3]`: the loop picks one of the listed values
            hit = few(rule, value.value, f"`{code(value)}`", a.value.value)
            if hit is not None:
                return hit
        if type(value) is cst.DictComp and type(value.for_in.iter) is cst.Name:
            hit = _key_sets(rule, a.value.value, value.for_in.iter.value, loop, counters)
            if hit is not None:
                return hit
        for lp in loop.chain():
            node = lp.node
            it = _iterated_for(node, a.value.value) if type(node) is cst.For else None
            if it is None:
                continue
            how = f"`for {code(node.target)} in {code(node.iter)}`"
            if type(it) is cst.Name and it.value in rule.enums and rule.enums[it.value] >= MANY:
                return a.value.value, f"is each member of the Enum `{it.value}`", how, \
                    "an Enum member by identity", rule.enums[it.value]
            hit = few(rule, it, how, a.value.value)
            if hit is not None:
                return hit
    return None


def _iterated_for(node: cst.For, name: str):
    """What the `for` takes ``name`` from: its iterable (`for name in it`), or the first argument
    of `zip(it, ...)` / the second of `enumerate(it)` when ``name`` is that item of the target."""
    target, it = node.target, node.iter
    if type(target) is cst.Name:
        return it if target.value == name else None
    if type(target) is not cst.Tuple or type(it) is not cst.Call or type(it.func) is not cst.Name:
        return None
    items = [el.value for el in target.elements]
    args = [a.value for a in it.args if a.keyword is None and not a.star]
    if it.func.value == "zip":
        pairs = zip(items, args)
    elif it.func.value == "enumerate" and len(items) == 2 and args:
        pairs = [(items[1], args[0])]
    else:
        return None
    return next((src for t, src in pairs if type(t) is cst.Name and t.value == name), None)


def _key_sets(rule, arg: str, keys: str, loop, counters: dict):
    """`weights = {t: 1.0 for t in tasks}` where the loop sets `tasks` to one of a literal list of
    key tuples (`tasks = SETS[step % len(SETS)]`, `for tasks in SETS`): a graph per set of keys."""
    picked = rule.value_in_loop(keys, loop)
    it, how = None, None
    if type(picked) is cst.Subscript and len(picked.slice) == 1 and type(picked.slice[0].slice) is cst.Index \
            and set(names_in(picked.slice[0].slice.value)) & set(counters):
        it, how = picked.value, f"`{keys} = {code(picked)}`"
    for lp in loop.chain():
        node = lp.node
        if it is None and type(node) is cst.For and type(node.target) is cst.Name and node.target.value == keys:
            it, how = node.iter, f"`for {keys} in {code(node.iter)}`"
    if type(it) is cst.Name:
        it = rule.literals.get(it.value)
    n = key_sets(it) if it is not None else None
    if n is None or n < MANY:
        return None
    return arg, "is a dict whose keys are one of a few sets", how, "a dict's keys", n


def few(rule, it, how: str, arg: str):
    """A literal list or tuple of at least MANY different strings or Enum members, container types,
    or structures of nested tuples or lists (those also from a module-level list: `treebank`)."""
    if type(it) is cst.Name:
        listed = rule.literals.get(it.value)
        hit = _structures(listed, how, arg) if listed is not None else None
        return hit
    if type(it) not in (cst.List, cst.Tuple) or not it.elements:
        return None
    values = {code(el.value) for el in it.elements}
    if len(values) < MANY:
        return None
    hit = callables_or_dtypes(rule, it, how, arg)  # functions, modules, dtypes (compile_cycled_callables)
    if hit is not None:
        return hit
    if all(type(el.value) is cst.SimpleString for el in it.elements):
        return arg, "is each of a few strings", how, "a string's value", len(values)
    if all(type(el.value) is cst.Attribute and type(el.value.value) is cst.Name
           and el.value.value.value in rule.enums for el in it.elements):
        return arg, "is each of a few Enum members", how, "an Enum member by identity", len(values)
    kinds = {container(el.value) for el in it.elements}
    if len(kinds) >= MANY:
        said = ", ".join(f"a {k}" for k in sorted(kinds - {"value"}))
        said += " and another value" if "value" in kinds else ""
        return arg, f"is {said} in turn", how, "each argument's type", len(kinds)
    return _structures(it, how, arg)


def _structures(it, how: str, arg: str):
    if type(it) not in (cst.List, cst.Tuple) or not it.elements:
        return None
    kinds = {container(el.value) for el in it.elements}
    shapes = {structure(el.value) for el in it.elements}
    if len(shapes) >= MANY and kinds <= {"tuple", "list"} and None not in shapes \
            and any(any(type(c) is tuple for c in s[1]) for s in shapes):
        return arg, "list" if kinds == {"list"} else "tuple", how, "structure", len(shapes)
    return None


def structure_finding(rule, call: cst.Call, callee: str, counted, fn, skip: int) -> Optional[str]:
    """The message for an argument cycled over nested tuples of different structures (``counted``,
    from `cycled`), when the compiled function (``fn``, its first ``skip`` parameters not passed)
    walks it; else None."""
    arg, kind, how, _, n = counted
    if fn is None:
        return None
    params = [p.name.value for p in fn.params.params][skip:]
    k = 0
    for a in call.args:
        param = a.keyword.value if a.keyword is not None else params[k] if k < len(params) else None
        k += a.keyword is None
        if type(a.value) is cst.Name and a.value.value == arg and param is not None \
                and walks(rule.module, fn, param):
            return structure_message(arg, how, n, callee, rule.limit, kind)
    return None


def structure(expr: cst.BaseExpression):
    """The shape of a literal: (type, child shapes) for a tuple or list, "v" for a number or string,
    None for anything else."""
    if type(expr) in (cst.Tuple, cst.List):
        kids = tuple(structure(el.value) for el in expr.elements)
        return None if None in kids or any(type(el) is cst.StarredElement for el in expr.elements) \
            else (container(expr), kids)
    if type(expr) in (cst.Integer, cst.Float, cst.SimpleString):
        return "v"
    if type(expr) is cst.UnaryOperation and type(expr.expression) in (cst.Integer, cst.Float):
        return "v"
    return None


def structure_message(arg: str, how: str, n: int, name: str, limit: int, kind: str) -> str:
    if n - 1 >= limit:
        values = (f"{n} structures: a recompile for each new one until `recompile_limit` ({limit}), then Dynamo "
                  "runs it eagerly for the rest of the run (eager fallback)")
    else:
        values = f"{n} structures: at least {n} graphs, {n - 1} recompiles (each a full compile)"
    return STRUCTURE.format(arg=arg, kind=kind, n=n, how=how, name=name, values=values)


def walks(module: cst.Module, fn: cst.FunctionDef, param: str) -> bool:
    """The compiled function walks the structure of ``param``: it unpacks or iterates it, or gives
    it to a function of the file that calls itself (a recursive helper)."""
    defs = {n.name.value: n for n in descendants(module) if type(n) is cst.FunctionDef}
    for n in descendants(fn.body):
        if type(n) is cst.Assign and type(n.value) is cst.Name and n.value.value == param \
                and any(type(t.target) in (cst.Tuple, cst.List) for t in n.targets):
            return True
        if type(n) in (cst.For, cst.CompFor) and type(n.iter) is cst.Name and n.iter.value == param:
            return True
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in defs \
                and any(type(a.value) is cst.Name and a.value.value == param for a in n.args):
            helper = defs[n.func.value]
            if any(type(c) is cst.Call and type(c.func) is cst.Name and c.func.value == helper.name.value
                   for c in descendants(helper.body)):
                return True
    return False


def container(expr: cst.BaseExpression) -> str:
    """The Python type a literal element is written as: dict, list, tuple; "value" for anything else."""
    if type(expr) in (cst.Dict, cst.DictComp):
        return "dict"
    if type(expr) in (cst.List, cst.ListComp):
        return "list"
    return "tuple" if type(expr) is cst.Tuple else "value"


# --- a functools.partial whose keyword changes ----------------------------------------------------

def partial_argument(rule, call: cst.Call, callee: str, loop, counters: dict, defs: dict) -> Optional[str]:
    """The message for an argument of a call in ``loop`` that is a `functools.partial` (made in the
    loop, or returned by a function of the file called in the loop) whose keyword is a float that
    the partial's function takes as a number and that follows a loop counter, or None."""
    for a in call.args:
        if type(a.value) is not cst.Name:
            continue
        value = rule.value_in_loop(a.value.value, loop)
        made = _partial_made(rule, value, defs)
        if made is None:
            continue
        partial, bound, maker = made
        for arg in partial.args[1:]:
            if arg.keyword is None:
                continue
            kw = arg.keyword.value
            said = _takes_as_number(rule, partial.args[0].value, kw, defs)
            if said is None:
                continue
            names = set()
            for n in names_in(arg.value):
                names |= set(names_in(bound[n])) if n in bound else {n}
            used = {n for n in names if n in counters}
            for n in set(names) - used:  # through a name the loop assigns (`beta = 0.5 ** epoch`)
                v = rule.value_in_loop(n, loop)
                used |= {m for m in names_in(v) if m in counters} if v is not None else set()
            if not used:
                continue
            n = _modulo(arg.value, counter_values(counters, used))
            if n is None and not rule.unbounded(used, counters) or n is not None and n < MANY:
                continue
            loops = ", ".join(f"`for {code(counters[u].node.target)} in {code(counters[u].node.iter)}`"
                              if type(counters[u].node) is cst.For else "a `while` loop" for u in sorted(used)
                              if not isinstance(counters[u], str))
            how = f"`{a.value.value} = {code(value)}`" + (f", {loops}" if loops else "")
            text = f"functools.partial({code(partial.args[0].value)}, {kw}=...)"
            maker = f" (made by {maker}())" if maker is not None else ""
            return PARTIAL.format(arg=a.value.value, partial=text, maker=maker, kw=kw, name=callee, how=how, said=said,
                                  values=values_text(n, rule.limit, False))
    return None


def _partial_made(rule, value, defs: dict):
    """(the partial call, {parameter: argument} of the function that returned it, its name) for a
    `functools.partial(...)` call, or a call of a function of the file that returns one."""
    if type(value) is not cst.Call:
        return None
    if (code(value.func) in PARTIALS or (rule.an.qualname(value.func) or "") == "functools.partial") and value.args:
        return value, {}, None
    if type(value.func) is not cst.Name or value.func.value not in defs:
        return None
    fn = defs[value.func.value]
    for n in descendants(fn.body):
        if type(n) is cst.Return and type(n.value) is cst.Call and n.value.args \
                and (code(n.value.func) in PARTIALS or (rule.an.qualname(n.value.func) or "") == "functools.partial"):
            params = [p.name.value for p in fn.params.params]
            bound = {}
            for k, arg in enumerate(value.args):
                if arg.keyword is not None:
                    bound[arg.keyword.value] = arg.value
                elif k < len(params) and not arg.star:
                    bound[params[k]] = arg.value
            return n.value, bound, fn.name.value
    return None


def _takes_as_number(rule, func: cst.BaseExpression, kw: str, defs: dict) -> Optional[str]:
    """How the partial's function takes ``kw`` as a number: `F.smooth_l1_loss(beta=...)` itself, or a
    function of the file that gives its parameter to such an op; or None."""
    if type(func) is cst.Attribute and code(func.value) in FUNCTIONAL and func.attr.value in FLOAT_ARGS \
            and FLOAT_ARGS[func.attr.value][1] == kw:
        return f"`{code(func)}({kw}=...)`"
    if type(func) is cst.Name and func.value in defs:
        kind, said = specialized_uses(defs[func.value], {kw}).get(kw, (None, ""))
        if kind == "float":
            return f"`{said}` (in {func.value}())"
    return None
