"""Python-level uses of a tensor's value that Dynamo cannot keep in a graph, for HPU012 and HPU014.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend; the fixtures in fixtures/HPU012 and
fixtures/HPU014 have the counts): inside a compiled region each one is a graph break at its line.

HPU012 (a read to the host, or a call Dynamo does not trace):

- ``elem in t`` / ``elem not in t`` with a tensor ``t`` (``Tensor.__contains__`` returns a Python
  bool: "Unsupported Tensor.item() call with capture_scalar_outputs=False"; at the top of the
  compiled function Dynamo gives up on the whole function, which runs eagerly);
- ``math.<fn>(t)`` of a tensor (``math.isfinite``, ``isnan``, ``sqrt``...: the tensor is converted
  to a Python float, "Data dependent operator"; ``math.isinf`` of a float is traced);
- ``torch._assert(cond, msg)`` with a tensor condition (read as a Python bool: "Data dependent
  operator"; a condition on shapes is traced, and so is ``torch._assert_async``);
- ``t.retain_grad()`` ("Tensor.retain_grad() does not work with AOTDispatcher"; Dynamo gives up on
  the function: measured, the whole function eager, or the part before the call compiled and the
  rest eager).

The first three are traced under ``capture_scalar_outputs = True`` and not reported then.

HPU014 (an output shape read from the data):

- a tensor factory (``torch.arange``, ``zeros``, ``ones``, ``empty``, ``full``, ``rand``,
  ``randn``) given a size read from a tensor, ``torch.arange(lengths.max())`` ("Data dependent
  operator": the size is read to the host; traced under ``capture_scalar_outputs``, not under
  ``capture_dynamic_output_shape_ops``);
- ``F.ctc_loss`` / ``torch.ctc_loss``, whatever the lengths are given as (tensors or lists of ints):
  torch's CTC op has an output shape that depends on the lengths' values ("Dynamic shape operator";
  with ``capture_dynamic_output_shape_ops`` it still breaks: "no meta kernel").
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes

CONTAINS_WHY = ("`in` on a tensor is `Tensor.__contains__`, which reads a Python bool from the tensor's values "
                "(\"Unsupported Tensor.item() call with capture_scalar_outputs=False\")")
FIX_CONTAINS = ("Compare on the device and keep the result a tensor (`(ids == pad_id).any()`, with `torch.where` "
                "instead of a Python `if`), or do the check once in the eager code (in the collator)")
MATH_WHY = ("`math.{name}()` needs a Python number, so the tensor's value is read to the host (\"Data dependent "
            "operator\")")
FIX_MATH = ("Use the torch op on the tensor (`torch.{name}(t)`) and keep the result on the device (`torch.where` "
            "instead of a Python `if`), or do the check in the eager code around the compiled call")
ASSERT_WHY = ("`torch._assert` of a tensor condition reads it to the host as a Python bool (\"Data dependent "
              "operator\")")
FIX_ASSERT = ("Use `torch._assert_async(cond)` (checked on the device, traced), or check the data in the eager "
              "code (in the data loader or the collator)")
RETAIN_WHY = ("Dynamo does not trace `Tensor.retain_grad()` (\"Tensor.retain_grad() does not work with "
              "AOTDispatcher\"): it cannot resume after it, so the rest of the function runs "
              "eagerly")
FIX_RETAIN = ("Return the tensor and read its gradient with `torch.autograd.grad(score, embeddings)` in the eager "
              "code, or register a hook on it (`t.register_hook(...)`) outside the compiled function")

SIZE_WHY = ("its size is read from a tensor's value, so its output shape depends on the data (\"Data dependent "
            "operator\": the size goes to the host)")
FIX_SIZE = ("Use a size known without reading the data (the padded width `x.shape[1]`: "
            "`torch.arange(x.shape[1]) < lengths[:, None]`), or compute it in the eager code and pass it in; "
            "or set `torch._dynamo.config.capture_scalar_outputs = True`")
CTC_WHY = ("torch's CTC loss op has an output shape that depends on the lengths' values, and Dynamo does not "
           "capture it (\"Dynamic shape operator\"; with `capture_dynamic_output_shape_ops` it still breaks: no "
           "meta kernel)")
FIX_CTC = ("Compile the model and compute the CTC loss in the eager code around it "
           "(`F.ctc_loss(compiled(feats).transpose(0, 1), targets, out_lengths, target_lengths)`)")

FACTORIES = frozenset({"torch.arange", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand",
                       "torch.randn"})
CTC = frozenset({"torch.nn.functional.ctc_loss", "torch.ctc_loss"})
ASSERTS = frozenset({"torch._assert"})
# math functions Dynamo runs on a Python float only (a tensor argument is read to the host)
MATH_TORCH = {"isfinite": "isfinite", "isnan": "isnan", "isinf": "isinf", "sqrt": "sqrt", "log": "log",
              "exp": "exp", "floor": "floor", "ceil": "ceil", "fabs": "abs", "log2": "log2", "log10": "log10",
              "cos": "cos", "sin": "sin", "tanh": "tanh", "trunc": "trunc"}


def read_call(an, node: cst.Call, scalars: bool, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call of HPU012's kinds here, or None."""
    func = node.func
    qn = an.qualname(func) or ""
    if type(func) is cst.Attribute and func.attr.value == "retain_grad" and not node.args \
            and not qn.startswith("torch."):
        recv = an.value(func.value)
        return "`.retain_grad()`", RETAIN_WHY, FIX_RETAIN, lambda: is_tensor(an, recv)
    if scalars or not node.args:
        return None
    first = an.value(node.args[0].value)
    module, _, name = qn.rpartition(".")
    if module == "math" and name in MATH_TORCH:
        said = f"`math.{name}()` of a tensor"
        return said, MATH_WHY.format(name=name), FIX_MATH.format(name=MATH_TORCH[name]), \
            lambda: is_tensor(an, first)
    if qn in ASSERTS:
        return "`torch._assert()` of a tensor", ASSERT_WHY, FIX_ASSERT, lambda: is_tensor(an, first)
    return None


def contains_operand(node: cst.Comparison) -> Optional[cst.BaseExpression]:
    """The right operand of `a in t` / `a not in t`, or None."""
    for target in node.comparisons:
        if type(target.operator) in (cst.In, cst.NotIn):
            return target.comparator
    return None


def size_from_data(an, node: cst.Call) -> Optional[list]:
    """The size arguments of a tensor factory (`torch.arange(n)`, `torch.zeros(b, n)`,
    `torch.zeros((b, n))`), or None for another call."""
    qn = an.qualname(node.func) or ""
    if qn not in FACTORIES:
        return None
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    if qn == "torch.full":
        positional = positional[:1]
    out = []
    for p in positional:
        if type(p) in (cst.Tuple, cst.List):
            out += [e.value for e in p.elements if type(e) is cst.Element]
        else:
            out.append(p)
    out += [a.value for a in node.args if a.keyword is not None and a.keyword.value in ("end", "start", "size")]
    return [p for p in out if type(p) not in (cst.Integer, cst.Float, cst.SimpleString) and not _shape_read(p)]


SHAPE_CALLS = frozenset({"size", "numel", "dim", "stride", "len"})
SHAPE_ATTRS = frozenset({"shape", "ndim"})


def _shape_read(node: cst.BaseExpression) -> bool:
    """The expression reads a size, not data (`x.size(0)`, `x.shape[1] - 1`, `len(batch)`): traced."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call:
            f = n.func
            name = f.attr.value if type(f) is cst.Attribute else f.value if type(f) is cst.Name else ""
            if name in SHAPE_CALLS:
                return True
        elif type(n) is cst.Attribute and n.attr.value in SHAPE_ATTRS:
            return True
        stack += child_nodes(n)
    return False


def is_ctc(an, node: cst.Call) -> bool:
    return (an.qualname(node.func) or "") in CTC
