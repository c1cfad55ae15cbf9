"""A Python branch on a value Dynamo makes dynamic, for HPU017 (a number argument) and HPU015 (a
size of a tensor that grows): after one recompile the value is symbolic, and the branch's test
becomes a guard of its own (``L['guidance_scale'] > 1.0``, ``2 <= input_ids.size()[1] <= 9``), so
each side of the branch the calls take is one more graph.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- a float argument tested ``if scale > 1.0:`` in the compiled function, called with 7.5, 5.0, 1.0,
  7.5, 3.0, 1.0, 9.0: 3 graphs, 2 recompiles (the second value makes it dynamic, the first 1.0
  takes the other side); the same calls without the branch, or with values all on one side: 2
  graphs, 1 recompile. An int argument (``if n > 5:`` with ``n`` in ``range(12)``): the same, 3
  graphs;
- a branch on the size of a tensor the loop grows with ``torch.cat`` (``if input_ids.shape[-1] <
  10:`` in a minimum-length logits processor the compiled decode step runs, ``input_ids`` growing
  from 4 to 15 tokens): 3 graphs, 2 recompiles; without the branch 2 graphs.

Values are read from the loop around the call of the compiled callable (``for scale in (7.5, 1.0,
...)``), or, for an argument its function was given, from the keyword calls of that function in a
loop (``pipe(prompt, guidance_scale=scale)`` in ``for scale in (...)``): the branch is reported when
the listed values fall on both sides of its test. A branch on a growing size is reported when the
loop grows the tensor (``ids = torch.cat([ids, new], dim=-1)``) and the compiled function, or a
function it runs with a parameter of the same name, tests its size.
"""
from __future__ import annotations

import builtins
import operator
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import argument, child_nodes, code, descendants
from hpulint.rules.compile_modulo_branch import modulo_test
from hpulint.rules.compiled_region import compiled_why

OPS = {cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt,
       cst.LessThanEqual: operator.le}
FLIP = {operator.gt: operator.lt, operator.ge: operator.le, operator.lt: operator.gt, operator.le: operator.ge}
STACKS = frozenset({"cat", "concat", "concatenate", "hstack"})

VALUE = (
    "The branch on `{test}` tests `{param}`, which the calls of the compiled `{name}` give different numbers "
    "({values}, {how}) on both sides of the test: Dynamo makes a changing int or float argument dynamic after "
    "one recompile, then guards on the branch's test, so each side is a graph of its own ({graphs} graphs, not "
    "one or two). Make the choice outside the compiled function (two compiled functions, or the branch in the "
    "eager caller), or compute both and select with `torch.where` on a tensor"
)
SIZE = (
    "`{arg}` grows in the loop ({how}) and goes to the compiled `{name}`, where the branch on `{test}` in "
    "{fn}() tests its size: Dynamo makes the growing size dynamic after one recompile, then guards on the "
    "branch's test, so the side the longer inputs take is one more graph (3 graphs, not 2). Test a tensor "
    "instead (`cur_len`, with `torch.where`), or keep the input at its full length and pass the current length in"
)


def compared(an, node: cst.If, ints: Optional[dict] = None):
    """(if test, comparison, param, kind, check) for an `if` that compares a parameter of its function with a
    number (kind "value", check(v) -> side), or the parameter modulo a constant with one (`step % EVERY
    != 0`, compile_modulo_branch; ``ints`` are the module-level ints, module_ints), or a size of one with anything
    (kind "size"), directly or through a name the function bound to the comparison (`do_cfg = scale >
    1.0; if do_cfg:`)."""
    fn = an.function
    if fn.kind != "function":
        return None
    test = node.test
    if type(test) is cst.Name:
        bound = an.lookup(test.value)  # (only a name bound to a comparison needs the walk)
        if getattr(bound, "op", None) != "cmp":
            return None
        test = _bound_comparisons(an, fn.node).get(test.value)
    if ints is not None and type(test) is cst.Comparison:
        mod = modulo_test(test, set(fn.params or ()), ints)
        if mod is not None:
            return node.test, test, mod[0], "value", mod[1]
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) not in OPS:
        return None
    op = OPS[type(test.comparisons[0].operator)]
    left, right = test.left, test.comparisons[0].comparator
    params = set(fn.params or ())
    for side, other, f in ((left, right, op), (right, left, FLIP[op])):
        if type(side) is cst.Name and side.value in params:
            number = _number(other)
            if number is not None:
                return node.test, test, side.value, "value", (lambda v, f=f, t=number: f(v, t))
        sized = _sized(side)
        if sized is not None and sized in params:
            return node.test, test, sized, "size", None
    return None


def literal_numbers(loop, name: str) -> Optional[tuple]:
    """(values, how) when a `for` around the point sets ``name`` to each of a literal list of numbers."""
    for lp in loop.chain():
        node = lp.node
        if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == name \
                and type(node.iter) in (cst.List, cst.Tuple):
            values = [_number(el.value) for el in node.iter.elements]
            if values and all(v is not None for v in values):
                return values, f"`for {name} in {code(node.iter)}`"
        if type(node) is cst.For and type(node.target) is cst.Name and node.target.value == name \
                and type(node.iter) is cst.Call and code(node.iter.func) == "range" \
                and 1 <= len(node.iter.args) <= 3 and all(type(a.value) is cst.Integer for a in node.iter.args):
            values = [float(v) for v in range(*(int(a.value.value) for a in node.iter.args))][:1000]
            if values:
                return values, f"`for {name} in {code(node.iter)}`"
    return None


def argument_values(call: cst.Call, index: int, param: str, loop, params, calls: list) -> Optional[tuple]:
    """The numbers the argument for ``param`` (position ``index``) of ``call`` takes: a loop target
    over literal numbers, or a parameter of the calling function (``params``) that its callers give
    by keyword in such a loop (``calls``: (call, callee, loop, counters) of the file's loops)."""
    arg = argument(call, index, param)
    if type(arg) is not cst.Name:
        return None
    hit = literal_numbers(loop, arg.value) if loop is not None else None
    if hit is not None:
        return hit
    if arg.value not in params:
        return None
    for outer, _, lp, _ in calls:
        given = argument(outer, -1, arg.value)
        if type(given) is cst.Name:
            hit = literal_numbers(lp, given.value)
            if hit is not None:
                return hit[0], f"{hit[1]} around `{code(outer.func)}(..., {arg.value}={given.value})`"
    return None


def both_sides(values: list, check) -> bool:
    """Two or more different values (made dynamic), taking both sides of the test."""
    return len(set(values)) >= 2 and len({bool(check(v)) for v in values}) == 2


def graphs(values: list, check) -> int:
    """The graphs the calls make: the first value's (static, hit again by that value), then one per
    side the other values take once the value is dynamic (measured: 7.5, 5.0, 1.0, ... -> 3)."""
    first = values[0]
    return 1 + len({bool(check(v)) for v in values if v != first})


def grows_by_cat(value, name: str) -> bool:
    """`name = torch.cat([name, new], dim=-1)`: the tensor grows every pass."""
    if type(value) is not cst.Call or not value.args:
        return False
    leaf = value.func.attr.value if type(value.func) is cst.Attribute else getattr(value.func, "value", "")
    first = value.args[0].value
    return leaf in STACKS and type(first) in (cst.List, cst.Tuple) and any(
        type(el.value) is cst.Name and el.value.value == name for el in first.elements)


# --- after the walk: the rules' questions ---------------------------------------------------------

def compiled_def(rule, callee: str):
    """(FunctionDef, parameters to skip) a compiled callable runs: a decorated or compiled function, the
    forward of a compiled module, or the method a `torch.compile(self.<method>)` wraps."""
    from hpulint.rules.compile_feedback import _definition

    fn, skip = _definition(rule.module, callee)
    if fn is not None:
        return fn, skip
    target = getattr(rule, "targets", {}).get(callee, "")
    if target.startswith("self.") and target.count(".") == 1 and rule.module is not None:
        name = target[5:]
        for n in descendants(rule.module):
            if type(n) is cst.ClassDef:
                for st in n.body.body:
                    if type(st) is cst.FunctionDef and st.name.value == name:
                        static = any(code(d.decorator) == "staticmethod" for d in st.decorators)
                        return st, 0 if static else 1
    return None, 0


def value_branches(rule):
    """(test, when) for HPU017: a branch on a number argument of a compiled function whose calls give
    it numbers on both sides of the test."""
    an, out, seen = rule.an, [], set()
    if not rule.branches:
        return out
    sites = [(call, callee, loop, set(loop.scope.params or ()) if loop.scope.kind == "function" else set())
             for call, callee, loop, _ in rule.calls]
    sites += _calls_outside_loops(rule.module, set(rule.compiled))
    for fn, (at, test, param, _, check) in rule.branches:
        for call, callee, loop, scope_params in sites:
            if callee not in rule.compiled or id(test) in seen:
                continue
            fdef, skip = compiled_def(rule, callee)
            if fdef is None or fdef is not fn.node:
                continue
            params = [p.name.value for p in fdef.params.params][skip:]
            if param not in params:
                continue
            hit = argument_values(call, params.index(param), param, loop, scope_params, rule.calls)
            if hit is None or not both_sides(hit[0], check):
                continue
            seen.add(id(test))
            values, how = hit
            shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if len(values) > 6 else "")

            def when(fn=fn, at=at, test=test, param=param, callee=callee, values=values, how=how, check=check,
                     shown=shown):
                if compiled_why(an, fn) is None:
                    return None
                said = code(test) if at is test else f"{code(at)} = {code(test)}"
                return VALUE.format(test=said, param=param, name=callee, values=shown, how=how,
                                    graphs=graphs(values, check))
            out.append((at, when))  # at the `if` (Dynamo's guard names its line)
    return out


def size_branches(rule):
    """(call, when) for HPU015: a branch on the size of a tensor the loop grows by concatenation and
    passes to a compiled function (tested there, or in a function it runs with a parameter of that name)."""
    an, out, seen = rule.an, [], set()
    for call, callee, loop, _ in rule.calls:
        if callee not in rule.compiled:
            continue
        fdef, skip = compiled_def(rule, callee)
        if fdef is None:
            continue
        params = [p.name.value for p in fdef.params.params][skip:]
        for k, a in enumerate(x for x in call.args if x.keyword is None and not x.star):
            if k >= len(params) or type(a.value) is not cst.Name:
                continue
            value = rule.value_in_loop(a.value.value, loop)
            if not grows_by_cat(value, a.value.value):
                continue
            for fn, (_, test, param, _, _) in rule.size_tests:
                if param != params[k] or id(test) in seen:
                    continue
                seen.add(id(test))

                own = fn.node is fdef or _called_instance(rule.module, fdef, fn, param)

                def when(fn=fn, test=test, arg=a.value.value, callee=callee, how=f"`{code(value)}`", own=own):
                    if not own and compiled_why(an, fn) is None:
                        return None
                    return SIZE.format(test=code(test), arg=arg, fn=fn.name, how=how, name=callee)
                out.append((call, when))  # at the call, as HPU015's other sizes (the guard is torch's line)
    return out


def _calls_outside_loops(module, compiled: set) -> list:
    """(call, callee, None, parameters of its function) for calls of compiled callables in a function
    body outside loops (`def serve(image, strength): return edit(image, strength)`)."""
    out = []
    if not compiled or module is None:
        return out
    leaves = {c.rsplit(".", 1)[-1] for c in compiled}
    for fdef in (n for n in descendants(module) if type(n) is cst.FunctionDef):
        params = {p.name.value for p in fdef.params.params}
        stack = list(fdef.body.body)
        while stack:
            n = stack.pop()
            if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While):
                continue
            if type(n) is cst.Call and _leaf(n.func) in leaves and code(n.func) in compiled:
                out.append((n, code(n.func), None, params))
            stack += child_nodes(n)
    return out


def _leaf(func) -> str:
    return func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else ""


def _called_instance(module, fdef, fn, param: str) -> bool:
    """``fn`` is the `__call__` of a class the file instantiates, and the compiled ``fdef`` calls a
    variable with ``param`` (`for proc in processors: scores = proc(input_ids, scores)`: a list of
    logits processors)."""
    cls = getattr(fn, "cls", None)
    if fn.name != "__call__" or cls is None or module is None:
        return False
    defined = {n.name.value for n in module.body if type(n) in (cst.FunctionDef, cst.ClassDef)} | set(dir(builtins))
    made = any(type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == cls.name
               for n in descendants(module))
    return made and any(type(n) is cst.Call and type(n.func) is cst.Name and n.func.value not in defined
                        and any(type(a.value) is cst.Name and a.value.value == param for a in n.args)
                        for n in descendants(fdef.body))


def _bound_comparisons(an, fn_node) -> dict:
    """Names the function binds to a comparison (`do_cfg = scale > 1.0`): the first binding of
    each, walked once per function (every `if name:` of the file asks)."""
    cache = an.__dict__.setdefault("_bound_comparisons", {})
    got = cache.get(id(fn_node))
    if got is not None:
        return got
    got = cache[id(fn_node)] = {}
    stack = [fn_node.body] if fn_node is not None else []
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and type(n.value) is cst.Comparison:
            got.setdefault(n.targets[0].target.value, n.value)
        stack += child_nodes(n)
    return got


def _number(node) -> Optional[float]:
    neg = False
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        node, neg = node.expression, True
    if type(node) in (cst.Integer, cst.Float):
        v = float(node.evaluated_value)
        return -v if neg else v
    return None


def _sized(node) -> Optional[str]:
    """`x.shape[i]`, `x.size(i)`, `x.size()[i]` -> x."""
    if type(node) is cst.Subscript:
        inner = node.value
        if type(inner) is cst.Attribute and inner.attr.value == "shape" and type(inner.value) is cst.Name:
            return inner.value.value
        if type(inner) is cst.Call and type(inner.func) is cst.Attribute and inner.func.attr.value == "size" \
                and type(inner.func.value) is cst.Name and not inner.args:
            return inner.func.value.value
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "size" \
            and type(node.func.value) is cst.Name and node.args:
        return node.func.value.value
    return None
