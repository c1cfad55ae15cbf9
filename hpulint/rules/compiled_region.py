"""What the compile rules (HPU012-HPU017) share: where Dynamo traces, and what it is told.

Every claim the rules make was measured on real Dynamo (torch 2.13, CPU, ``eager`` backend):
docs/compile-target.md has the tables, the fixtures in fixtures/HPU012-HPU017 the counts.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis.values import DATA, HOST, MASK, TENSOR

TENSOR_KINDS = frozenset({TENSOR, MASK, HOST})  # under Dynamo a CPU tensor is traced like any other
COMPILE_CALLS = ("torch.compile",)
RECOMPILE_LIMIT = 8  # torch._dynamo.config.recompile_limit's default

_FLAG = r"(?:torch\._dynamo\.config\.|dynamo_config\.|config\.)?{name}\s*=\s*True"
_SCALARS = re.compile(_FLAG.format(name="capture_scalar_outputs"))
_DYNAMIC_OUT = re.compile(_FLAG.format(name="capture_dynamic_output_shape_ops"))


def compiled_why(an, fn) -> Optional[str]:
    """Why the function runs inside a compiled region (after bind), or None."""
    return an.compiled_why(fn) if fn is not None and fn.kind == "function" else None


def where(fn, reason: str) -> str:
    return f"in {fn.name}(), {reason}"


def is_tensor(an, v) -> bool:
    return an.kind(v) in TENSOR_KINDS


def maybe_tensor(an, v) -> bool:
    """Known to be a tensor, or not known to be anything else (`.item()` only tensors have)."""
    return an.kind(v) not in ("scalar", "other", "seq", "none", "size", "model", "optimizer",
                              "loader", "marking-loader", "sym", DATA)


def captures_scalars(source: str) -> bool:
    """`torch._dynamo.config.capture_scalar_outputs = True`: `.item()` stays in the graph."""
    return bool(_SCALARS.search(source))


def captures_dynamic_shapes(source: str) -> bool:
    """`capture_dynamic_output_shape_ops = True`: nonzero & co. stay in the graph."""
    return bool(_DYNAMIC_OUT.search(source))


def fullgraph(an, call: cst.Call) -> bool:
    from hpulint.analysis.syntax import is_true, keyword

    return is_true(keyword(call, "fullgraph"))


def is_compile_call(an, node: cst.BaseExpression) -> bool:
    if not isinstance(node, cst.Call):
        return False
    qn = an.qualname(node.func) or ""
    return qn in COMPILE_CALLS or qn.endswith("torch_xla.compile")


def decorator_call(node: cst.Decorator) -> Optional[cst.Call]:
    return node.decorator if isinstance(node.decorator, cst.Call) else None
