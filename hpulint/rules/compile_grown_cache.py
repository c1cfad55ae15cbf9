"""A cache grown on demand inside the compiled region, for HPU016 (an int attribute) and HPU015 (a
buffer, guarded by its size): ``if seq_len >
self.max_seq_len_cached: self._set_cos_sin_cache(seq_len)`` (older Llama-style rotary embeddings),
``if n > self.cos.shape[0]: self.register_buffer("cos", ...)``.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md): the compiled code guards
on the cached int attribute (an nn.Module's int attribute is static) or on the buffer's size, and
the branch changes it whenever an input is longer than any before: each growth is a recompile, and
after ``recompile_limit`` (8) the function runs eagerly for the rest of the run. Inputs of 12
lengths (8 of them new maxima): 8 graphs, 7 recompiles and an eager fallback, with the int
attribute set in the branch, with the buffer re-registered, or both. Re-registering a buffer of
the same size on every call does not recompile (1 graph), and tables built once for the full
context and sliced (``self.cos_cached[:seq_len]``) give one recompile (the size made dynamic).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, names_in
from hpulint.rules.compiled_region import code_of, compiled_why, where

MESSAGE = (
    "`if {test}:` {where}: it grows `self.{attr}` when an input is longer than it, and the compiled code guards on "
    "{guard}, so each input longer than any before is a recompile, and after `recompile_limit` ({limit}) "
    "Dynamo runs the function eagerly for the rest of the run (eager fallback). Build the cache once, in "
    "`__init__`, for the longest input the model takes (`max_position_embeddings`), and slice it "
    "(`self.{attr}[:seq_len]`)"
)
INT_GUARD = "the int attribute's value (an nn.Module's int attributes are static)"
BUFFER_GUARD = "the buffer's size"
GROWS = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def grown_cache(an, node: cst.If, cls: Optional[cst.ClassDef], limit: int, code: str):
    """(test node, when) for an `if` in a method that compares something with `self.<attr>` (or its
    size) and, in its body, sets that attribute or re-registers that buffer (directly or in a method
    of the class it calls); else None. ``code``: HPU016 takes an int attribute (a guard on its value),
    HPU015 a buffer (a guard on its size)."""
    fn = an.function
    if cls is None or fn.kind != "function" or fn.name == "__init__":
        return None
    test = node.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) not in GROWS:
        return None
    sides = (test.left, test.comparisons[0].comparator)
    cached = [(_cached_attr(s), other) for s, other in (sides, sides[::-1])]
    hit = next(((attr, sized, other) for (attr, sized), other in cached if attr is not None), None)
    if hit is None:
        return None
    attr, sized, other = hit
    if not any(n != "self" for n in names_in(other)):
        return None  # compared with a constant: not a size that comes in
    stored, registered = _grows(node.body, cls)
    if attr in registered:
        guard, by = BUFFER_GUARD, "HPU015"
    elif attr in stored and not sized:
        guard, by = INT_GUARD, "HPU016"
    else:
        return None
    if by != code:
        return None

    def when():
        why = compiled_why(an, fn)
        if why is None:
            return None
        return MESSAGE.format(test=code_of(test), where=where(fn, why), attr=attr, guard=guard, limit=limit)
    return test, when


def _cached_attr(node: cst.BaseExpression):
    """(attr, sized) for `self.<attr>` (sized False) or `self.<attr>.shape[i]`/`.size(i)`/`len(self.<attr>)`
    (sized True); (None, False) otherwise."""
    if _self_attr(node):
        return node.attr.value, False
    inner = None
    if type(node) is cst.Subscript and type(node.value) is cst.Attribute and node.value.attr.value == "shape":
        inner = node.value.value
    elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "size":
        inner = node.func.value
    if inner is not None and _self_attr(inner):
        return inner.attr.value, True
    return None, False


def _self_attr(node) -> bool:
    return type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self"


def _grows(body: cst.CSTNode, cls: cst.ClassDef, depth: int = 0) -> tuple:
    """(attributes stored, buffers registered) by the statements, through the methods of the
    class they call as `self.<method>(...)`."""
    stored, registered = set(), set()
    stack = [body]
    while stack:
        n = stack.pop()
        if type(n) is cst.Assign:
            stored |= {t.target.attr.value for t in n.targets if _self_attr(t.target)}
        elif type(n) is cst.Call and _self_attr(n.func):
            name = n.func.attr.value
            if name == "register_buffer" and n.args and type(n.args[0].value) is cst.SimpleString:
                registered.add(n.args[0].value.evaluated_value)
            elif depth < 2:
                method = _method(cls, name)
                if method is not None:
                    s, r = _grows(method.body, cls, depth + 1)
                    stored |= s
                    registered |= r
        stack += child_nodes(n)
    return stored, registered


def _method(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    for st in cls.body.body:
        if type(st) is cst.FunctionDef and st.name.value == name:
            return st
    return None
