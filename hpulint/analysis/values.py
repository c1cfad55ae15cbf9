"""Values: what an expression holds (a tensor, a host value, a model...), as a small lattice.

While a file is walked, every expression the rules ask about becomes a :class:`Val`: either a
known kind (``K``) or a symbolic value whose meaning comes from elsewhere in the project: what a
function returns (``Ret``), a parameter (``Param``, inferred from how it is used and from its call
sites), an attribute of an instance of a project class (``Attr`` of ``Self``), an element
(``Elem``), a method's result (``Meth``), arithmetic (``Arith``) or a join of branches (``Join``).
Values are immutable and serialisable (:mod:`hpulint.analysis.value_json`), so a file's summary
can carry them to the project link step, which resolves them across files.

:class:`Resolver` turns a value into a resolved :class:`R` (kind, class, tuple parts) through an
*environment* that answers the leaves: symbols, returns, parameters, class attributes and
methods. The same resolver runs in the link step (over every summary) and in a file's own
evaluation (through the project facts), so a value means the same thing in both.
"""
from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple, Optional

from hpulint.analysis.names import LOADER_NAME, is_model_name, is_optimizer_name

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
LOSS = "loss"  # a loss module (`nn.BCEWithLogitsLoss()`): called, it gives a tensor; it runs no model
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
CHOICE = "choice"  # the ref of an OTHER that is a table of functions (its parts: their symbols)


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
    """A value the analysis tracks: immutable once made (its hash is kept after the first use:
    values nest, and hashing one hashed every value inside it again)."""

    __slots__ = ("_hash", "_size")
    tag = ""
    _get = staticmethod(lambda v: ())  # the fields' getter, made for each subclass below

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        names = cls.__dict__.get("__slots__", ())
        if len(names) == 1:
            name = names[0]
            cls._get = staticmethod(lambda v: (getattr(v, name),))
        elif names:
            cls._get = staticmethod(attrgetter(*names))

    def fields(self) -> tuple:
        return self._get(self)

    def __eq__(self, other) -> bool:
        return self is other or (type(self) is type(other) and self.fields() == other.fields())

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            pass
        h = self._hash = hash((self.tag, self.fields()))
        return h

    def __reduce__(self):
        # not the kept hash: a string's hash differs from one process to another
        return type(self), self.fields()

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


class RetOf(Val):
    """What calling the function ``ref`` with these arguments returns: ``args`` holds (position or
    keyword, value) pairs. It differs from :class:`Ret` for a function that returns one of its
    parameters (``default(val, d)``): each call gets its own arguments back, not the join of every
    caller's."""

    __slots__ = ("ref", "args")
    tag = "retof"

    def __init__(self, ref: str, args: tuple) -> None:
        self.ref = ref
        self.args = args


def substitute(v: Val, fid: str, mapping: dict) -> Val:
    """``v`` with the parameters of function ``fid`` named in ``mapping`` replaced by its values."""
    if type(v) is Param:
        return mapping.get(v.name, v) if v.fid == fid else v
    fields = v.fields()
    if not any(isinstance(f, (Val, tuple)) for f in fields):
        return v
    new = tuple(_substitute_field(f, fid, mapping) for f in fields)
    return v if new == fields else type(v)(*new)


def _substitute_field(f, fid: str, mapping: dict):
    if isinstance(f, Val):
        return substitute(f, fid, mapping)
    if isinstance(f, tuple):
        return tuple(_substitute_field(x, fid, mapping) for x in f)
    return f


class Param(Val):
    __slots__ = ("fid", "name")
    tag = "param"

    def __init__(self, fid: str, name: str) -> None:
        self.fid = fid
        self.name = name


class Carried(Val):
    """What ``name`` holds at the top of a pass of loop ``index`` of function ``fid`` after the
    first: the value the body left in it (``code = None`` before a decoding loop whose body
    ends with ``code = torch.cat([code, idx], 1)``). The function's summary keeps that value."""

    __slots__ = ("fid", "index", "name")
    tag = "carried"

    def __init__(self, fid: str, index: int, name: str) -> None:
        self.fid = fid
        self.index = index
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
    device when a part is a device tensor), "invert" (``~m``: a mask when ``m`` is a device tensor)."""

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


class Used(Val):
    """A value of unknown origin whose uses say what it is (``sigmas`` from a configured object,
    then ``torch.sqrt(1 + sigmas[0] ** 2)``): ``kind`` decides when nothing else does."""

    __slots__ = ("base", "kind")
    tag = "used"

    def __init__(self, base: Val, kind: str) -> None:
        self.base = base
        self.kind = kind


class Choice(Val):
    """A dict of functions, one picked by a key (``{"heun": sample_heun, ...}[name]``): a call
    of the pick may run any of them."""

    __slots__ = ("parts",)
    tag = "choice"

    def __init__(self, parts: tuple) -> None:
        self.parts = parts


class LoaderAt(Val):
    """The data loader a `DataLoader(...)` call makes: ``site`` names the call (``module#n``, the
    n-th loader the file makes), so the link step can tell which loader a loop iterates, across
    files (see ``Linked.fed_loaders``)."""

    __slots__ = ("site",)
    tag = "loaderat"

    def __init__(self, site: str) -> None:
        self.site = site


class Marking(Val):
    """A loader that marks a step per batch (`MpDeviceLoader(loader, device)`,
    `ParallelLoader(...)`) wrapping ``base``: the loader it wraps, when known, is its site."""

    __slots__ = ("base",)
    tag = "marking"

    def __init__(self, base: Val) -> None:
        self.base = base


class HostBatch(Val):
    """A loop's batch, ``base``, when the loop's body moves parts of it to the device: host
    tensors, unless what the loop iterates is a marking loader after all (one its callers pass
    in). See :mod:`hpulint.analysis.host_batches`."""

    __slots__ = ("base",)
    tag = "hostbatch"

    def __init__(self, base: Val) -> None:
        self.base = base


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
V_LOSS = known(LOSS)
V_OPTIMIZER = known(OPTIMIZER)
V_LOADER = known(LOADER)
V_MLOADER = known(MLOADER)
V_OTHER = known(OTHER)
V_NONE = known(NONE)
V_UNKNOWN = known(UNKNOWN)

MAX_SIZE = 50_000  # a value bigger than this written out as a tree is not followed (see `size`)


def size(v: Val) -> int:
    """How many values ``v`` holds written out as a tree, shared parts counted each time they
    occur (up to ``MAX_SIZE + 1``: kept on the value after the first call). Values share their
    parts, so branches that each extend a name (``if a: cfg += [...]``, twenty times over) make a
    value whose tree doubles with every branch; the walker does not bind one that is too big (see
    ``Walker._bind``), so a value, its summary and its resolution stay small."""
    try:
        return v._size
    except AttributeError:
        pass
    n = 1
    for kid in _kids(v):
        n += size(kid)
        if n > MAX_SIZE:
            break
    n = v._size = min(n, MAX_SIZE + 1)
    return n


def _kids(v: Val) -> tuple:
    if isinstance(v, (Attr, Elem, Meth, CallV, Named, Used, Marking, HostBatch)):
        return (v.base,)
    if isinstance(v, (Arith, Join, Tup, Choice)):
        return v.parts
    if type(v) is RetOf:
        return tuple(a for _, a in v.args)
    return ()


def join(parts) -> Val:
    out = []
    for p in parts:
        for q in (p.parts if isinstance(p, Join) else (p,)):
            if q not in out:
                out.append(q)
    if len(out) == 1:
        return out[0]
    return Join(tuple(out)) if out else V_UNKNOWN


def leaves(v: Val):
    """The symbolic leaves of a value (what the project must answer)."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, (Sym, Ret, Param, Self, Carried)):
            yield x
        elif isinstance(x, (Attr, Elem, Meth, CallV, Named, Used, Marking, HostBatch)):
            stack.append(x.base)
        elif isinstance(x, (Arith, Join, Tup, Choice)):
            stack.extend(x.parts)


def by_name(name: str) -> R:
    """What a value's name says when nothing else does: `model`, `train_loader`, `optimizer`."""
    if is_model_name(name):
        return r(MODEL)
    if LOADER_NAME.search(name):
        return r(LOADER)
    if is_optimizer_name(name):
        return r(OPTIMIZER)
    return R_UNKNOWN


def is_marking(v: Val) -> bool:
    """A marking loader's value (`MpDeviceLoader(...)`, or one bound to a name)."""
    while type(v) is Named:
        v = v.base
    return v is V_MLOADER or type(v) is Marking


def is_device_tensor(res: R) -> bool:
    return res.kind in DEVICE_TENSORS
