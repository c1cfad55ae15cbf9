"""A compiled module whose weights a loop converts to 3 or more dtypes between its calls, for HPU016.

``model.to(dtype)`` (or ``.half()``, ``.bfloat16()``, ``.float()``, ``.double()``) converts the module's
parameters in place; Dynamo guards on each parameter's dtype, so each dtype is a graph of its own.
Measured on torch 2.13 (CPU, ``eager`` backend): an inference benchmark that calls ``model.to(dtype)``
for fp32, bf16 and fp16 around one compiled classifier is 3 graphs and 2 recompiles (with integer
inputs: the guard is the weights'); ``m.float()``, ``m.half()``, ``m.bfloat16()`` in turn in one loop,
the same; converted once before compiling, one graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, keyword, loop_head
from hpulint.rules.compile_cycled_callables import dtype_of
from hpulint.rules.compile_loop_reach import resets_dynamo, first_call_of, for_loops, reached_calls, resolve, roots
from hpulint.rules.compiled_region import MANY, recompiles_text

METHODS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64"}
MESSAGE = (
    "`{compiled}` runs `{module}`, whose weights `{how}` converts to {n} dtypes in `{loop}`: Dynamo guards on each "
    "parameter's dtype, so each dtype is a new graph, {values}. Compare the precisions in separate processes, or "
    "keep one model per dtype (a converted copy, each compiled on its own, with `torch._dynamo.reset()` between "
    "them), or convert it once before compiling"
)


def weight_dtypes(an, module: cst.Module, compiled_of: dict, limit: int) -> list:
    """(call of the compiled module in the loop, message) for a loop that converts the module a
    compiled name runs to 3 or more dtypes: `.to(dt)` with `dt` the target of a `for` over 3 or more
    torch dtypes, or `.half()`/`.bfloat16()`/`.float()`/`.to(torch.<dtype>)` of 3 or more dtypes in one
    loop (in its body or in a function of the file it calls)."""
    if module is None or not compiled_of:
        return []
    out = []
    for loop in for_loops(an):
        iterated = _iterated_dtypes(an, loop)
        reached = reached_calls(module, loop)
        if resets_dynamo(an, reached):
            continue
        found: dict = {}  # compiled name -> (dtypes, how)
        for call, bind, scope in reached:
            func = call.func
            if type(func) is not cst.Attribute:
                continue
            dtypes = _converted(an, call, bind, loop, iterated)
            if not dtypes:
                continue
            names = roots(func.value, bind, scope)
            for name, inst in compiled_of.items():
                if inst in names or name in names:
                    got, how = found.get(name, (set(), f"{code(func)}(...)"))
                    found[name] = (got | dtypes, how)
        for name, (dtypes, how) in found.items():
            site = first_call_of(loop, {name})
            if site is None or len(dtypes) < MANY:
                continue
            out.append((site, MESSAGE.format(compiled=name, module=compiled_of[name], how=how, n=len(dtypes),
                                             loop=loop_head(loop), values=recompiles_text(len(dtypes), limit,
                                                                                          "dtypes"))))
    return out


def _iterated_dtypes(an, loop: cst.For) -> Optional[tuple]:
    """(the loop's target name, the dtypes it takes) for `for dt in (torch.float32, ...)`, or None."""
    if type(loop.target) is not cst.Name or type(loop.iter) not in (cst.List, cst.Tuple):
        return None
    dtypes = {dtype_of(an, el.value) for el in loop.iter.elements}
    return (loop.target.value, dtypes) if None not in dtypes else None


def _converted(an, call: cst.Call, bind: dict, loop, iterated) -> set:
    """The dtypes a `.to(...)`/`.half()`... call converts to, as far as the loop shows them."""
    method = call.func.attr.value
    if method in METHODS and not call.args:
        return {METHODS[method]}
    if method != "to":
        return set()
    given = keyword(call, "dtype")
    given = [given] if given is not None else [a.value for a in call.args if a.keyword is None]
    out = set()
    for g in given:
        g = resolve(g, bind)
        d = dtype_of(an, g)
        if d is not None:
            out.add(d)
        elif iterated is not None and type(g) is cst.Name and g.value == iterated[0]:
            out |= iterated[1]
    return out

