"""A branch on a tensor's size taken modulo a constant, for HPU015: ``if n % BLOCK:`` (pad to a
multiple of the block only when the input does not fit) in a compiled region fed inputs of several
sizes.

After one recompile Dynamo makes the changing size dynamic, then guards on the test
(``Ne(Mod(s1, 8), 0)``), so the sizes on the other side of it are one more graph. Measured on
torch 2.13 (CPU, ``eager`` backend): a compiled pooling function testing ``if n % 8:`` on
``n = x.shape[0]``, fed 16, 13, 24, 20, 32 rows: 3 graphs, 2 recompiles (guard at the `if`); the
same test written ``n % 8 != 0``: the same; fed 16, 24, 40, 32 (all multiples of 8): 2 graphs; padding
always by ``(-n) % 8`` (no branch): 2 graphs.

The tested size is ``x.shape[i]``/``x.size(i)`` of a parameter of the function (directly, or
through a name the function bound to it); the modulus is an int literal or a module-level name
bound once to one. The sizes are read from the loop around the call of the compiled callable: a
tensor made there by a factory (``torch.randn(2, frames, 40)``) whose size at the tested dimension is
the target of a ``for`` over literal numbers; the branch is reported when those sizes fall on both
sides of the test.
"""
from __future__ import annotations

import operator
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_dynamic_branch import both_sides, compiled_def, graphs, literal_numbers
from hpulint.rules.compiled_region import compiled_why

FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty"})
EQUALITY = {cst.Equal: operator.eq, cst.NotEqual: operator.ne}

MODULO = (
    "`{arg}` is made with its size {dim} taken from `{how}` and goes to the compiled `{name}`, where the "
    "branch on `{test}` in {fn}() tests that size modulo {k}: Dynamo makes the changing size dynamic after one "
    "recompile, then guards on the branch's test, so the sizes on the other side of it are one more graph "
    "({n} graphs, not 2). Pad unconditionally (`(-n) % {k}` is 0 when the size fits), or keep the sizes on "
    "one side (bucket the inputs to multiples of {k})"
)


def sized_index(node) -> Optional[tuple]:
    """(tensor name, dimension) for `x.shape[i]`, `x.size(i)`, `x.size()[i]` with an int literal i."""
    if type(node) is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        inner, index = node.value, _int(node.slice[0].slice.value)
        if index is None:
            return None
        if type(inner) is cst.Attribute and inner.attr.value == "shape" and type(inner.value) is cst.Name:
            return inner.value.value, index
        if type(inner) is cst.Call and type(inner.func) is cst.Attribute and inner.func.attr.value == "size" \
                and type(inner.func.value) is cst.Name and not inner.args:
            return inner.func.value.value, index
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "size" \
            and type(node.func.value) is cst.Name and len(node.args) == 1:
        index = _int(node.args[0].value)
        return (node.func.value.value, index) if index is not None else None
    return None


def size_modulo_test(test: cst.BaseExpression, sizes: dict, params: set, ints: dict) -> Optional[tuple]:
    """(tensor parameter, dimension, modulus, check(v) -> side) for `if n % K:`, `if not n % K:`,
    `if n % K != r:` or `== r`, where `n` is a size of a parameter (``sizes``: names the function bound
    to one, name -> (tensor, dimension)) and K an int (``ints``: module-level names bound to one)."""
    negate = False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negate = test.expression, not negate
    op, rest = operator.ne, 0
    if type(test) is cst.Comparison:
        if len(test.comparisons) != 1 or type(test.comparisons[0].operator) not in EQUALITY:
            return None
        op = EQUALITY[type(test.comparisons[0].operator)]
        test, rest = test.left, _int(test.comparisons[0].comparator)
        if rest is None:
            return None
    if type(test) is not cst.BinaryOperation or type(test.operator) is not cst.Modulo:
        return None
    k = _int(test.right) if type(test.right) is not cst.Name else ints.get(test.right.value)
    sized = sizes.get(test.left.value) if type(test.left) is cst.Name else sized_index(test.left)
    if not k or k < 2 or sized is None or sized[0] not in params:
        return None
    return sized[0], sized[1], k, (lambda v, k=k, op=op, r=rest, neg=negate: op(int(v) % k, r) != neg)


def modulo_branches(rule) -> list:
    """(call, when) for HPU015: a branch on a size modulo a constant (``rule.modulo_tests``: (function
    scope, if test, tensor, dimension, modulus, check)) in the compiled region, whose sizes the loop calling
    the compiled callable takes from a literal list on both sides of the test."""
    an, out, seen = rule.an, [], set()
    for call, callee, loop, _ in rule.calls if rule.modulo_tests else ():
        if callee not in rule.compiled:
            continue
        fdef, skip = compiled_def(rule, callee)
        if fdef is None:
            continue
        params = [p.name.value for p in fdef.params.params][skip:]
        for k, a in enumerate(x for x in call.args if x.keyword is None and not x.star):
            if k >= len(params):
                break
            made = a.value
            if type(made) is cst.Name:
                made = rule.value_in_loop(made.value, loop) or made
            for dim, name in _factory_sizes(made):
                hit = literal_numbers(loop, name)
                if hit is None:
                    continue
                for fn, test, tensor, tested, mod, check in rule.modulo_tests:
                    if id(test) in seen or not _same_dim(tested, dim, made) \
                            or (fn.node is fdef and tensor != params[k]) or not both_sides(hit[0], check):
                        continue
                    seen.add(id(test))

                    def when(fn=fn, test=test, arg=code(a.value), how=hit[1][1:-1], mod=mod,
                             n=graphs(hit[0], check), callee=callee, dim=dim):
                        if compiled_why(an, fn) is None:
                            return None
                        return MODULO.format(arg=arg, dim=dim, how=how, name=callee,
                                             test=code(test), fn=fn.name, k=mod, n=n)
                    out.append((call, when))  # at the call, as HPU015's other sizes (both recompiles name it)
    return out


def _factory_sizes(made) -> list:
    """(dimension, loop name) for each size of ``torch.randn(2, frames, 40)`` (or a tuple of sizes) that is a name."""
    if type(made) is not cst.Call or code(made.func).rsplit(".", 1)[-1] not in FACTORIES:
        return []
    args = [a.value for a in made.args if a.keyword is None and not a.star]
    if len(args) == 1 and type(args[0]) in (cst.Tuple, cst.List):
        args = [el.value for el in args[0].elements]
    return [(d, v.value) for d, v in enumerate(args) if type(v) is cst.Name]


def _same_dim(tested: int, dim: int, made: cst.Call) -> bool:
    rank = len(_sizes_of(made))
    return tested == dim or (tested < 0 and tested + rank == dim)


def _sizes_of(made: cst.Call) -> list:
    args = [a.value for a in made.args if a.keyword is None and not a.star]
    return [el.value for el in args[0].elements] if len(args) == 1 and type(args[0]) in (cst.Tuple, cst.List) else args


def _int(node) -> Optional[int]:
    neg = False
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus:
        node, neg = node.expression, True
    if type(node) is cst.Integer:
        v = int(node.evaluated_value)
        return -v if neg else v
    return None
