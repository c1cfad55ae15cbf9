"""Standard-library and torch calls Dynamo does not trace, for HPU012.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend): inside a compiled region each one
is a graph break at its line, with the reason Dynamo logs quoted in the message.

- ``bisect.bisect``/``bisect_left``/``bisect_right``/``insort*`` and ``heapq.heappush``/``heappop``/
  ``heapify``/``heappushpop``/``heapreplace`` (C builtins: "Attempted to call function marked as
  skipped", also on a list of Python ints; a heap or a list the call changes is guarded by its
  length, so each new length also recompiles the code after the break);
- ``torch.utils.dlpack.to_dlpack``/``from_dlpack`` and ``torch.from_dlpack`` ("marked as skipped"),
  the first of them in a function (Dynamo does not resume in a frame that holds the capsule: a
  ``from_dlpack(capsule)`` on the next line runs eagerly and is no break of its own);
- ``torch.utils.checkpoint.checkpoint_sequential`` ("marked as skipped"; ``checkpoint`` of each
  block, non-reentrant, is traced);
- a strided nested tensor: ``torch.nested.nested_tensor``/``as_nested_tensor`` without
  ``layout=torch.jagged`` ("Operator does not support running with fake tensors"), and
  ``to_padded_tensor`` of one made in the same function ("Attempted to wrap strided NestedTensor");
  with ``layout=torch.jagged`` both are traced;
- ``with torch.backends.cudnn.flags(...)``/``torch.backends.mkldnn.flags(...)`` ("Unsupported
  context manager": Dynamo cannot resume inside the block, so the function that holds the ``with``
  runs eagerly); the same ``with`` around the compiled call is fine;
- ``Tensor.apply_(fn)``/``map_(other, fn)``/``map2_`` (a Python callable run on each element: "Attempted
  to call function marked as skipped"), with a lambda, a dict's ``get``/``__getitem__`` or any function;
  indexing a lookup tensor (``table[ids]``) is traced;
- ``torch.utils.data.default_collate``/``default_convert`` (also from ``torch.utils.data._utils.collate``),
  a batch collated inside the compiled function: a break at the call (c470); ``torch.stack`` of the
  samples' tensors is traced;
- ``open(...)`` (the builtin: "Attempted to call function marked as skipped"; a file object made after a
  break is not traced either, so each later ``fh.write``/``fh.close`` line breaks again), to read or to
  append; the same ``open`` around the compiled call is fine.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, keyword
from hpulint.rules.compile_runtime_calls import runtime_call

SKIPPED_WHY = "Dynamo does not trace `{name}()` ({kind}: \"Attempted to call function marked as skipped\")"
BISECT = frozenset({"bisect.bisect", "bisect.bisect_left", "bisect.bisect_right", "bisect.insort",
                    "bisect.insort_left", "bisect.insort_right"})
HEAPQ = frozenset({"heapq.heappush", "heapq.heappop", "heapq.heapify", "heapq.heappushpop", "heapq.heapreplace"})
FIX_BISECT = ("Count the milestones passed with plain Python (`sum(step >= m for m in milestones)`), or compute "
              "the value in the eager code and pass it in as a tensor")
FIX_HEAPQ = ("Return the values from the compiled function and push them on the heap in the eager code around "
             "it (or keep the best with `torch.maximum`/`topk` on tensors)")
DLPACK = frozenset({"torch.utils.dlpack.to_dlpack", "torch.utils.dlpack.from_dlpack", "torch.from_dlpack",
                    "torch.to_dlpack"})
FIX_DLPACK = ("Exchange the tensor through DLPack in the eager code around the compiled function; inside it, "
              "use the tensor itself")
CHECKPOINT_SEQUENTIAL = frozenset({"torch.utils.checkpoint.checkpoint_sequential"})
FIX_CHECKPOINT = ("Checkpoint each block (or each segment) with `torch.utils.checkpoint.checkpoint(block, x, "
                  "use_reentrant=False)` in a loop: Dynamo traces that")
NESTED = frozenset({"torch.nested.nested_tensor", "torch.nested.as_nested_tensor"})
NESTED_WHY = ("Dynamo cannot put a strided nested tensor in a graph (`{name}` without `layout=torch.jagged`: "
              "\"{reason}\")")
FIX_NESTED = ("Make it a jagged nested tensor (`torch.nested.nested_tensor(xs, layout=torch.jagged)`, traced), "
              "or pad the list with `pad_sequence` and a length mask")
FLAGS = frozenset({"torch.backends.cudnn.flags", "torch.backends.mkldnn.flags"})
FLAGS_WHY = ("Dynamo does not support `{name}()` as a context manager (\"Unsupported context manager\"): it "
             "cannot resume inside the block, so the function that holds the `with` runs eagerly")
FIX_FLAGS = ("Set the backend flags in the eager code around the compiled call (`with {name}(...): out = "
             "compiled(x)`), or drop them where the backend is not used (CPU, HPU, XLA)")
ELEMENTWISE = frozenset({"apply_", "map_", "map2_"})
ELEMENTWISE_WHY = ("`{name}` calls a Python function on each element, which Dynamo does not trace "
                   "(\"Attempted to call function marked as skipped\")")
FIX_ELEMENTWISE = ("Do it with tensor ops: index a lookup tensor built once outside (`table[ids]`, "
                   "`torch.bucketize`/`searchsorted` for sorted keys), or `torch.where` for a condition")
COLLATE = frozenset(f"torch.utils.data.{m}{f}" for m in ("", "_utils.collate.", "dataloader.")
                    for f in ("default_collate", "default_convert"))
FIX_COLLATE = ("Collate in the eager code (the DataLoader's `collate_fn`, or before the compiled call) and pass the "
               "batched tensors in; or `torch.stack` the samples' tensors inside (traced)")
OPEN_WHY = ("Dynamo does not trace the builtin `open()` (\"Attempted to call function marked as skipped\"), and "
            "the file object it returns is not traced either")
FIX_OPEN = ("Return what is to be written (or read it before the call and pass it in), and do the file I/O in "
            "the eager code around the compiled function")


def library_call(an, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call in the list above, or None."""
    func = node.func
    if type(func) is cst.Attribute and func.attr.value in ELEMENTWISE and node.args:
        name = f"Tensor.{func.attr.value}"
        return f"`.{func.attr.value}(...)`", ELEMENTWISE_WHY.format(name=name), FIX_ELEMENTWISE, lambda: True
    if type(func) is cst.Name and func.value == "open" and "open" not in an.bound_names():
        return "`open(...)`", OPEN_WHY, FIX_OPEN, lambda: True
    qn = an.qualname(node.func) or ""
    if qn in BISECT or qn in HEAPQ:
        why = SKIPPED_WHY.format(name=qn, kind="a C builtin")
        return f"`{qn}(...)`", why, FIX_BISECT if qn in BISECT else FIX_HEAPQ, lambda: True
    if qn in DLPACK:
        if not _first_dlpack(an, node):
            return None  # Dynamo does not resume in the frame that holds the capsule: one break
        why = SKIPPED_WHY.format(name=qn, kind="DLPack exchange")
        return f"`{qn.rsplit('.', 1)[1]}(...)`", why, FIX_DLPACK, lambda: True
    if qn in COLLATE:
        name = qn.rsplit(".", 1)[1]
        why = SKIPPED_WHY.format(name=name, kind="torch marks it not to be traced")
        return f"`{name}(...)`", why, FIX_COLLATE, lambda: True
    if qn in CHECKPOINT_SEQUENTIAL:
        why = SKIPPED_WHY.format(name="checkpoint_sequential", kind="torch marks it not to be traced")
        return "`checkpoint_sequential(...)`", why, FIX_CHECKPOINT, lambda: True
    if qn in NESTED and strided(an, node):
        name = qn.rsplit(".", 1)[1]
        why = NESTED_WHY.format(name=name, reason="Operator does not support running with fake tensors")
        return f"`torch.nested.{name}(...)`", why, FIX_NESTED, lambda: True
    padded = _padded_of(an, node, qn)
    if padded is not None:
        why = NESTED_WHY.format(name=padded, reason="Attempted to wrap strided NestedTensor")
        return "`to_padded_tensor()` of a strided nested tensor", why, FIX_NESTED, lambda: True
    return runtime_call(an, node)  # TorchScript futures, context variables, resize_ (compile_runtime_calls)


def flags_with(an, item: cst.BaseExpression) -> Optional[tuple]:
    """(what is said, why, fix) for `with torch.backends.cudnn.flags(...):`, or None."""
    if type(item) is not cst.Call:
        return None
    qn = an.qualname(item.func) or ""
    if qn not in FLAGS:
        return None
    said = code(item)
    said = said if len(said) <= 60 and "\n" not in said else code(item.func) + "(...)"
    return f"`with {said}:`", FLAGS_WHY.format(name=qn), FIX_FLAGS.format(name=qn)


def _first_dlpack(an, node: cst.Call) -> bool:
    """``node`` is the first DLPack call of its function (measured: `cap = to_dlpack(x)` then
    `from_dlpack(cap)` on the next line is one break, at the first)."""
    fn = an.function
    if type(fn.node) is not cst.FunctionDef:
        return True
    first = next((n for n in descendants(fn.node.body) if type(n) is cst.Call
                  and (an.qualname(n.func) or "") in DLPACK), None)
    return first is None or first is node


def strided(an, call: cst.Call) -> bool:
    """A `torch.nested.nested_tensor(...)` call that does not ask for the jagged layout."""
    layout = keyword(call, "layout")
    return layout is None or (an.qualname(layout) or "") == "torch.strided"


def _padded_of(an, node: cst.Call, qn: str) -> Optional[str]:
    """The maker's name when ``node`` is `nt.to_padded_tensor(...)` or
    `torch.nested.to_padded_tensor(nt, ...)` and `nt` is bound, in the same function, to a strided
    nested tensor made there."""
    func = node.func
    if type(func) is cst.Attribute and func.attr.value == "to_padded_tensor" and qn != "torch.nested.to_padded_tensor":
        target = func.value
    elif qn == "torch.nested.to_padded_tensor" and node.args:
        target = node.args[0].value
    else:
        return None
    if type(target) is not cst.Name:
        return None
    fn = an.function
    if type(fn.node) is not cst.FunctionDef:
        return None
    for n in descendants(fn.node.body):
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and n.targets[0].target.value == target.value and type(n.value) is cst.Call:
            made = an.qualname(n.value.func) or ""
            if made in NESTED and strided(an, n.value):
                return made.rsplit(".", 1)[1]
    return None
