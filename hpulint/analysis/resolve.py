"""Resolution: what a value means, asked of an environment (the whole project in the link step,
a file's linked facts while rules run).

:class:`Env` answers the leaves (a symbol, a function's return, a parameter, a class attribute);
:class:`Resolver` folds a :mod:`values` expression over it into one :class:`~values.R` (a kind,
with the class or function it refers to), memoised per value.
"""
from __future__ import annotations

import re
from typing import Optional

from hpulint.analysis.names import (MASK_METHODS, MODULE_METHODS, NON_TENSOR_METHODS, TENSOR_ATTRIBUTES,
                                    PRETRAINED_LOADERS, TENSOR_HOST_ATTRIBUTES, is_flag_name, is_housekeeping_name, is_model_class_name,
                                    is_model_name, is_tokenizer_name)
from hpulint.analysis.values import (
    CHOICE, DATA, DEVICE_TENSORS, HOST, INST, LOADER, LOSS, MASK, MLOADER, MODEL, NONE, OPTIMIZER, OTHER, R, R_UNKNOWN,
    SCALAR, SEQ, SEQ_TENSOR, SIZE, SYM, TENSOR, TUPLE, UNKNOWN, K, Named, Param, Val, by_name, r,
)


class Env:
    """The leaves' meaning. Subclasses answer from the whole project or from its facts."""

    def sym(self, ref: str) -> R:
        return R(SYM, ref)

    def ret(self, ref: str) -> R:
        return R_UNKNOWN

    def param(self, fid: str, name: str) -> R:
        return R_UNKNOWN

    def ret_of(self, ref: str, args: tuple, resolve) -> R:
        """What calling ``ref`` with ``args`` ((position or keyword, Val) pairs, resolved with
        ``resolve``) returns."""
        return self.ret(ref)

    def instance(self, cls: str) -> R:
        return R(INST, cls)

    def attr(self, cls: str, name: str) -> R:
        return R_UNKNOWN

    def has_method(self, cls: str, name: str) -> bool:
        return False

    def meth(self, cls: str, name: str) -> R:
        return R_UNKNOWN

    def carried(self, fid: str, index: int, name: str, resolve) -> R:
        """What the body of loop ``index`` of ``fid`` leaves in ``name`` for the next pass."""
        return R_UNKNOWN


class Resolver:
    def __init__(self, env: Env) -> None:
        self.env = env
        self.memo: dict = {}

    def __call__(self, v: Val) -> R:
        if type(v) is K:
            return r(v.kind)
        key = v
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.memo[key] = R_UNKNOWN  # a cycle resolves to unknown
        out = self._resolve(v)
        self.memo[key] = out
        return out

    def _resolve(self, v: Val) -> R:
        env = self.env
        t = v.tag
        if t == "sym":
            return env.sym(v.ref)
        if t == "ret":
            got = env.ret(v.ref)
            return got if got.kind != UNKNOWN else _loader_by_name(v.ref.rsplit(".", 1)[-1].rsplit(":", 1)[-1])
        if t == "retof":
            got = env.ret_of(v.ref, v.args, self)
            return got if got.kind != UNKNOWN else _loader_by_name(v.ref.rsplit(".", 1)[-1].rsplit(":", 1)[-1])
        if t == "param":
            return env.param(v.fid, v.name)
        if t == "carried":
            return env.carried(v.fid, v.index, v.name, self)
        if t == "self":
            return env.instance(v.cls)
        if t == "loaderat":
            return R(LOADER, v.site)
        if t == "marking":
            base = self(v.base)
            return R(MLOADER, base.ref, base.parts) if base.kind == LOADER else r(MLOADER)
        if t == "attr":
            return self._attr(self(v.base), v.name)
        if t == "elem":
            return self._elem(self(v.base), v.index)
        if t == "hostbatch":
            # a batch whose parts the loop moves to the device: on the host, unless the loop
            # iterates a marking loader after all (one its callers pass in)
            src = v.base
            while src.tag == "elem":
                src = src.base
            return self(v.base) if self(src).kind == MLOADER else r(HOST)
        if t == "meth":
            base = self(v.base)
            if _tokenizer_call(base, v, self.env):
                return r(HOST)
            got = self._meth(base, v.name, v.hint)
            return got if got.kind != UNKNOWN else _loader_by_name(v.name)
        if t == "call":
            base = self(v.base)
            if base.kind == SYM:
                return env.ret(base.ref)
            if base.kind == MODEL:
                if base.ref:
                    out = env.meth(base.ref, "forward")
                    return out if out.kind != UNKNOWN else r(TENSOR)
                return r(TENSOR)
            if base.kind == INST:
                return env.meth(base.ref, "__call__")
            if base.kind == LOSS:
                return r(TENSOR)
            if base.kind == UNKNOWN and isinstance(v.base, Param) and is_model_name(v.base.name):
                return r(TENSOR)  # `model(x)` with a model nobody in the project passes
            if base.kind == UNKNOWN and isinstance(v.base, Named) and is_tokenizer_name(v.base.name):
                return r(HOST)  # `tokenizer(prompt, return_tensors="pt")`: ids on the CPU
            return R_UNKNOWN
        if t == "arith":
            return self._arith([self(p) for p in v.parts], v.op)
        if t == "join":
            return self._join([self(p) for p in v.parts])
        if t == "tup":
            return R(TUPLE, None, tuple(self(p) for p in v.parts))
        if t == "choice":
            parts = tuple(self(p) for p in v.parts)
            if all(p.kind == SYM and p.ref for p in parts):
                return R(OTHER, CHOICE, parts)
            return r(OTHER)
        if t == "named":
            base = v.base
            if base.tag == "meth" and base.name in ("to", "cuda") and base.hint != "cpu":
                # `net = pickle.load(f)["ema"].to(device)`: an object the analysis cannot place,
                # moved to the device; its name says what it is (a module), else a tensor
                named = by_name(v.name)
                if named.kind == MODEL and self(base.base).kind == UNKNOWN:
                    return named
            got = self(base)
            return got if got.kind != UNKNOWN else by_name(v.name)
        if t == "used":
            got = self(v.base)
            return got if got.kind != UNKNOWN else r(v.kind)
        return R_UNKNOWN

    def _attr(self, base: R, name: str) -> R:
        k = base.kind
        if k in DEVICE_TENSORS or k == HOST:
            if name == "shape":
                return r(SIZE)
            if name in TENSOR_HOST_ATTRIBUTES or is_flag_name(name) or name.startswith("__"):
                return r(OTHER)  # (`x.__class__.__name__`: Python's own attributes)
            if name in TENSOR_ATTRIBUTES:
                # (`mask.T`: the same values, transposed)
                return r(HOST if k == HOST else MASK if k == MASK and name in ("T", "mT", "data") else TENSOR)
            if name in _CACHES and k != HOST:
                return r(SEQ_TENSOR)  # `outputs.past_key_values`: a cache of tensors (its truth is its own)
            # a model output object (`out.logits`, `out.loss`) or a tensor attribute
            return r(HOST if k == HOST else TENSOR)
        if k in (MODEL, INST) and base.ref:
            out = self.env.attr(base.ref, name)
            if out.kind != UNKNOWN:
                return out
        if k == MODEL and name == "module":
            return base  # DDP/FSDP wrappers: model.module is the model
        if k == MODEL and name in ("weight", "bias"):
            return r(TENSOR)  # a layer's parameter (`model.get_input_embeddings().weight`)
        if k == SYM and base.ref:
            return self.env.sym(base.ref + "." + name)
        if k == OPTIMIZER and name in ("param_groups", "state"):
            return r(SEQ)
        if k in (MODEL, INST, UNKNOWN) and is_model_name(name):
            return r(MODEL)
        if k == UNKNOWN and name == "grad":
            return r(TENSOR)  # `p.grad`: a parameter's gradient, wherever the parameter came from
        if k in (UNKNOWN, INST) and name in ("cpu", "np"):
            return r(HOST)  # `buffer.cpu`, `buffer.np`: a CPU/GPU buffer pair's host side (not a call)
        return R_UNKNOWN

    def _elem(self, base: R, index: Optional[int]) -> R:
        k = base.kind
        if k == OTHER and base.ref == CHOICE:  # one function of a table: any of them
            return R(SYM, base.parts[0].ref, base.parts)
        if k == TUPLE:
            if index is not None and -len(base.parts) <= index < len(base.parts):
                return base.parts[index]
            return self._join(list(base.parts))
        if k in DEVICE_TENSORS or k == HOST:
            if base.parts and index is not None and -len(base.parts) <= index < len(base.parts):
                return base.parts[index]  # (see _join: a tensor, or a tuple with it)
            return r(k) if base.parts else base
        if k == SIZE:
            return R_DIM
        if k in (SEQ_TENSOR, LOADER, MLOADER):
            return r(TENSOR)  # a loader's batches count as tensors
        if k == MODEL:
            # ModuleList[i], `for layer in self.layers`: one of the modules it was built from
            return base if base.ref is None else r(MODEL)
        return R_UNKNOWN

    def _meth(self, base: R, name: str, hint: str) -> R:
        k = base.kind
        if k in DEVICE_TENSORS:
            if name == "to":
                return r(HOST) if hint == "cpu" else r(MASK if k == MASK and hint != "dtype" else TENSOR)
            if name in MASK_METHODS:
                return r(MASK)
            if k == MASK and name in _SAME_DTYPE:
                return r(MASK)
            out = NON_TENSOR_METHODS.get(name)
            if out is None:
                return r(SCALAR) if is_flag_name(name) or name in ("dense_dim", "sparse_dim", "_nnz") else r(TENSOR)
            if out == "maybe-tuple":
                return r(SEQ_TENSOR if hint in ("args", "dims") else TENSOR)
            return r(out)
        if k == HOST:
            if name in ("to", "cuda"):
                return r(HOST) if hint in ("cpu", "dtype", "") and name == "to" else r(TENSOR)
            if name in ("item",):
                return r(SCALAR)
            if name in ("tolist",):
                return r(SEQ)
            if name == "type_as":
                return R_UNKNOWN  # the other tensor's type, its device included (`ones(1).type_as(src)`)
            if NON_TENSOR_METHODS.get(name) in (SCALAR, OTHER) and not (name == "type" and hint):
                # `x.data_ptr()`, `x.numel()`: a number, not a host tensor (`x.type(torch.LongTensor)`
                # is a cast: a host tensor still)
                return r(NON_TENSOR_METHODS[name])
            return r(HOST)
        if k == LOSS:
            return base if MODULE_METHODS.get(name) == MODEL else R_UNKNOWN  # (`criterion.to(device)`)
        if k == MODEL:
            out = MODULE_METHODS.get(name)
            if out is not None:
                return base if out == MODEL else r(out)
            if base.ref:
                got = self.env.meth(base.ref, name)
                if got.kind != UNKNOWN or self.env.has_method(base.ref, name):
                    return got  # the project's own method: what it returns, even unknown
            if is_housekeeping_name(name):
                return R_UNKNOWN  # model.is_training(), model._get_name(), engine.load_checkpoint()
            if name in ("get", "setdefault") and not base.ref:
                return R_UNKNOWN  # `cfg.model.get("seq_length")`: a configuration's dict, named `model`
            return r(TENSOR)  # model.decode(z), model.generate(...): outputs
        if k == INST and base.ref:
            if self.env.has_method(base.ref, name):
                return self.env.meth(base.ref, name)
            called = self.env.attr(base.ref, name)  # `self.model(x)` in a trainer: an attribute called
            if called.kind == MODEL:
                return r(TENSOR)
            if called.kind == SYM and called.ref:
                return self.env.ret(called.ref)
            return R_UNKNOWN
        if k == OPTIMIZER:
            return r(NONE if name in ("step", "zero_grad") else OTHER)
        if k in (LOADER, MLOADER) and name in ("per_device_loader", "__iter__"):
            return R(MLOADER, base.ref, base.parts) if name == "per_device_loader" else base
        if k == SYM and base.ref:
            got = self.env.ret(base.ref + "." + name)
            if got.kind == UNKNOWN and name in PRETRAINED_LOADERS and is_model_class_name(base.ref.rsplit(".", 1)[-1]):
                return r(MODEL)  # `AutoModelForCausalLM.from_pretrained(...)`: a library's module
            return got
        if k == UNKNOWN:
            if _TO_DEVICE.match(name):
                return r(TENSOR)  # composer's `state.device.tensor_to_device(t)`, `batch_to_device`
            if name in MODEL_ONLY_METHODS:
                return r(MODEL) if MODULE_METHODS.get(name) == MODEL else R_UNKNOWN
            if name == "item":
                return r(DATA)
            if name in ("cpu", "numpy"):
                return r(HOST)
            if name == "to":
                return r(HOST) if hint == "cpu" else (r(TENSOR) if hint == "device" else R_UNKNOWN)
            if name in ("detach", "contiguous", "unsqueeze", "squeeze", "view", "reshape", "permute",
                        "transpose", "clone", "long", "int", "softmax", "sigmoid", "masked_fill", "type_as",
                        "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "expand", "repeat",
                        "flatten", "norm"):
                return r(TENSOR)
            if hint == "dims":
                return r(TENSOR)  # `lengths.sort(dim=0, descending=True)`: torch's keywords
            if len(name) > 2 and name.endswith("_") and not name.startswith("_") and hint != "cpu":
                return r(TENSOR)  # in-place ops (`exp_avg.mul_(beta1)`) are torch's convention
        return R_UNKNOWN

    @staticmethod
    def _arith(parts: list, op: str) -> R:
        if op == "modules":
            return _modules(parts)
        if op == "arith" and len(parts) > 1 and all(p.kind == TUPLE for p in parts):
            return R(TUPLE, None, tuple(x for p in parts for x in p.parts))  # `a + b` of two lists
        if op in ("torch", "torchmask", "torchseq", "torchsame"):
            # `torch.cat([t.cpu() for t in ts])`: the op reads the tensors its list holds
            parts = [x for p in parts for x in (p.parts if p.kind == TUPLE else (p,))]
        kinds = {p.kind for p in parts}
        device = kinds & DEVICE_TENSORS
        if op == "torchseq":
            # `torch.meshgrid(*host_ranges)`, `x.split(n)`: pieces where the input is
            return R(TUPLE, None, (r(HOST),)) if HOST in kinds and not device else r(SEQ_TENSOR)
        if op == "num":
            return r(DATA) if device or DATA in kinds else r(SCALAR)
        if op == "torchsame" and device and kinds <= {MASK}:
            return r(MASK)
        if op in ("torch", "torchsame"):
            if device:
                return r(TENSOR)
            return r(HOST) if HOST in kinds else r(TENSOR)
        if op == "torchmask":
            return r(HOST) if HOST in kinds and not device else r(MASK)
        if op == "invert":
            # `~keep` of a device tensor: a boolean mask's complement (an integer tensor's bitwise
            # not is rare in model code); of a Python int, an int
            return r(MASK) if device else parts[0] if parts else R_UNKNOWN
        if device:
            return r(MASK if op == "cmp" or kinds <= {MASK} else TENSOR)
        if HOST in kinds:
            return r(HOST)
        if kinds and kinds <= {SCALAR, DATA, NONE, SIZE}:
            if op != "cmp" and DATA not in kinds and any(_is_dim(p) for p in parts):
                return R_DIM  # `kv_seq_len + past[0].shape[-2]`: still a size
            return r(SCALAR if op == "cmp" or DATA not in kinds else DATA)
        return R_UNKNOWN

    @staticmethod
    def _join(parts: list) -> R:
        real = [p for p in parts if p.kind not in (NONE, UNKNOWN)]
        if not real:
            return r(NONE) if parts and all(p.kind == NONE for p in parts) else R_UNKNOWN
        if len(real) > 1 and all(p.kind == TUPLE and len(p.parts) == len(real[0].parts) for p in real):
            # `return probs, attn` on one path, `return avg_probs, avg_attn` on another: each
            # position is what any path puts there
            return R(TUPLE, None, tuple(Resolver._join([p.parts[i] for p in real])
                                        for i in range(len(real[0].parts))))
        dev = [p for p in real if p.kind in DEVICE_TENSORS]
        if dev and any(p.kind == MODEL for p in real):
            # `model = fabric.to_device(model)` on one path, `GPT(config)` on another: a module
            # (a wrapper the analysis does not know returned what it was given)
            return next(p for p in real if p.kind == MODEL)
        if dev:
            if any(_is_dim(p) for p in real):
                # a size on one path (`kv_seq_len = x.shape[-2]`) and a tensor on another (an
                # element of a cache that holds shapes under `reuse_cache`): the code is written
                # for a size, and which path runs is not known here. A plain number and a tensor
                # (`prev_t = timestep - 1` or an element of the device timesteps) stay a tensor
                return R_UNKNOWN
            tuples = [p for p in real if p.kind == TUPLE]
            if len(tuples) == 1 and len(dev) + 1 == len(real):
                # `return out, h, w` under a flag, else `return out`: a tensor, whose unpacking
                # (`feat, h, w = extract(...)`) gives the tuple's parts
                return R(TENSOR, None, tuples[0].parts)
            return r(MASK) if all(p.kind == MASK for p in dev) else r(TENSOR)
        if real[0].kind == MODEL and real[0].ref is None and len(real) > 1:
            if any(p.kind == TUPLE for p in real):
                # `self.layers = nn.ModuleList()`, then `self.layers.append(Block(...))` in a loop:
                # a container of what is appended to it
                held = [p for p in real if p.kind == MODEL] + [q for p in real if p.kind == TUPLE for q in p.parts]
                return _modules(held)
            # `teacher = teacher_model` (any module) or `Teacher(teacher_model)`: the project's
            # class says what its methods are
            specific = next((p for p in real if p.kind == MODEL and p.ref), None)
            if specific is not None:
                return specific
        if len(real) > 1 and all(p.kind in (LOADER, MLOADER) for p in real):
            # `loader = train_loader if training else val_loader`, a parameter given either: any
            # of the loaders (its parts, when they are known by where they were made); marking
            # when one of them marks (`pl.MpDeviceLoader(loader, dev) if use_xla else loader`: on
            # the lazy device, the marking one)
            kind = MLOADER if any(p.kind == MLOADER for p in real) else LOADER
            sites = tuple(dict.fromkeys(q for p in real for q in loader_sites(p)))
            if not sites:
                return r(kind)
            return R(kind, sites[0]) if len(sites) == 1 else R(kind, None, tuple(R(kind, s) for s in sites))
        if len(real) > 1 and all(p.kind == SYM and p.ref for p in real):
            # `return forward_backward_pipelining` on one path, `return forward_backward_no_pipelining`
            # on another: a call of what it returns may run any of them (see Project.alternatives)
            picks = tuple({p.ref: p for p in real}.values())
            return R(SYM, picks[0].ref, picks) if len(picks) > 1 else picks[0]
        if real[0].kind == SEQ:
            # `self.model = models if isinstance(models, Ensemble) else Ensemble(models)`: the
            # project's module class (a list of models is what it wraps)
            wrapper = next((p for p in real if p.kind == MODEL and p.ref), None)
            if wrapper is not None:
                return wrapper
            # `self.slots = []`, then `self.slots.append(Slot(...))`: a list of what it is given
            return next((p for p in real if p.kind == TUPLE), real[0])
        return real[0]


# a model output's key/value cache: a tuple (or cache object) of tensors, not one tensor
_CACHES = frozenset({"past_key_values", "past", "mems"})


def loader_sites(res: R) -> tuple:
    """The `DataLoader(...)` calls a resolved loader may come from (``module#n``; see LoaderAt)."""
    if res.kind not in (LOADER, MLOADER):
        return ()
    return (res.ref,) if res.ref else tuple(p.ref for p in res.parts if p.ref)


# a Python int read from a shape (`x.shape[-2]`, `x.size(1)`, arithmetic on them)
R_DIM = R(SCALAR, "dim")


def _is_dim(p: R) -> bool:
    return p.kind == SIZE or (p.kind == SCALAR and p.ref == "dim")


def _modules(parts: list) -> R:
    """A module container (`nn.Sequential`, `nn.ModuleList`, `nn.ModuleDict`): a model whose
    ``parts`` are the project's module classes it holds (nested containers flattened), so that a
    call of it, or of one of its items, is known to run their ``forward``."""
    mods = []
    for p in parts:
        if p.kind != MODEL:
            continue
        for q in (p.parts if p.ref is None else (p,)):
            if q.ref and q not in mods:
                mods.append(q)
    return R(MODEL, None, tuple(mods[:8])) if mods else r(MODEL)


# a framework's device object moving a tensor (or a batch of them) onto the device
_TO_DEVICE = re.compile(r"^(?:tensor_|batch_|move_|send_)?to_device$")
# tensor methods that keep the dtype (a mask stays a mask)
_SAME_DTYPE = frozenset({"squeeze", "unsqueeze", "view", "reshape", "flatten", "t", "transpose", "permute",
                         "contiguous", "clone", "detach", "expand", "expand_as", "repeat", "cuda", "flip",
                         "roll", "narrow", "select", "index_select", "gather", "__invert__", "logical_not",
                         "view_as", "reshape_as", "squeeze_", "unsqueeze_", "scatter", "scatter_",
                         "masked_fill", "masked_fill_", "index_fill", "index_fill_", "repeat_interleave"})

# methods only a module has (a tensor has none of them): an unknown receiver is a model
MODEL_ONLY_METHODS = frozenset({"eval", "train", "parameters", "named_parameters", "buffers", "named_buffers",
                                "modules", "named_modules", "children", "named_children", "state_dict",
                                "load_state_dict", "register_buffer", "register_parameter",
                                "register_forward_hook", "register_forward_pre_hook", "get_submodule"})


def _tokenizer_call(base: R, v, env: Env) -> bool:
    """`self.tokenizer_2(prompt, ...)` or `self.tokenizer.encode(...)` that the project does not
    define: a text tokenizer's output, host ids (a library pipeline counts as a model, whose
    unknown methods are taken for outputs)."""
    if is_tokenizer_name(v.name):
        if base.kind in (MODEL, INST) and base.ref and (
                env.has_method(base.ref, v.name) or env.attr(base.ref, v.name).kind in (MODEL, INST, SYM)):
            return False  # the project's own tokenizer (a VQ model, a method): what it says
        return base.kind in (MODEL, INST, UNKNOWN)
    inner = v.base
    return inner.tag == "attr" and is_tokenizer_name(inner.name) and base.kind == UNKNOWN


def _loader_by_name(name: str) -> R:
    """`build_dataloader()`, `self._iter_dataloader()`: what a function's name says it returns."""
    from hpulint.analysis.names import LOADER_NAME

    return r(LOADER) if LOADER_NAME.search(name) else R_UNKNOWN
