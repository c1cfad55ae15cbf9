"""torch functions that break the graph wherever a compiled region calls them, for HPU012.

Each was measured on torch 2.13 (CPU, ``eager`` backend: a compiled function calling it on a
3x3 tensor, called twice): one graph break at the call, with the reason Dynamo logs.

- ``torch.combinations``: built with ``masked_select`` inside, an output shape from the data;
- ``torch.linalg.lstsq``: "Dynamic shape operator" (its outputs' shapes depend on the driver);
- ``torch.cov`` and ``torch.corrcoef`` (with or without ``aweights``): they test their weights
  with ``aten.equal``, a Python bool read from the data;
- ``F.gaussian_nll_loss``: it checks that the variance is positive with a host read
  (``aten._local_scalar_dense``);
- ``torch.allclose``: a Python bool read from both tensors (as ``torch.equal``);
- ``Tensor.is_pinned()``, ``Tensor.is_shared()``, ``Tensor.storage_offset()``, and
  ``torch.get_num_threads()``, ``torch.get_num_interop_threads()``, ``torch.cuda.device_count()``,
  ``torch.initial_seed()``: "torch.* op returned non-Tensor" (a Python value, measured in round 26;
  ``torch.cuda.is_available()``, ``get_default_dtype()``, ``is_grad_enabled()``,
  ``Tensor.element_size()`` and ``get_device()`` are traced);
- ``torch.utils.data.get_worker_info()`` ("marked as skipped") and ``torch.frombuffer`` (a
  builtin operator Dynamo cannot trace: 2 breaks);
- ``Tensor.random_(...)``: "Tensor.random_ op ... not supported", whatever its arguments (ints too);
- a tensor given where torch takes a Python number: the bounds of ``uniform_``, the mean and
  std of ``normal_``, the rate of ``exponential_``, the ``p`` of ``F.dropout``, the slope of
  ``F.leaky_relu`` and the ``alpha=`` of ``add``/``sub``: torch reads it with ``.item()``
  (``aten._local_scalar_dense``), a break (module buffers as the bounds: 1 break a call). The
  same tensor given to ``fill_``, ``clamp``, ``torch.full``, ``bernoulli_``, ``lerp``, ``pow`` or
  ``linspace`` is traced.

Measured in round 27 (same way):

- ``torch.lobpcg`` and ``torch.masked.masked_tensor``/``as_masked_tensor`` ("marked as skipped"), and
  ``torch.typename``, ``set_num_threads``, ``set_flush_denormal`` and ``set_anomaly_enabled`` (the
  same; Dynamo's own ``trace_rules.lookup`` gives ``SkipFunctionVariable`` for each);
  ``types.SimpleNamespace(...)`` built in the region ("Unsupported function call": a namedtuple or
  a dataclass is traced);
- ``Tensor.is_inference()`` ("not supported": ``is_contiguous()``, ``is_floating_point()`` are
  traced);
- ``x.detach_()`` on an input of the compiled function (a break; ``x = x.detach()``, and
  ``detach_()`` of a tensor made in the region, are traced);
- a ``torch.distributed`` collective with ``async_op=True`` ("async_op=True for distributed
  collectives"), and the ``.wait()`` on the handle it returns: a break each (the blocking call is
  traced).

Traced (no break; not reported): ``torch.linalg.solve``, ``eig``/``eigvals``/``eigh``, ``svd``,
``pinv``, ``qr``, ``cholesky``, ``matrix_rank``, ``det``, ``cdist``, ``kthvalue``, ``median``,
``mode``, ``histc``, ``quantile`` with a float, ``searchsorted``, ``bucketize``, ``isin``,
``multinomial``, ``bernoulli``, ``cartesian_prod``, ``block_diag``, ``stft``, ``rfft``, the other
losses of ``torch.nn.functional``.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import argument, code, is_true, keyword
from hpulint.analysis.values import Param
from hpulint.rules.compiled_region import is_tensor

_SHAPE = "its output shape depends on the data (\"Dynamic shape operator\")"
_BOOL = "it reads a Python bool from the tensors' values (\"Data dependent operator\")"
_FIX_BOOL = "Compute it in the eager code around the compiled call, or with tensor ops that keep no Python bool"

# qualified name -> (why Dynamo breaks the graph there, fix)
TORCH_UNTRACED = {
    "torch.combinations": ("`torch.combinations` is built with `masked_select`: " + _SHAPE,
                           "Make the index pairs once (`torch.triu_indices`, or a buffer built in `__init__`) and "
                           "index with them"),
    "torch.linalg.lstsq": ("`torch.linalg.lstsq`: " + _SHAPE,
                           "Solve the normal equations with `torch.linalg.solve` (traced), or solve in the eager code"),
    "torch.cov": ("`torch.cov` checks its weights with `aten.equal`: " + _BOOL, _FIX_BOOL),
    "torch.corrcoef": ("`torch.corrcoef` (through `torch.cov`) checks its weights with `aten.equal`: " + _BOOL,
                       _FIX_BOOL),
    "torch.nn.functional.gaussian_nll_loss": (
        "`F.gaussian_nll_loss` checks that the variance is positive with a host read (\"Data dependent operator\")",
        "Write the loss with tensor ops (`0.5 * (torch.log(var) + (x - mu) ** 2 / var)`, the variance clamped)"),
    "torch.allclose": ("`torch.allclose` returns a Python bool: " + _BOOL, _FIX_BOOL),
    **dict.fromkeys(("torch.get_num_threads", "torch.get_num_interop_threads", "torch.cuda.device_count",
                     "torch.initial_seed"),
                    ("it returns a Python number, not a tensor (\"torch.* op returned non-Tensor\")",
                     "Read it once in the eager code (or at construction) and keep it as a plain attribute or "
                     "argument")),
    "torch.utils.data.get_worker_info": (
        "Dynamo does not trace `get_worker_info()` (\"marked as skipped\")",
        "Read it in the dataset or worker init function, outside the compiled code"),
    **dict.fromkeys(("torch.typename", "torch.set_num_threads", "torch.set_flush_denormal",
                     "torch.set_anomaly_enabled"), (
        "Dynamo does not trace it (\"marked as skipped\")",
        "Call it in the eager code, before the compiled function runs (settings once at start-up)")),
    **dict.fromkeys(("torch.lobpcg", "torch.masked.masked_tensor", "torch.masked.as_masked_tensor"), (
        "Dynamo does not trace it (\"marked as skipped\")",
        "Call it in the eager code around the compiled function (`torch.linalg.eigh` for the smallest "
        "eigenvectors, `masked_fill` then a sum for a masked reduction, both traced)")),
    "types.SimpleNamespace": (
        "Dynamo does not trace building a `types.SimpleNamespace` (\"Unsupported function call\")",
        "Return a tuple, a `namedtuple` or a dataclass (traced), or a dict"),
    "torch.frombuffer": (
        "Dynamo cannot trace `torch.frombuffer` over a Python buffer (\"Failed to trace builtin operator\")",
        "Decode the payload in the eager code (or in the data loader) and pass the tensor in"),
}
PINNED_WHY = "`Tensor.{name}()` returns a Python value (\"torch.* op returned non-Tensor\")"
FIX_PINNED = ("Decide in the eager code (pin or move the batch before the compiled call), or move it unconditionally "
              "(`x.to(device, non_blocking=True)` is traced)")
# methods that break the graph on any tensor: name -> (why, fix)
VALUE_METHODS = {
    **{name: (PINNED_WHY.format(name=name), FIX_PINNED) for name in ("is_pinned", "is_shared", "storage_offset")},
    "is_inference": ("Dynamo does not support `Tensor.is_inference()`",
                     "Clone (or make the tensor under `torch.no_grad()` rather than `inference_mode()`) in the eager "
                     "code before the call"),
}
METHOD_BREAKS = frozenset({*VALUE_METHODS, "detach_", "wait"})
DETACH_WHY = "`{name}.detach_()` changes an input of the compiled function in place (a graph break)"
FIX_DETACH = "Rebind it, `{name} = {name}.detach()` (traced), or detach it before the call"
ASYNC_WHY = "`torch.compile` does not support `async_op=True` for distributed collectives"
FIX_ASYNC = ("Call the collective without `async_op` inside the region (traced), or start it and wait for it in "
             "the eager code")
COLLECTIVES = frozenset({"all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
                         "reduce_scatter_tensor", "broadcast", "reduce", "all_to_all", "all_to_all_single"})


def async_collective(qn: str, node: cst.Call) -> bool:
    """`dist.all_reduce(t, async_op=True)`."""
    module, _, name = qn.rpartition(".")
    return module == "torch.distributed" and name in COLLECTIVES and is_true(keyword(node, "async_op"))


def method_break(an, fn, node: cst.Call, method: str, handles: set):
    """(what is said, why, fix) for a method call that breaks the graph on its receiver: the
    VALUE_METHODS, `.detach_()` of a parameter of the compiled function, `.wait()` on the handle
    of an async collective (``handles``: the names bound to one in the function); else None."""
    recv = node.func.value
    if method in VALUE_METHODS and not node.args:
        return (f"`.{method}()`", *VALUE_METHODS[method])
    if method == "detach_" and type(recv) is cst.Name and _still_param(fn, recv.value):
        return (f"`{recv.value}.detach_()`", DETACH_WHY.format(name=recv.value), FIX_DETACH.format(name=recv.value))
    if method == "wait" and type(recv) is cst.Name and recv.value in handles:
        return (f"`{recv.value}.wait()`", "it waits on an async collective: " + ASYNC_WHY, FIX_ASYNC)
    return None
RANDOM_WHY = "`Tensor.random_()` is not supported by Dynamo (\"Tensor.random_ op\")"
FIX_RANDOM_ = ("Draw with `torch.randint(low, high, shape)` (traced), or draw in the eager code and pass the "
               "tensor in")
# method or torch.nn.functional name -> the (position, keyword) of the arguments torch takes as
# Python numbers (a tensor there is read with `.item()`)
NUMBER_ARGS = {"uniform_": ((0, "from"), (1, "to")), "normal_": ((0, "mean"), (1, "std")),
               "exponential_": ((0, "lambd"),), "dropout": ((1, "p"),), "leaky_relu": ((1, "negative_slope"),),
               "add": ((None, "alpha"),), "sub": ((None, "alpha"),)}
NUMBER_WHY = ("`{name}` takes `{kw}` as a Python number, and a tensor given there is read with `.item()` "
              "(\"Data dependent operator\")")
FIX_NUMBER = ("Pass a Python float (read it once in the eager code), or do that part with tensor arithmetic "
              "(`low + (high - low) * torch.rand(shape)` for a uniform draw)")


def number_argument(an, node: cst.Call, method: str) -> Optional[tuple]:
    """(what is said, why, check) for the first argument of ``method`` that torch takes as a
    Python number and that is given an expression (`t.uniform_(self.low, self.high)` with buffers,
    `F.dropout(x, p_tensor)`); the check says, after the link, whether it is a tensor."""
    for pos, kw in NUMBER_ARGS[method]:
        arg = argument(node, pos, kw)
        if arg is None or type(arg) in (cst.Integer, cst.Float, cst.UnaryOperation):
            continue
        v = an.value(arg)
        return (f"`{code(arg)}` given to `.{method}()`", NUMBER_WHY.format(name=method, kw=kw),
                lambda v=v: an.is_device_tensor(v) or is_tensor(an, v))
    return None


def _still_param(fn, name: str) -> bool:
    """``name`` is a parameter of ``fn`` not bound again before this point (an input, not a tensor
    the region made)."""
    v = fn.bindings.get(name)
    return isinstance(v, Param) and v.fid == fn.fid and v.name == name
