"""Arguments a loop cycles over a few functions or dtypes, for HPU017 (through compile_cycled).

Dynamo guards on a function given as an argument by identity (an activation passed to a compiled
train step), on a module given as an argument by its type, and on a dtype by value. Measured on
torch 2.13 (CPU, ``eager`` backend): ``for act in (F.relu, F.gelu, F.silu)`` around the calls of one
compiled step that calls ``act(h)`` is 3 graphs and 2 recompiles;
the same with three functions of the file, three ``nn.ReLU()``/``nn.GELU()``/``nn.SiLU()`` modules, or
``for dt in (torch.float32, torch.float16, torch.bfloat16)`` given to ``x.to(dt)`` inside, also 3
graphs; two functions, one recompile (not reported); the same function every pass, one graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.rules.compiled_region import MANY

# torch dtypes and their aliases -> one name per dtype
DTYPES = {"float32": "float32", "float": "float32", "float16": "float16", "half": "float16",
          "bfloat16": "bfloat16", "float64": "float64", "double": "float64", "int8": "int8", "uint8": "uint8",
          "int16": "int16", "short": "int16", "int32": "int32", "int": "int32", "int64": "int64", "long": "int64",
          "bool": "bool", "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128",
          "cdouble": "complex128", "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
LIBRARIES = ("torch.", "math.", "numpy.", "operator.")
FIX_FUNCTION = ("Each one is a full compile, and they all count toward this function's `recompile_limit` (8): keep "
                "one per run (a sweep in separate processes), or raise `torch._dynamo.config.recompile_limit` above "
                "the number of choices so that none of them falls back to eager")
FIX_DTYPE = ("Each one is a full compile, and they all count toward this function's `recompile_limit` (8): cast at "
             "the boundary so the compiled code always sees one dtype, or run each dtype in its own process")


def callables_or_dtypes(rule, it: cst.BaseExpression, how: str, arg: str) -> Optional[tuple]:
    """(argument, what it is, the loop, guard, values) when the literal list or tuple ``it`` holds
    3 or more different functions (of torch, math, NumPy or the file, lambdas) or modules made from
    different torch.nn classes, or 3 or more different torch dtypes; else None."""
    if type(it) not in (cst.List, cst.Tuple) or not it.elements:
        return None
    items = [el.value for el in it.elements]
    dtypes = {dtype_of(rule.an, v) for v in items}
    if None not in dtypes and len(dtypes) >= MANY:
        return arg, "is each of a few dtypes", how, "a dtype's value", len(dtypes)
    kinds = [_callable(rule, v) for v in items]
    if None in kinds:
        return None
    if all(k.startswith("module ") for k in kinds) and len(set(kinds)) >= MANY:
        return arg, "is a module of each of a few classes", how, "a module's type", len(set(kinds))
    if not any(k.startswith("module ") for k in kinds) and len(set(kinds)) >= MANY:
        return arg, "is each of a few functions", how, "a function's identity", len(set(kinds))
    return None


def dtype_of(an, expr: cst.BaseExpression) -> Optional[str]:
    """The dtype a `torch.<dtype>` attribute names, or None."""
    qn = an.qualname(expr) or "" if type(expr) is cst.Attribute else ""
    head, _, leaf = qn.rpartition(".")
    return DTYPES.get(leaf) if head == "torch" else None


def _callable(rule, expr: cst.BaseExpression) -> Optional[str]:
    """What identifies a function element ("fn torch.nn.functional.relu", "module torch.nn.GELU"), or None."""
    an = rule.an
    if type(expr) is cst.Lambda:
        return f"lambda {id(expr)}"
    if type(expr) is cst.Name and expr.value in rule.defs:
        return f"fn {expr.value}"
    if type(expr) is cst.Call and not expr.args:
        qn = an.qualname(expr.func) or ""
        leaf = qn.rsplit(".", 1)[-1]
        return f"module {qn}" if qn.startswith("torch.nn.") and leaf[:1].isupper() else None
    if type(expr) in (cst.Name, cst.Attribute):
        qn = an.qualname(expr) or ""
        leaf = qn.rsplit(".", 1)[-1]
        if qn.startswith(LIBRARIES) and leaf[:1].islower() and dtype_of(an, expr) is None \
                and leaf not in ("pi", "e", "inf", "nan", "tau", "newaxis"):
            return f"fn {qn}"
    return None
