"""Runtime objects Dynamo does not trace, for HPU012: TorchScript futures, context variables and
in-place resizes.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend): inside a compiled region each one
is a graph break at its line, with the reason Dynamo logs quoted in the message.

- ``torch.jit.fork(fn, ...)`` and ``torch.jit.wait(future)`` ("Attempted to call function marked as
  skipped": Dynamo developers marked ``fork``/``wait`` in ``torch/jit/_async.py`` not to be traced),
  each at its own line (a fork and a wait in one function: two breaks); the same calls in eager code,
  around a compiled function, are no break;
- ``ContextVar.get()`` (with or without a default) and ``ContextVar.set(...)`` on a module-level
  ``contextvars.ContextVar`` ("Unsupported method call": "Dynamo does not know how to trace method
  `get` of class `ContextVar`"); the same read in the eager code, its value passed in, is no break;
- ``Tensor.resize_(...)`` and ``resize_as_(...)`` ("Unsupported Tensor.resize_() call"), on an
  attribute, a parameter or a local made in the region, also to the tensor's own size; a
  ``resize_`` before the compiled function is first called is no break;
- ``handle.remove()`` on a hook handle made outside the region, in a hook the compiled module runs
  ("Attempted to represent unregistered RemovableHandle"; compile_hooks).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.rules.compile_hooks import handle_remove

JIT_ASYNC = frozenset({"torch.jit.fork", "torch.jit.wait", "torch.jit._fork", "torch.jit._wait"})
JIT_WHY = ("Dynamo does not trace `{name}()` (\"Attempted to call function marked as skipped\": TorchScript's "
           "futures run outside the graph)")
FIX_JIT = ("Call the members directly (`[m(x) for m in self.members]`: one graph, the backend schedules the "
           "work), or keep `torch.jit.fork`/`wait` in the eager code around the compiled function")
CONTEXTVAR_WHY = ("Dynamo does not know how to trace method `{method}` of class `ContextVar` (\"Unsupported method "
                  "call\"): the call runs outside the graph")
FIX_CONTEXTVAR = ("Read the context variable in the eager code around the compiled call and pass what it holds "
                  "as an argument (a tensor for a number that changes per call)")
RESIZE_WHY = "Dynamo does not support an in-place resize (\"Unsupported Tensor.resize_() call\")"
FIX_RESIZE = ("Keep the tensor's size fixed in the region: preallocate the full buffer once outside and write into "
              "a slice, or return the new rows and grow the buffer (`torch.cat`) in the eager code")
RESIZERS = frozenset({"resize_", "resize_as_"})
CONTEXTVAR_METHODS = frozenset({"get", "set"})


def runtime_call(an, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call in the list above, or None."""
    func = node.func
    qn = an.qualname(func) or ""
    if qn in JIT_ASYNC:
        name = "torch.jit." + qn.rsplit(".", 1)[1].lstrip("_")
        return f"`{name}(...)`", JIT_WHY.format(name=name), FIX_JIT, lambda: True
    if type(func) is not cst.Attribute:
        return None
    method = func.attr.value
    if method in RESIZERS and node.args and not _storage_of(func.value):
        from hpulint.rules.compiled_region import maybe_tensor

        recv = an.value(func.value)
        return f"`.{method}(...)`", RESIZE_WHY, FIX_RESIZE, lambda: maybe_tensor(an, recv)
    if method in CONTEXTVAR_METHODS and type(func.value) is cst.Name and _is_context_var(an, func.value.value):
        return (f"`{func.value.value}.{method}()`", CONTEXTVAR_WHY.format(method=method), FIX_CONTEXTVAR,
                lambda: True)
    if method == "remove":
        return handle_remove(an, an.module_scope.node, node)
    return None


def _storage_of(recv: cst.BaseExpression) -> bool:
    """`x.untyped_storage().resize_(0)` resizes a storage (FSDP's parameter freeing), not a tensor."""
    return type(recv) is cst.Call and type(recv.func) is cst.Attribute \
        and recv.func.attr.value in ("untyped_storage", "storage", "_typed_storage")


def _is_context_var(an, name: str) -> bool:
    """``name`` is bound at the module's top level to `contextvars.ContextVar(...)` and not re-bound
    in the function that reads it."""
    fn = an.function
    if fn.kind != "module" and name in fn.bindings:
        return False
    module = an.module_scope.node
    cache = getattr(an, "_hpulint_context_vars", None)
    if cache is None or cache[0] is not module:
        cache = (module, _context_vars(an, module))
        an._hpulint_context_vars = cache
    return name in cache[1]


def _context_vars(an, module: cst.Module) -> frozenset:
    out = set()
    for st in module.body:
        for small in st.body if type(st) is cst.SimpleStatementLine else ():
            value = small.value if type(small) in (cst.Assign, cst.AnnAssign) else None
            if type(value) is not cst.Call or (an.qualname(value.func) or "") != "contextvars.ContextVar":
                continue
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target]
            out |= {t.value for t in targets if type(t) is cst.Name}
    return frozenset(out)
