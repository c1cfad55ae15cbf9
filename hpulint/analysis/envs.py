"""The environments that answer a value's leaves from the linked project (see
:class:`hpulint.analysis.resolve.Resolver`): :class:`GlobalEnv` follows parameters to the project's
call sites, :class:`ShallowEnv` knows parameters from their own uses only (for the link's first
pass, before call sites are classified)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from hpulint.analysis.names import STEP_HOOKS
from hpulint.analysis.resolve import Env, Resolver
from hpulint.analysis.values import (
    DEVICE_TENSORS, HOST, INST, LOADER, MLOADER, MODEL, NONE, R, R_UNKNOWN, SCALAR, SEQ, SEQ_TENSOR, SYM, TENSOR, TUPLE,
    UNKNOWN, LoaderAt, Marking, Param, Ret, Sym, Tup, Val, by_name,
    known, r,
)

if TYPE_CHECKING:
    from hpulint.analysis.project import Project


class GlobalEnv(Env):
    def __init__(self, project: Project) -> None:
        self.p = project

    def _resolve(self, v: Val) -> R:
        return self.p.resolve(v)

    def sym(self, ref: str) -> R:
        s = self.p.symbol(ref)
        if s is None:
            return R(SYM, ref)
        if s[0] == "val":
            return self._resolve(s[1])
        return R(SYM, s[1])

    def ret(self, ref: str) -> R:
        p = self.p
        s = p.symbol(ref)
        if s is None:
            return R_UNKNOWN
        if s[0] == "fn":
            mod, f = p.functions[s[1]]
            if f["ret"] is None:
                return r(NONE)
            return self._resolve(p.val(f["ret"], mod))
        if s[0] == "cls":
            return self.instance(s[1])
        return R_UNKNOWN

    def ret_of(self, ref: str, args: tuple, resolve) -> R:
        p = self.p
        s = p.symbol(ref)
        if s is None or s[0] != "fn" or not p.returns_params(s[1]):
            return self.ret(ref)
        return p.ret_with(s[1], tuple((k, resolve(a)) for k, a in args))

    def param(self, fid: str, name: str) -> R:
        p = self.p
        entry = p.functions.get(fid)
        if entry is None:
            return R_UNKNOWN
        f = entry[1]
        ev = f["evidence"].get(name)
        if ev == TENSOR:
            # `queries: torch.Tensor` that every caller in the project fills with a Python list
            # of tensors, `positions` every caller passes a CPU copy for: the callers say what
            # it holds
            got = self._from_callers(fid, name, every=_NOT_DEVICE)
            if got.kind == TUPLE and any(p.kind in DEVICE_TENSORS for p in got.parts):
                return r(ev)
            if got.kind == HOST and not _host_copies(self.p, self.p.passed(Param(fid, name), defaults=False)):
                return r(ev)  # (only a copy made for the host, not a factory that may get its device later)
            return got if got.kind in _NOT_DEVICE else r(ev)
        if ev == MODEL:
            # `model: torch.nn.Module` that the project's callers fill with its Transformer1d: the
            # callers say which class's methods `model.sampling(...)` runs
            got = self._from_callers(fid, name)
            return got if got.kind == MODEL and (got.ref or got.parts) else r(ev)
        if ev:
            return r(ev)
        got = self._from_callers(fid, name)
        if got.kind == UNKNOWN and _hook_batch(f, name) and not self.p.callers.get(fid):
            # `training_step(self, batch, batch_idx)`, a Trainer's `compute_loss(self, model,
            # inputs)`: the framework hands the hook each step's batch, moved to the device: its
            # items and fields are tensors, the batch itself a container (a dict or a tuple, whose
            # truth Python takes without the device)
            return r(SEQ_TENSOR)
        if got.kind == UNKNOWN and f["cls"] is None and ":" in fid and "." not in fid.split(":", 1)[1] \
                and fid not in self.p.callers and by_name(name).kind == UNKNOWN:
            got = self._from_siblings(entry[0], fid, name)
        return got if got.kind != UNKNOWN else by_name(name)

    def _from_siblings(self, mod: str, fid: str, name: str) -> R:
        """A module function nothing in the project calls (a library's public sampler): its
        parameter is a device tensor when the same-named parameter of the module's other
        functions is one, from their evidence or their callers, and never anything else
        (`sigmas` in every sampler of a sampling module)."""
        kinds = set()
        for other in self.p.modules[mod]["functions"]:
            if other == fid or len(kinds) > 1:
                continue
            f = self.p.functions[other][1]
            if name not in f["params"] or f["cls"] is not None:
                continue
            ev = f["evidence"].get(name)
            got = r(ev) if ev else self._from_callers(other, name)
            if got.kind != UNKNOWN:
                kinds.add(got.kind)
        return r(TENSOR) if kinds == {TENSOR} else R_UNKNOWN

    def _from_callers(self, fid: str, name: str, every: tuple = ()) -> R:
        """What the project's callers pass for ``name``, joined; with ``every``, unknown unless
        each of them passes one of those kinds."""
        vals = self.p.passed(Param(fid, name), defaults=False)
        if not vals:
            return R_UNKNOWN
        got = [self.p.resolve(v) for v in vals]
        if every and any(g.kind not in every for g in got):
            return R_UNKNOWN
        return Resolver._join(got)

    def instance(self, cls: str) -> R:
        return R(MODEL, cls) if self.p.is_model_class(cls) else R(INST, cls)

    def attr(self, cls: str, name: str) -> R:
        vals = self.p.class_attr(cls, name)
        if vals:
            parts = [self.p.resolve(v) for v in vals]
            if any(_moved_to_host(v) for v in vals) and not any(p.kind == MODEL for p in parts):
                # `self.sigmas = sigmas.to("cpu")` in one method: the class keeps it on the host
                # by design (diffusers' schedulers), whatever the other methods first built (a
                # module kept on the CPU, `self.vocoder = Vocoder().cpu()`, is still a module)
                return r(HOST)
            got = Resolver._join(parts)
            return got if got.kind != UNKNOWN else by_name(name)
        fid = self.p.method(cls, name)
        if fid and self.p.is_property(fid):
            return self.ret(fid)  # `self.model`, a property returning `self._model`
        return R(SYM, fid) if fid else by_name(name)

    def has_method(self, cls: str, name: str) -> bool:
        return self.p.method(cls, name) is not None

    def carried(self, fid: str, index: int, name: str, resolve) -> R:
        entry = self.p.functions.get(fid)
        j = entry[1].get("carried", {}).get(f"{index}:{name}") if entry else None
        return resolve(self.p.val(j, entry[0])) if j is not None else R_UNKNOWN

    def meth(self, cls: str, name: str) -> R:
        fid = self.p.method(cls, name)
        if fid is None:
            return R_UNKNOWN
        return self.ret(fid)


class ShallowEnv(GlobalEnv):
    """Like GlobalEnv, but parameters are known only from their own evidence."""

    def _resolve(self, v: Val) -> R:
        return self.p.shallow(v)

    def param(self, fid: str, name: str) -> R:
        entry = self.p.functions.get(fid)
        ev = entry[1]["evidence"].get(name) if entry else None
        return r(ev) if ev else R_UNKNOWN

    def ret_of(self, ref: str, args: tuple, resolve) -> R:
        return self.ret(ref)

    def attr(self, cls: str, name: str) -> R:
        vals = self.p.class_attr(cls, name)
        if vals:
            return Resolver._join([self.p.shallow(v) for v in vals])
        fid = self.p.method(cls, name)
        if fid and self.p.is_property(fid):
            return self.ret(fid)
        return R(SYM, fid) if fid else R_UNKNOWN


# what every caller may pass for a parameter annotated or used as a tensor to say it is not one
# (a Python list of tensors, a CPU copy, an int, a tuple of ints; not None: a join of None and
# a value not known, `batch_sizes = None` on one path and unpacked from a packed input on the
# other, resolves to None)
_NOT_DEVICE = (SEQ, SEQ_TENSOR, HOST, SCALAR, TUPLE)


def _moved_to_host(v: Val) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.to("cpu").float()`, `x.cpu()[idx]`: a value explicitly copied
    to the host, or such a copy plus a number (`positions_cpu + 1`)."""
    if v.tag == "arith":
        moved = [p for p in v.parts if _moved_to_host(p)]
        return bool(moved) and all(p in moved or (p.tag == "k" and p.kind == SCALAR) for p in v.parts)
    while v.tag in ("elem", "meth"):
        if v.tag == "meth":
            if v.name == "cpu" or (v.name == "to" and v.hint == "cpu"):
                return True
            if v.name not in _KEEPS_PLACE:
                return False
        v = v.base  # (`for b in boxes.cpu().split(1): decode(b.squeeze(0))`: pieces of the copy)
    return False


# methods whose result stays where the tensor is: casts, copies, views and pieces
_KEEPS_PLACE = frozenset({"float", "double", "half", "to", "contiguous", "detach", "clone", "numpy", "squeeze",
                          "unsqueeze", "split", "chunk", "unbind", "view", "reshape", "flatten", "permute",
                          "transpose", "narrow"})


def _host_copies(p, vals: list, depth: int = 0) -> bool:
    """Every value is a copy made for the host (`ids.to("cpu")`), also through the parameters
    that pass it on (`block(ids=ids)` in a forward() given the copy)."""
    if not vals:
        return False
    for v in vals:
        if _moved_to_host(v):
            continue
        if not (isinstance(v, Param) and depth < 3 and _host_copies(p, p.passed(v, defaults=False), depth + 1)):
            return False
    return True


def val_of(res: R) -> Val:
    """A value that resolves to ``res`` (a kind; a function or class keeps its reference)."""
    if res.parts:
        return Tup(tuple(val_of(p) for p in res.parts))
    if res.kind == SYM and res.ref:
        return Sym(res.ref)
    if res.kind in (MODEL, INST) and res.ref:
        return Ret(res.ref)  # an instance of that class
    if res.kind in (LOADER, MLOADER) and res.ref:
        # the loader a `DataLoader(...)` call made (its site kept, so the link can follow it)
        return LoaderAt(res.ref) if res.kind == LOADER else Marking(LoaderAt(res.ref))
    return known(res.kind)


def prefer(got: R, fallback: R) -> R:
    """``got``, with its unknown parts (all of it, or parts of a tuple) taken from ``fallback``."""
    if got.kind == UNKNOWN:
        return fallback
    if got.kind == TUPLE and fallback.kind == TUPLE and len(got.parts) == len(fallback.parts):
        return R(TUPLE, got.ref, tuple(prefer(a, b) for a, b in zip(got.parts, fallback.parts)))
    return got


def _hook_batch(f: dict, name: str) -> bool:
    """Is ``name`` the batch parameter of a framework's step hook (a method named like Lightning's
    or a Hugging Face Trainer's): the first after `self`, or after `model` (`compute_loss(self,
    model, inputs)`)?"""
    if f["cls"] is None or f["name"] not in STEP_HOOKS:
        return False
    params = [q for q in f["params"] if q not in ("self", "cls")]
    if params[:1] == ["model"]:
        params = params[1:]
    return params[:1] == [name]
