"""The value of a call of a library API known by name (torch, NumPy, optimizers, loaders,
einops, module containers): the tables :func:`hpulint.analysis.build.call_value` asks first.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis import build
from hpulint.analysis.names import (
    CONVERSIONS, HOST_FACTORIES, LEGACY_TENSOR_TYPES, MARKING_LOADERS, MASK_FUNCTIONS, NON_TENSOR_NAMESPACES,
    NON_TENSOR_TORCH, TENSOR_NAMESPACES, TUPLE_OF_TENSORS_TORCH,
)
from hpulint.analysis.syntax import STRINGS, keyword, last_name
from hpulint.analysis.values import (
    Arith, K, Marking, Tup, V_DATA, V_HOST, V_LOSS, V_MASK, V_MLOADER, V_MODEL, V_OPTIMIZER, V_OTHER, V_SCALAR,
    V_SEQ_TENSOR, V_TENSOR, V_UNKNOWN, Val,
)

OPTIMIZER_MODULES = ("torch.optim.", "habana_frameworks.torch.hpex.optimizers.", "transformers.optimization.",
                     "apex.optimizers.", "bitsandbytes.optim.", "torch_xla.amp.syncfree.")
LOADER_CALLS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


# libraries whose criterion classes are named for what they are (a project's own loss class keeps
# its symbol: calling it runs its forward)
_LOSS_LIBRARIES = ("transformers.", "timm.", "kornia.", "monai.", "segmentation_models_pytorch.",
                   "pytorch_metric_learning.")
_LOSS_CLASS = re.compile(r"^[A-Z]\w*(?:Loss|Smoother|CrossEntropy)$")
EINOPS = frozenset({"einops.rearrange", "einops.reduce", "einops.repeat"})


def known_call(an, qn: str, call: cst.Call) -> Optional[Val]:
    """The value of a call of a library API we know by name, or None."""
    if qn.startswith("numpy.") or qn.startswith("math."):
        return V_HOST if qn.startswith("numpy.") else V_SCALAR
    if qn in LOADER_CALLS:
        return an.loader_site(call)
    if qn in MARKING_LOADERS:  # (the loader it wraps comes first)
        first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
        return Marking(build.value(an, first.value)) if first is not None else V_MLOADER
    if qn == "functools.partial" and call.args and call.args[0].keyword is None \
            and all(a.keyword is not None for a in call.args[1:]):
        # `partial(shared_update_fn, sde=sde, corrector=c)`: calling it calls the function (with
        # keywords only, the positional arguments of a call still map to its parameters)
        return build.value(an, call.args[0].value)
    if qn == "itertools.islice":  # `islice(loader, num_steps)`: the first batches of the loader
        return build.value(an, call.args[0].value) if call.args else V_UNKNOWN
    if qn.startswith(OPTIMIZER_MODULES) and qn.rsplit(".", 1)[-1][:1].isupper() \
            and "lr_scheduler" not in qn and "Scheduler" not in qn:
        return V_OPTIMIZER
    if qn in EINOPS or qn.startswith("einx."):
        # `rearrange(x, "b n -> n b")`, `einx.multiply("b n, b", x, w)`: the tensor's layout changes,
        # not what it is
        tensors = [a for a in call.args if a.keyword is None and not isinstance(a.value, STRINGS)]
        return build.value(an, tensors[0].value) if tensors else V_UNKNOWN
    if qn.startswith("diffusers.") and qn.endswith(".retrieve_timesteps"):
        # diffusers' helper sets the scheduler's timesteps on `device` (its third argument) and
        # returns them with their count
        device = keyword(call, "device") or (
            call.args[2].value if len(call.args) > 2 and call.args[2].keyword is None else None)
        return Tup((V_TENSOR, V_HOST)) if device is not None and not build.is_cpu(an, device) else None
    if qn.startswith(_LOSS_LIBRARIES) and _LOSS_CLASS.search(qn.rsplit(".", 1)[-1]):
        # `LabelSmoother(epsilon=0.1)`, timm's `LabelSmoothingCrossEntropy()`: a criterion, whose
        # call gives a loss tensor
        return V_LOSS
    if not qn.startswith("torch."):
        return None
    leaf = qn.rsplit(".", 1)[-1]
    if qn in ("torch.load", "torch.jit.load", "torch.hub.load", "torch.export.load"):
        return V_UNKNOWN  # whatever was saved: a model, a state dict, tensors (the name may say)
    if qn in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return V_TENSOR
    if qn == "torch.compile":
        return build.value(an, call.args[0].value) if call.args else V_OTHER
    if qn in MASK_FUNCTIONS:  # torch.isnan(x): x is a tensor, whatever else is known of it
        return Arith(_arg_values(an, call), "torchmask")
    if qn in ("torch.repeat_interleave", "torch.flip", "torch.roll") and call.args:
        return build.value(an, call.args[0].value)  # the same values, repeated or moved
    if qn in HOST_FACTORIES:
        device = keyword(call, "device")
        if device is not None:
            if build.is_cpu(an, device):
                return V_HOST
            dtype = keyword(call, "dtype")  # `torch.full(shape, False, dtype=torch.bool, device=d)`
            return V_MASK if dtype is not None and an.qualname(dtype) == "torch.bool" else V_TENSOR
        if qn in CONVERSIONS or not an.default_device_set:
            return V_HOST
        return V_TENSOR
    if qn == "torch.nn.utils.clip_grad_norm_" or qn == "torch.nn.utils.clip_grad.clip_grad_norm_":
        return V_TENSOR
    if qn in ("torch.utils.checkpoint.checkpoint",):
        return V_TENSOR
    if qn in ("torch.autograd.grad",):
        return V_SEQ_TENSOR
    if qn in GRAPH_CAPTURES:
        # `g = torch.cuda.CUDAGraph()` / `htorch.hpu.HPUGraph()`: `g.replay()` runs what it captured
        # (a model's forward), so a call of it is a model run, as `model.decode(z)` is
        return V_MODEL
    if qn.startswith("torch.cuda.") and leaf in LEGACY_TENSOR_TYPES:
        return V_TENSOR  # `torch.cuda.LongTensor(ids)`: made on the accelerator
    if any(qn.startswith(p) for p in NON_TENSOR_NAMESPACES):
        return V_OTHER
    if qn in MODULE_CONTAINERS:
        parts = container_parts(an, call)
        return Arith(parts, "modules") if parts else V_MODEL
    if qn.startswith("torch.nn.") and leaf.endswith("Loss"):
        return V_LOSS  # a criterion: calling it is no model call (a loop over its terms is no step)
    if qn.startswith("torch.nn.") and leaf[:1].isupper():
        return V_MODEL
    if any(qn.startswith(p) and "." not in qn[len(p):] for p in TENSOR_NAMESPACES):
        if leaf in TUPLE_OF_TENSORS_TORCH:
            if leaf == "where":
                return _torch_op(an, call) if len(call.args) >= 3 else V_SEQ_TENSOR
            if leaf in ("max", "min") and _elementwise(call):
                return _torch_op(an, call)  # `torch.max(r, 1 / r)`: the larger of two tensors
            if leaf in ("max", "min", "median", "unique", "nonzero"):
                many = len(call.args) > 1 or any(a.keyword is not None for a in call.args)
                return V_SEQ_TENSOR if many and leaf != "nonzero" else _torch_op(an, call)
            parts = _arg_values(an, call)  # (the pieces are where the input is: `torch.meshgrid` of host ranges)
            return Arith(parts, "torchseq") if parts and keyword(call, "device") is None else V_SEQ_TENSOR
        if leaf in ("equal", "allclose", "is_nonzero"):
            return V_DATA
        if leaf in ("cat", "stack", "concat", "concatenate", "hstack", "vstack") and keyword(call, "device") is None:
            parts = _arg_values(an, call)  # (masks joined are a mask: `t.repeat(...)[torch.stack(masks)]`)
            return Arith(parts, "torchsame") if parts else V_TENSOR
        if leaf in NON_TENSOR_TORCH or leaf.startswith(("is_", "get_", "set_")) or not leaf[:1].islower():
            return V_OTHER  # (`torch.get_autocast_gpu_dtype()`: a dtype; `torch.set_...`: None)
        return _torch_op(an, call)
    return None


GRAPH_CAPTURES = frozenset({"torch.cuda.CUDAGraph", "torch.cuda.graphs.CUDAGraph", "habana_frameworks.torch.hpu.HPUGraph",
                            "habana_frameworks.torch.hpu.graphs.HPUGraph"})
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
                               "torch.nn.modules.container.Sequential", "torch.nn.modules.container.ModuleList",
                               "torch.nn.modules.container.ModuleDict"})


def container_parts(an, call: cst.Call) -> tuple:
    """The modules a container is built from, as values (`nn.Sequential(Cutout(), conv)`,
    `nn.ModuleList(Block(d) for _ in range(n))`, `nn.Sequential(*[Block(d) ...])`,
    `nn.ModuleDict({"a": A()})`): what calling the container, or one of its items, can run.
    Only values a project symbol may answer are kept (at most 8)."""
    exprs = []
    for a in call.args:
        if a.keyword is not None:
            continue
        v = a.value
        if isinstance(v, (cst.List, cst.Tuple, cst.Set)):
            exprs += [el.value for el in v.elements if not isinstance(el, cst.StarredElement)]
        elif isinstance(v, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            exprs.append(v.elt)
        elif isinstance(v, cst.Dict):
            exprs += [el.value for el in v.elements if isinstance(el, cst.DictElement)]
        elif isinstance(v, cst.DictComp):
            exprs.append(v.value)
        elif not a.star:
            exprs.append(v)
    out = []
    for e in exprs:
        val = build.value(an, e)
        if isinstance(val, K) or val in out:
            continue  # a library module (`nn.ReLU()`) or a known kind: nothing of the project's to run
        out.append(val)
    return tuple(out[:8])


def _arg_values(an, call: cst.Call) -> tuple:
    out = []
    for a in call.args:
        if a.keyword is not None and a.keyword.value not in ("input", "other", "tensors"):
            continue
        v = a.value
        if type(v) in (cst.List, cst.Tuple):
            out.extend(build.value(an, el.value) for el in v.elements[:4])
        else:
            out.append(build.value(an, v))
    return tuple(out[:4])


def _elementwise(call: cst.Call) -> bool:
    """`torch.max(a, b)` of two tensors (a tensor), not `torch.max(x, 1)` or `torch.max(x, dim)`
    (values and indices along a dimension)."""
    if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
        return False
    other = call.args[1].value
    if type(other) is cst.UnaryOperation:
        other = other.expression
    if type(other) is cst.Integer:
        return False
    name = last_name(other) or ""
    return not re.search(r"dim|axis", name, re.I)


def _torch_op(an, call: cst.Call) -> Val:
    device = keyword(call, "device")
    dtype = keyword(call, "dtype")
    boolean = dtype is not None and an.qualname(dtype) == "torch.bool"  # `torch.zeros_like(x, dtype=torch.bool)`
    if device is not None:
        return V_HOST if build.is_cpu(an, device) else V_MASK if boolean else V_TENSOR
    parts = _arg_values(an, call)
    if boolean and parts and (an.qualname(call.func) or "").endswith("_like"):
        return Arith(parts[:1], "torchmask")  # a mask where its model tensor is
    if dtype is None and parts and (an.qualname(call.func) or "").endswith("_like"):
        return Arith(parts[:1], "torchsame")  # `torch.ones_like(keep)`: its model's dtype
    return Arith(parts, "torch") if parts else V_TENSOR
