"""Environment variables a loop sets between the calls of a compiled callable that reads them, for
HPU017.

Dynamo reads ``os.environ`` like a dict it guards: a value read in the compiled region with
``os.environ.get("NAME")`` or ``os.environ["NAME"]`` (in the compiled function or a helper it calls)
is a guard on that entry. Measured on torch 2.13 (CPU, ``eager`` backend; counts in
tests/test_compile_kinds20.py): a loop over three implementations that sets
``os.environ["ATTN_IMPL"] = impl`` before timing a compiled encoder whose attention helper reads it
is 3 graphs and 2 recompiles; the variable set once before the calls, or read only in ``__init__``
(eager) and changed afterwards, is one graph. ``os.getenv("NAME")`` is not guarded at all on 2.13:
no recompile, the graph keeps the value it was traced with (not reported here).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, loop_head
from hpulint.rules.compile_loop_reach import body_calls, first_call_of, for_loops
from hpulint.rules.compiled_region import MANY, compiled_why, distinct_values, recompiles_text
from hpulint.rules.compile_reach_syntax import walk_body

ENVIRON = "os.environ"
MESSAGE = (
    "`{name}` is called in `{loop}`, which sets the environment variable `{var}` to {n} different values, and "
    "{fn}() reads it in the compiled region ({how}): Dynamo guards the graph on the value it read, so each new "
    "value is a new graph, {values}. Read the variable once outside the compiled code (in `__init__` or at "
    "import) and pass what it selects in, or compile one function per setting"
)


def env_changes(an, module: cst.Module, compiled: set, limit: int) -> list:
    """(first call of a compiled name in the loop, message) for a `for` over 3 or more known values
    whose body sets `os.environ[NAME]` to its target, around calls of a compiled callable whose
    region reads NAME with `os.environ.get` or `os.environ[...]`."""
    if module is None or not compiled:
        return []
    reads = None
    out = []
    for loop in for_loops(an):
        n = distinct_values(loop.iter)
        if n is None or n < MANY or type(loop.target) is not cst.Name:
            continue
        names = _set_in(an, loop)
        if not names:
            continue
        if reads is None:
            reads = _region_reads(an)
        for var in names:
            hit = reads.get(var)
            site = first_call_of(loop, compiled) if hit is not None else None
            if site is None:
                continue
            fn, how = hit
            out.append((site, MESSAGE.format(name=code(site.func), loop=loop_head(loop), var=var, n=n, fn=fn,
                                             how=how, values=recompiles_text(n, limit))))
            break
    return out


def _set_in(an, loop: cst.For) -> list:
    """Names of the variables the loop's body sets to its target (`os.environ["K"] = target`,
    `os.environ.update({"K": target})`)."""
    target = loop.target.value
    out = []
    for n in descendants(loop.body):
        if type(n) is cst.Assign and type(n.value) is cst.Name and n.value.value == target:
            for t in n.targets:
                key = _env_key(an, t.target)
                if key is not None:
                    out.append(key)
    for call in body_calls(loop.body):
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "update" and (an.qualname(func.value) or "") == ENVIRON \
                and len(call.args) == 1 and type(call.args[0].value) is cst.Dict:
            for el in call.args[0].value.elements:
                if type(el) is cst.DictElement and type(el.key) is cst.SimpleString and type(el.value) is cst.Name \
                        and el.value.value == target:
                    out.append(el.key.evaluated_value)
    return out


def _env_key(an, node) -> Optional[str]:
    """"K" of `os.environ["K"]`, or None."""
    if type(node) is not cst.Subscript or (an.qualname(node.value) or "") != ENVIRON or len(node.slice) != 1:
        return None
    idx = node.slice[0].slice
    if type(idx) is cst.Index and type(idx.value) is cst.SimpleString:
        return idx.value.evaluated_value
    return None


def _region_reads(an) -> dict:
    """Variable name -> (function, how) for `os.environ.get("K")`/`os.environ["K"]` read in a
    function of the compiled region."""
    out: dict = {}
    for fn in an.all_functions:
        if type(fn.node) is not cst.FunctionDef or compiled_why(an, fn) is None:
            continue
        for n in walk_body(fn.node):
            key = None
            if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "get" and n.args \
                    and (an.qualname(n.func.value) or "") == ENVIRON and type(n.args[0].value) is cst.SimpleString:
                key = n.args[0].value.evaluated_value
            elif type(n) is cst.Subscript:
                key = _env_key(an, n)
            if key is not None and key not in out:
                out[key] = (fn.name, f"`{code(n)}`")
    return out
