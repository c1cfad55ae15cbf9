"""Values: what an expression holds (a tensor, a host value, a model...), as a small lattice.

While a file is walked, every expression the rules ask about becomes a :class:`Val`: either a
known kind (``K``) or a symbolic value whose meaning comes from elsewhere in the project: what a
function returns (``Ret``), a parameter (``Param``, inferred from how it is used and from its call
sites), an attribute of an instance of a project class (``Attr`` of ``Self``), an element
(``Elem``), a method's result (``Meth``), arithmetic (``Arith``) or a join of branches (``Join``).
Values are immutable and serialisable (:func:`to_json`, :func:`from_json`), so a file's summary
can carry them to the project link step, which resolves them across files.

:class:`Resolver` turns a value into a resolved :class:`R` (kind, class, tuple parts) through an
*environment* that answers the leaves: symbols, returns, parameters, class attributes and
methods. The same resolver runs in the link step (over every summary) and in a file's own
evaluation (through the project facts), so a value means the same thing in both.
"""
from __future__ import annotations

import re
from typing import NamedTuple, Optional

from hpulint.analysis.names import (MASK_METHODS, MODULE_METHODS, NON_TENSOR_METHODS, TENSOR_ATTRIBUTES,
                                    TENSOR_HOST_ATTRIBUTES, is_flag_name, is_model_name)

# Kinds
TENSOR = "tensor"  # a tensor (on the device unless known otherwise)
MASK = "mask"  # a boolean tensor on the device
HOST = "host"  # a CPU tensor or a NumPy array
SCALAR = "scalar"  # a Python number or bool
DATA = "data"  # a Python number read from a device tensor (`.item()`)
SEQ = "seq"  # a host container (list, tuple, range, dict...) of unknown elements
SEQ_TENSOR = "seq-tensor"  # a tuple/list of tensors (`x.split(...)`, `torch.max(x, 1)`)
SIZE = "size"  # a shape (`x.shape`, `x.size()`): its elements are Python ints
MODEL = "model"
OPTIMIZER = "optimizer"
LOADER = "loader"
MLOADER = "marking-loader"  # a loader that marks a step per batch (MpDeviceLoader)
SYM = "sym"  # a function, class or module (not called)
INST = "inst"  # an instance of a project class that is not a model
TUPLE = "tuple"  # a tuple whose parts are known
OTHER = "other"  # known not to be a tensor (str, dict, device, dtype...)
NONE = "none"
UNKNOWN = "unknown"

DEVICE_TENSORS = frozenset({TENSOR, MASK})


class R(NamedTuple):
    """A resolved value."""

    kind: str
    ref: Optional[str] = None  # the class of a model/instance, or the symbol of a SYM
    parts: tuple = ()  # the parts of a TUPLE


R_UNKNOWN = R(UNKNOWN)
_RESOLVED = {k: R(k) for k in (TENSOR, MASK, HOST, SCALAR, DATA, SEQ, SEQ_TENSOR, SIZE, MODEL, OPTIMIZER,
                               LOADER, MLOADER, OTHER, NONE, UNKNOWN)}


def r(kind: str) -> R:
    return _RESOLVED.get(kind) or R(kind)


# --- values ----------------------------------------------------------------------------------------


class Val:
    __slots__ = ()
    tag = ""

    def fields(self) -> tuple:
        return tuple(getattr(self, s) for s in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.fields() == other.fields()

    def __hash__(self) -> int:
        return hash((self.tag, self.fields()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.fields()!r}"


class K(Val):
    """A known kind."""

    __slots__ = ("kind",)
    tag = "k"

    def __init__(self, kind: str) -> None:
        self.kind = kind


class Sym(Val):
    """A function, class or module itself: a project id (``module:qual``) or a dotted name."""

    __slots__ = ("ref",)
    tag = "sym"

    def __init__(self, ref: str) -> None:
        self.ref = ref


class Ret(Val):
    """What calling the symbol ``ref`` returns (an instance, for a class)."""

    __slots__ = ("ref",)
    tag = "ret"

    def __init__(self, ref: str) -> None:
        self.ref = ref


class Param(Val):
    __slots__ = ("fid", "name")
    tag = "param"

    def __init__(self, fid: str, name: str) -> None:
        self.fid = fid
        self.name = name


class Self(Val):
    """``self`` in a method of class ``cls`` (a project class id)."""

    __slots__ = ("cls",)
    tag = "self"

    def __init__(self, cls: str) -> None:
        self.cls = cls


class Attr(Val):
    __slots__ = ("base", "name")
    tag = "attr"

    def __init__(self, base: Val, name: str) -> None:
        self.base = base
        self.name = name


class Elem(Val):
    """An element of ``base``: ``base[k]``, an item of ``for x in base``, part ``index`` of a tuple."""

    __slots__ = ("base", "index")
    tag = "elem"

    def __init__(self, base: Val, index: Optional[int] = None) -> None:
        self.base = base
        self.index = index


class Meth(Val):
    """``base.name(...)``; ``hint`` says what the arguments were: "cpu", "device", "dtype", "args"."""

    __slots__ = ("base", "name", "hint")
    tag = "meth"

    def __init__(self, base: Val, name: str, hint: str = "") -> None:
        self.base = base
        self.name = name
        self.hint = hint


class CallV(Val):
    """Calling a value that is not a known symbol: ``model(x)``, ``fn(x)``."""

    __slots__ = ("base",)
    tag = "call"

    def __init__(self, base: Val) -> None:
        self.base = base


class Arith(Val):
    """A value computed from its parts. ``op`` says how: "arith" (``a * b``), "cmp" (a
    comparison: a mask when a part is a tensor), "torch" (a torch function: a tensor, on the host
    when its tensor arguments are), "torchmask" (``torch.isnan(x)``: a mask, its argument a tensor
    whatever else is known of it), "num" (``int(x)``, ``len(x)``: a Python number, read from the
    device when a part is a device tensor)."""

    __slots__ = ("parts", "op")
    tag = "arith"

    def __init__(self, parts: tuple, op: str = "arith") -> None:
        self.parts = parts
        self.op = op


class Join(Val):
    """One of its parts (branches, `a or b`)."""

    __slots__ = ("parts",)
    tag = "join"

    def __init__(self, parts: tuple) -> None:
        self.parts = parts


class Named(Val):
    """A value bound to a name that says what it is (``model = load(...)``): the name decides
    when nothing else does."""

    __slots__ = ("base", "name")
    tag = "named"

    def __init__(self, base: Val, name: str) -> None:
        self.base = base
        self.name = name


class Tup(Val):
    __slots__ = ("parts",)
    tag = "tup"

    def __init__(self, parts: tuple) -> None:
        self.parts = parts


_K = {}


def known(kind: str) -> K:
    v = _K.get(kind)
    if v is None:
        v = _K[kind] = K(kind)
    return v


V_TENSOR = known(TENSOR)
V_MASK = known(MASK)
V_HOST = known(HOST)
V_SCALAR = known(SCALAR)
V_DATA = known(DATA)
V_SEQ = known(SEQ)
V_SEQ_TENSOR = known(SEQ_TENSOR)
V_SIZE = known(SIZE)
V_MODEL = known(MODEL)
V_OPTIMIZER = known(OPTIMIZER)
V_LOADER = known(LOADER)
V_MLOADER = known(MLOADER)
V_OTHER = known(OTHER)
V_NONE = known(NONE)
V_UNKNOWN = known(UNKNOWN)

MAX_DEPTH = 8  # deeper expressions are not followed: unknown


def depth(v: Val) -> int:
    if isinstance(v, (Attr, Elem, Meth, CallV, Named)):
        return 1 + depth(v.base)
    if isinstance(v, (Arith, Join, Tup)):
        return 1 + max((depth(p) for p in v.parts), default=0)
    return 0


def join(parts) -> Val:
    out = []
    for p in parts:
        for q in (p.parts if isinstance(p, Join) else (p,)):
            if q not in out:
                out.append(q)
    if len(out) == 1:
        return out[0]
    return Join(tuple(out)) if out else V_UNKNOWN


# --- serialisation -------------------------------------------------------------------------------


def to_json(v: Val):
    t = v.tag
    if t == "k":
        return v.kind
    if t in ("sym", "ret", "self"):
        return [t, v.fields()[0]]
    if t == "param":
        return [t, v.fid, v.name]
    if t == "attr":
        return [t, to_json(v.base), v.name]
    if t == "elem":
        return [t, to_json(v.base), v.index]
    if t == "meth":
        return [t, to_json(v.base), v.name, v.hint]
    if t == "call":
        return [t, to_json(v.base)]
    if t == "named":
        return [t, to_json(v.base), v.name]
    if t == "arith":
        return [t, [to_json(p) for p in v.parts], v.op]
    return [t, [to_json(p) for p in v.parts]]  # join, tup


def from_json(j, ref=None) -> Val:
    """The value ``to_json`` wrote; ``ref`` maps every symbol reference (to make it absolute)."""
    if isinstance(j, str):
        return known(j)
    t = j[0]
    if t == "sym":
        return Sym(ref(j[1]) if ref else j[1])
    if t == "ret":
        return Ret(ref(j[1]) if ref else j[1])
    if t == "self":
        return Self(j[1])
    if t == "param":
        return Param(j[1], j[2])
    if t == "attr":
        return Attr(from_json(j[1], ref), j[2])
    if t == "elem":
        return Elem(from_json(j[1], ref), j[2])
    if t == "meth":
        return Meth(from_json(j[1], ref), j[2], j[3])
    if t == "call":
        return CallV(from_json(j[1], ref))
    if t == "named":
        return Named(from_json(j[1], ref), j[2])
    if t == "arith":
        return Arith(tuple(from_json(p, ref) for p in j[1]), j[2])
    if t == "join":
        return Join(tuple(from_json(p, ref) for p in j[1]))
    if t == "tup":
        return Tup(tuple(from_json(p, ref) for p in j[1]))
    raise ValueError(f"not a value: {j!r}")


def map_refs(v: Val, ref) -> Val:
    """``v`` with every symbol reference mapped by ``ref``."""
    return from_json(to_json(v), ref)


def leaves(v: Val):
    """The symbolic leaves of a value (what the project must answer)."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, (Sym, Ret, Param, Self)):
            yield x
        elif isinstance(x, (Attr, Elem, Meth, CallV, Named)):
            stack.append(x.base)
        elif isinstance(x, (Arith, Join, Tup)):
            stack.extend(x.parts)


# --- resolution ----------------------------------------------------------------------------------


class Env:
    """The leaves' meaning. Subclasses answer from the whole project or from its facts."""

    def sym(self, ref: str) -> R:
        return R(SYM, ref)

    def ret(self, ref: str) -> R:
        return R_UNKNOWN

    def param(self, fid: str, name: str) -> R:
        return R_UNKNOWN

    def instance(self, cls: str) -> R:
        return R(INST, cls)

    def attr(self, cls: str, name: str) -> R:
        return R_UNKNOWN

    def has_method(self, cls: str, name: str) -> bool:
        return False

    def meth(self, cls: str, name: str) -> R:
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
        if t == "param":
            return env.param(v.fid, v.name)
        if t == "self":
            return env.instance(v.cls)
        if t == "attr":
            return self._attr(self(v.base), v.name)
        if t == "elem":
            return self._elem(self(v.base), v.index)
        if t == "meth":
            got = self._meth(self(v.base), v.name, v.hint)
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
            if base.kind == UNKNOWN and isinstance(v.base, Param) and is_model_name(v.base.name):
                return r(TENSOR)  # `model(x)` with a model nobody in the project passes
            return R_UNKNOWN
        if t == "arith":
            return self._arith([self(p) for p in v.parts], v.op)
        if t == "join":
            return self._join([self(p) for p in v.parts])
        if t == "tup":
            return R(TUPLE, None, tuple(self(p) for p in v.parts))
        if t == "named":
            got = self(v.base)
            return got if got.kind != UNKNOWN else by_name(v.name)
        return R_UNKNOWN

    def _attr(self, base: R, name: str) -> R:
        k = base.kind
        if k in DEVICE_TENSORS or k == HOST:
            if name == "shape":
                return r(SIZE)
            if name in TENSOR_HOST_ATTRIBUTES or is_flag_name(name):
                return r(OTHER)
            if name in TENSOR_ATTRIBUTES:
                return r(HOST if k == HOST else TENSOR)
            # a model output object (`out.logits`, `out.loss`) or a tensor attribute
            return r(HOST if k == HOST else TENSOR)
        if k in (MODEL, INST) and base.ref:
            out = self.env.attr(base.ref, name)
            if out.kind != UNKNOWN:
                return out
        if k == MODEL and name == "module":
            return base  # DDP/FSDP wrappers: model.module is the model
        if k == SYM and base.ref:
            return self.env.sym(base.ref + "." + name)
        if k == OPTIMIZER and name in ("param_groups", "state"):
            return r(SEQ)
        if k in (MODEL, INST, UNKNOWN) and is_model_name(name):
            return r(MODEL)
        return R_UNKNOWN

    def _elem(self, base: R, index: Optional[int]) -> R:
        k = base.kind
        if k == TUPLE:
            if index is not None and -len(base.parts) <= index < len(base.parts):
                return base.parts[index]
            return self._join(list(base.parts))
        if k in DEVICE_TENSORS or k == HOST:
            return base
        if k == SIZE:
            return r(SCALAR)
        if k in (SEQ_TENSOR, LOADER, MLOADER):
            return r(TENSOR)  # a loader's batches count as tensors
        if k == MODEL:
            return base if base.ref is None else r(MODEL)  # ModuleList[i]
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
                return r(SEQ_TENSOR if hint == "args" else TENSOR)
            return r(out)
        if k == HOST:
            if name in ("to", "cuda"):
                return r(HOST) if hint in ("cpu", "dtype", "") and name == "to" else r(TENSOR)
            if name in ("item",):
                return r(SCALAR)
            if name in ("tolist",):
                return r(SEQ)
            return r(HOST)
        if k == MODEL:
            out = MODULE_METHODS.get(name)
            if out is not None:
                return base if out == MODEL else r(out)
            if base.ref:
                got = self.env.meth(base.ref, name)
                if got.kind != UNKNOWN or self.env.has_method(base.ref, name):
                    return got  # the project's own method: what it returns, even unknown
            if is_flag_name(name) or name.lstrip("_").startswith("get_"):
                return R_UNKNOWN  # model.is_training(), model._get_name()
            return r(TENSOR)  # model.decode(z), model.generate(...): outputs
        if k == INST and base.ref:
            return self.env.meth(base.ref, name)
        if k == OPTIMIZER:
            return r(NONE if name in ("step", "zero_grad") else OTHER)
        if k in (LOADER, MLOADER) and name in ("per_device_loader", "__iter__"):
            return r(MLOADER if name == "per_device_loader" else k)
        if k == SYM and base.ref:
            return self.env.ret(base.ref + "." + name)
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
            if len(name) > 2 and name.endswith("_") and not name.startswith("_") and hint != "cpu":
                return r(TENSOR)  # in-place ops (`exp_avg.mul_(beta1)`) are torch's convention
        return R_UNKNOWN

    @staticmethod
    def _arith(parts: list, op: str) -> R:
        kinds = {p.kind for p in parts}
        device = kinds & DEVICE_TENSORS
        if op == "num":
            return r(DATA) if device or DATA in kinds else r(SCALAR)
        if op == "torch":
            if device:
                return r(TENSOR)
            return r(HOST) if HOST in kinds else r(TENSOR)
        if op == "torchmask":
            return r(HOST) if HOST in kinds and not device else r(MASK)
        if device:
            return r(MASK if op == "cmp" or kinds <= {MASK} else TENSOR)
        if HOST in kinds:
            return r(HOST)
        if kinds and kinds <= {SCALAR, DATA, NONE, SIZE}:
            return r(SCALAR if op == "cmp" or DATA not in kinds else DATA)
        return R_UNKNOWN

    @staticmethod
    def _join(parts: list) -> R:
        real = [p for p in parts if p.kind not in (NONE, UNKNOWN)]
        if not real:
            return r(NONE) if parts and all(p.kind == NONE for p in parts) else R_UNKNOWN
        dev = [p for p in real if p.kind in DEVICE_TENSORS]
        if dev:
            return r(MASK) if all(p.kind == MASK for p in dev) else r(TENSOR)
        return real[0]


# a framework's device object moving a tensor (or a batch of them) onto the device
_TO_DEVICE = re.compile(r"^(?:tensor_|batch_|move_|send_)?to_device$")
# tensor methods that keep the dtype (a mask stays a mask)
_SAME_DTYPE = frozenset({"squeeze", "unsqueeze", "view", "reshape", "flatten", "t", "transpose", "permute",
                         "contiguous", "clone", "detach", "expand", "expand_as", "repeat", "cuda", "flip",
                         "roll", "narrow", "select", "index_select", "gather", "__invert__", "logical_not",
                         "view_as", "reshape_as", "squeeze_", "unsqueeze_"})

# methods only a module has (a tensor has none of them): an unknown receiver is a model
MODEL_ONLY_METHODS = frozenset({"eval", "train", "parameters", "named_parameters", "buffers", "named_buffers",
                                "modules", "named_modules", "children", "named_children", "state_dict",
                                "load_state_dict", "register_buffer", "register_parameter",
                                "register_forward_hook", "register_forward_pre_hook", "get_submodule"})


def _loader_by_name(name: str) -> R:
    """`build_dataloader()`, `self._iter_dataloader()`: what a function's name says it returns."""
    from hpulint.analysis.names import LOADER_NAME

    return r(LOADER) if LOADER_NAME.search(name) else R_UNKNOWN


def by_name(name: str) -> R:
    """What a value's name says when nothing else does: `model`, `train_loader`, `optimizer`."""
    from hpulint.analysis.names import LOADER_NAME, is_optimizer_name

    if is_model_name(name):
        return r(MODEL)
    if LOADER_NAME.search(name):
        return r(LOADER)
    if is_optimizer_name(name):
        return r(OPTIMIZER)
    return R_UNKNOWN


def is_device_tensor(res: R) -> bool:
    return res.kind in DEVICE_TENSORS
