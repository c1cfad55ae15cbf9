"""Reads of a tensor's storage and autograd bookkeeping that Dynamo does not put in a graph, for
HPU012.

Measured on torch 2.13 (CPU, ``eager`` backend; the counts are in tests/test_compile_kinds20.py):
inside a compiled region each one is a graph break at its line.

- ``t.data_ptr()`` of an input or computed tensor (a fused-attention wrapper telling self- from
  cross-attention by the inputs' addresses): Dynamo's fake tensors have no address, so it breaks;
  comparing the tensors with ``is`` is traced, and so is ``data_ptr()`` of a module's own parameter
  (``self.a.weight.data_ptr()``: Dynamo knows that tensor, no break);
- ``t.untyped_storage().nbytes()`` (a memory meter): ``untyped_storage()`` alone is traced, its byte
  count is not; ``t.numel() * t.element_size()`` and ``t.nbytes`` are traced;
- ``t.grad_fn`` read (``if t.grad_fn is None: return t``, "does it have autograd history?"), on an
  input or on a tensor the function computed; ``t.requires_grad`` is traced;
- ``p._version`` of a module's parameter or buffer (``self.weight._version``, a cache invalidated
  by the optimizer's in-place update): a break at the read, and the cache attribute it feeds is a
  recompile per optimizer step; ``_version`` of a plain input or an intermediate is traced;
- ``torch.autograd.graph.register_multi_grad_hook(tensors, fn)`` (Dynamo does not trace it).

Only the first storage or autograd read of a function is reported: Dynamo does not trace the rest
of a helper after such a break the way it resumes after a call.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code

DATA_PTR_WHY = ("Dynamo's fake tensors have no storage address, so `data_ptr()` of an input or computed tensor "
                "is not traced")
FIX_DATA_PTR = ("Compare the tensors themselves (`memory is x`, traced), or pass the choice in as an argument "
                "(`self_attention=True`) from the eager caller")
NBYTES_WHY = "Dynamo traces `untyped_storage()` but not its byte count `nbytes()`"
FIX_NBYTES = ("Count `t.numel() * t.element_size()` (traced), or meter memory in the eager code around the "
              "compiled call (`torch.cuda.memory_allocated()`, the profiler)")
GRAD_FN_WHY = "Dynamo does not trace a read of `.grad_fn` (a tensor's autograd history is not known while it traces)"
FIX_GRAD_FN = ("Test `t.requires_grad` (traced) or `torch.is_grad_enabled()`, or decide in the eager code and pass "
               "a flag in")
VERSION_WHY = ("Dynamo does not trace `_version` of a module's parameter or buffer (the in-place version counter "
               "the optimizer bumps every step)")
FIX_VERSION = ("Recompute the value in the graph every call, or invalidate the cache in the eager code after "
               "`optimizer.step()` (a hook on the optimizer, or a flag the training loop sets)")
MULTI_HOOK_WHY = "Dynamo does not trace `torch.autograd.graph.register_multi_grad_hook()`"
FIX_MULTI_HOOK = ("Register the hook in the eager code around the compiled call (on the outputs it returns), or "
                  "one `t.register_hook(...)` per tensor that only returns a gradient")
MULTI_HOOK = "torch.autograd.graph.register_multi_grad_hook"


def internals_call(an, node: cst.Call, maybe_tensor, seen: set) -> Optional[tuple]:
    """(what is said, why, fix, check) for `data_ptr()`, `untyped_storage().nbytes()` or
    `register_multi_grad_hook()`, or None. ``maybe_tensor(an, v)``: the region's test; ``seen``: ids
    of statements with a `data_ptr()` already (`a.data_ptr() == b.data_ptr()`: one break)."""
    func = node.func
    qn = an.qualname(func) or ""
    if qn == MULTI_HOOK:
        return "`register_multi_grad_hook()`", MULTI_HOOK_WHY, FIX_MULTI_HOOK, lambda: True
    if type(func) is not cst.Attribute or node.args or qn.startswith("torch."):
        return None
    method = func.attr.value
    if method == "data_ptr" and not _module_state(func.value) and id(an.statement) not in seen:
        seen.add(id(an.statement))
        recv = an.value(func.value)
        return f"`{code(func.value)}.data_ptr()`", DATA_PTR_WHY, FIX_DATA_PTR, lambda: maybe_tensor(an, recv)
    inner = func.value
    if method == "nbytes" and type(inner) is cst.Call and type(inner.func) is cst.Attribute \
            and inner.func.attr.value == "untyped_storage" and not inner.args:
        recv = an.value(inner.func.value)
        return "`untyped_storage().nbytes()`", NBYTES_WHY, FIX_NBYTES, lambda: maybe_tensor(an, recv)
    return None


def internals_read(an, node: cst.Attribute, maybe_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for a read of `t.grad_fn` or of `self.<param>._version`,
    or None."""
    attr = node.attr.value
    if attr == "grad_fn":
        recv = an.value(node.value)
        return f"`{code(node)}`", GRAD_FN_WHY, FIX_GRAD_FN, lambda: maybe_tensor(an, recv)
    if attr == "_version" and _module_state(node.value) and type(node.value) is cst.Attribute:
        recv = an.value(node.value)
        return f"`{code(node)}`", VERSION_WHY, FIX_VERSION, lambda: maybe_tensor(an, recv)
    return None


def _module_state(expr: cst.BaseExpression) -> bool:
    """`self.weight`, `self.layer.weight`: an attribute chain from `self` (a module's own tensor)."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    return type(expr) is cst.Name and expr.value == "self"
