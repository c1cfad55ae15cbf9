"""A size made a Python constant in a compiled region, for HPU015.

By default the second size Dynamo sees makes a dimension symbolic (automatic dynamic shapes: one
recompile), and int arithmetic on the symbol stays symbolic (``n // 4``, ``math.prod(x.shape)``,
``math.log2(n)``). Four uses need the value itself, so Dynamo specializes the size again and
guards on it: each new input size is a new graph. Measured on torch 2.13 (CPU, ``eager`` backend),
a compiled function fed 6 sizes:

- ``int.bit_length()`` of an int computed from a size (a power-of-two bucket, ``1 << (n - 1).bit_length()``):
  5 recompiles, also when the result is unused;
- a NumPy function of a size (``np.prod(x.shape[:-1])``, ``np.sqrt(n)``, ``np.log2``, ``np.ceil``,
  ``np.maximum``): 5 recompiles (``math.prod``/``math.sqrt`` of the same: 1);
- a size given where torch needs an int as a number (``torch.triu_indices(n, n, 1)``,
  ``torch.linspace(-1, 1, w)``, ``F.one_hot(t, n)``, ``F.pixel_shuffle(x, r)``, ...: the table
  ``compile_specialized.INT_ARGS``): a graph per size;
- a ``for`` over ``range(k)`` with ``k`` computed from a size (``int(math.log2(min(h, w))) - 2``
  pyramid levels, ``n // 4``): Dynamo unrolls the loop, 4 and 5 recompiles (``int(math.log2(n))`` not
  looped over: 1).

Reported, like a pooling window (compile_shape_windows), when a compiled callable of the file is fed
sizes that take 3 or more values.

For HPU012, the text of a size: ``str(n)`` of a size, ``map(str, x.shape[-2:])`` or ``str(s) for s in
x.shape`` (a cache keyed by ``"x".join(map(str, feat.shape[-2:]))``). With one size it is traced; once
the size is dynamic, "Dynamo does not know how to trace builtin operator `str` with argument types
['int']": a graph break at the line (measured on torch 2.13: 5 sizes, a break and 4 recompiles; an
f-string of the size does not break, it recompiles per size).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import argument, code
from hpulint.rules.compile_forms import is_size
from hpulint.rules.compile_shape_windows import _assigned, _from_size
from hpulint.rules.compile_specialized import INT_ARGS
from hpulint.rules.compiled_region import MANY, counter_values, drawn_sizes

MESSAGE = (
    "{said} in {fn}() makes a size of the input a Python constant, and `{compiled}` is called with sizes that "
    "change from call to call: {why}, so Dynamo specializes the size it comes from and guards on it. Unlike a "
    "size that only flows through tensor ops and int arithmetic (made dynamic after one recompile), each new "
    "input size is then a new graph, and after `recompile_limit` ({limit}) Dynamo runs it eagerly for the rest "
    "of the run. {fix}"
)
KINDS = {
    "bit_length": ("`int.bit_length()` has no symbolic form",
                   "Pick the bucket in the eager code (pad in the collate function, or pass the padded batch), "
                   "or bring the inputs to a few sizes there"),
    "numpy": ("Dynamo runs a NumPy function of a Python int with the int's value",
              "Use `math.prod`/`math.sqrt`/`math.log2` (traced symbolically), or a tensor op on the sizes"),
    "int": ("{call} needs the int itself to build the graph (it is never made symbolic)",
            "Pad to a fixed maximum (the largest size of the run) and mask the rest, or build that tensor in the "
            "eager code and pass it in"),
    "hashed": ("a set or dict lookup hashes the int, so it needs its value",
               "Test the size with comparisons (`n % 8 == 0`, `n <= 128`) or against a list, or pick the path in "
               "the eager code and pass a flag that takes few values"),
    "isqrt": ("`math.isqrt` of a dynamic size returns no tensor and no symbolic int (\"torch.* op returned "
              "non-Tensor\"): the graph also breaks there",
              "Use `int(math.sqrt(n))` (traced symbolically), or pass the side length in"),
    "range": ("Dynamo unrolls a Python loop, so the loop count is a constant of the graph",
              "Loop over a fixed maximum and mask (or pad) the rest, or keep the count fixed per run"),
}


def size_specializer(an, node: cst.Call) -> Optional[tuple]:
    """(kind, what is said) for `.bit_length()` of an int from a size, or a NumPy function of a size,
    in a function of the file; None otherwise."""
    fn = an.function
    if fn.kind != "function" or type(fn.node) is not cst.FunctionDef:
        return None
    func = node.func
    if type(func) is cst.Attribute and func.attr.value == "bit_length" and not node.args:
        if _from_size(func.value, _assigned(fn.node), 0):
            return "bit_length", f"`{_short(node)}`"
        return None
    qn = an.qualname(func) or ""
    leaf = qn.rsplit(".", 1)[-1]
    if leaf in INT_ARGS and qn in (f"torch.{leaf}", f"torch.nn.functional.{leaf}"):
        # `torch.triu_indices(n, n, 1)` with `n = scores.shape[0]`, `torch.linspace(-1, 1, w)`
        assigned = _assigned(fn.node)
        for pos, kw in INT_ARGS[leaf]:
            arg = argument(node, pos, kw)
            if arg is not None and _from_size(arg, assigned, 0):
                return "int", f"`{_short(node)}`"
        return None
    if qn == "math.isqrt" and len(node.args) == 1 and _from_size(node.args[0].value, _assigned(fn.node), 0):
        return "isqrt", f"`{_short(node)}`"  # (measured: 4 sizes, 4 graphs and a break at the call)
    if qn.startswith("numpy.") and qn.count(".") == 1 and node.args:
        assigned = _assigned(fn.node)
        if any(_from_size(a.value, assigned, 0) for a in node.args):
            return "numpy", f"`{_short(node)}`"
    return None


def set_membership(an, test: cst.BaseExpression, module) -> Optional[tuple]:
    """(kind, what is said) for `size in SET` in a function of the file, where `SET` is a
    module-level set or dict literal (`frozenset`/`set`/`dict` calls of literals count): hashing
    needs the value, so Dynamo specializes the size (measured: 7 sizes, 7 graphs; `in` a list or
    tuple compares for equality, 3 graphs)."""
    fn = an.function
    if fn.kind != "function" or type(fn.node) is not cst.FunctionDef or type(test) is not cst.Comparison \
            or len(test.comparisons) != 1 or type(test.comparisons[0].operator) not in (cst.In, cst.NotIn):
        return None
    table = test.comparisons[0].comparator
    if type(table) is not cst.Name or not _hashed_table(module, table.value) \
            or not _int_size(test.left, _assigned(fn.node), 0):
        return None
    return "hashed", f"`{_short(test)}`"


def _int_size(expr: cst.BaseExpression, assigned: dict, depth: int) -> bool:
    """An int made of sizes (`n` with `b, n, d = x.shape`, `x.size(1) // 2`), not text made from one
    (`"-".join(map(str, x.shape))`: the string is HPU012's, a break before any lookup)."""
    if type(expr) is cst.Name:
        vals = assigned.get(expr.value, ()) if depth < 4 else ()
        return bool(vals) and all(_int_size(v, assigned, depth + 1) for v in vals)
    if type(expr) is cst.BinaryOperation:
        return _int_size(expr.left, assigned, depth) or _int_size(expr.right, assigned, depth)
    if type(expr) is cst.Call and not (type(expr.func) is cst.Attribute and expr.func.attr.value == "size"):
        return False
    return is_size(expr)


def _hashed_table(module, name: str) -> bool:
    for st in module.body if module is not None else ():
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            if type(small) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name
                                                 for t in small.targets):
                v = small.value
                return type(v) in (cst.Set, cst.Dict, cst.SetComp, cst.DictComp) or (
                    type(v) is cst.Call and type(v.func) is cst.Name and v.func.value in ("set", "frozenset", "dict"))
    return False


def range_bound(an, node: cst.For) -> Optional[tuple]:
    """(kind, what is said) for `for ... in range(k)` with `k` computed from a size, in a function of
    the file; None otherwise."""
    fn = an.function
    it = node.iter
    if fn.kind != "function" or type(fn.node) is not cst.FunctionDef or type(it) is not cst.Call \
            or type(it.func) is not cst.Name or it.func.value != "range" or "range" in an.bound_names():
        return None
    assigned = _assigned(fn.node)
    if any(_from_size(a.value, assigned, 0) for a in it.args):
        return "range", f"`for ... in {_short(it)}`"
    return None


TEXT_WHY = ("Dynamo makes a size that changes between calls dynamic after one recompile, and cannot build a "
            "string from the dynamic size (\"Dynamo does not know how to trace builtin operator `str` with argument "
            "types ['int']\")")
FIX_TEXT = ("Key the cache by what it needs without text (compute the encoding in the graph each call: it is "
            "traced), or build the key in the eager code and pass the cached tensor in")


def size_text(an, node: cst.Call, comp_sizes: set) -> Optional[tuple]:
    """(what is said, check) for `str(n)` of a size or `map(str, <sizes>)` in a function of the file,
    or `str(s)` of a name (its check, run after the walk: a comprehension of the function binds `s`
    to a size, in ``comp_sizes``); None otherwise."""
    fn = an.function
    func = node.func
    if type(func) is not cst.Name or func.value not in ("map", "str") or fn.kind != "function" \
            or type(fn.node) is not cst.FunctionDef or func.value in an.bound_names():
        return None
    args = [a.value for a in node.args if a.keyword is None and not a.star]
    said = f"`{_short(node)}`, the text of a size,"
    if func.value == "map" and len(args) == 2 and type(args[0]) is cst.Name and args[0].value == "str" \
            and _from_size(args[1], _assigned(fn.node), 0):
        return said, lambda: True
    if func.value == "str" and len(args) == 1 and len(node.args) == 1:
        arg = args[0]
        if _from_size(arg, _assigned(fn.node), 0):
            return said, lambda: True
        if type(arg) is cst.Name and arg.value not in (fn.params or ()):
            return said, lambda: (id(fn), arg.value) in comp_sizes
    return None


def comp_size_targets(an, node: cst.CompFor) -> set:
    """(id of the function, name) for `for s in x.shape` in a comprehension of a function."""
    fn = an.function
    if fn.kind != "function" or type(fn.node) is not cst.FunctionDef or type(node.target) is not cst.Name:
        return set()
    return {(id(fn), node.target.value)} if _from_size(node.iter, _assigned(fn.node), 0) else set()


def sizes_change(rule, name: str) -> bool:
    """``name`` is called in a loop (``rule``: a LoopCalls rule after its walk) with a size that takes
    3 or more values (or more than the limit)."""
    for call, callee, loop, counters in rule.calls:
        if callee != name:
            continue
        drawn = drawn_sizes(rule, loop)
        if drawn:
            counters = {**drawn, **counters}
        for a in call.args:
            shape = rule.shape_counters(a.value, loop, counters)
            n = counter_values(counters, shape) if shape else None
            if rule.unbounded(shape, counters) or n is not None and n >= MANY:
                return True
    return False


def message(kind: str, said: str, fn: str, compiled: str, limit: int) -> str:
    why, fix = KINDS[kind]
    return MESSAGE.format(said=said, fn=fn, compiled=compiled, why=why.format(call=said), fix=fix, limit=limit)


def _short(node: cst.CSTNode) -> str:
    text = code(node)
    return text if len(text) <= 50 else text[:47] + "..."
