"""Values written as JSON for the summaries (and read back, their references made absolute)."""
from __future__ import annotations

from hpulint.analysis.values import (
    Arith, Attr, CallV, Carried, Choice, Elem, HostBatch, Join, LoaderAt, Marking, Meth, Named, Param, Ret, RetOf, Self, Sym, Tup,
    Used, Val, known,
)


def to_json(v: Val):
    t = v.tag
    if t == "k":
        return v.kind
    if t in ("sym", "ret", "self", "loaderat"):
        return [t, v.fields()[0]]
    if t == "param":
        return [t, v.fid, v.name]
    if t == "carried":
        return [t, v.fid, v.index, v.name]
    if t == "attr":
        return [t, to_json(v.base), v.name]
    if t == "elem":
        return [t, to_json(v.base), v.index]
    if t == "meth":
        return [t, to_json(v.base), v.name, v.hint]
    if t in ("call", "marking", "hostbatch"):
        return [t, to_json(v.base)]
    if t == "named":
        return [t, to_json(v.base), v.name]
    if t == "used":
        return [t, to_json(v.base), v.kind]
    if t == "arith":
        return [t, [to_json(p) for p in v.parts], v.op]
    if t == "retof":
        return [t, v.ref, [[k, to_json(a)] for k, a in v.args]]
    return [t, [to_json(p) for p in v.parts]]  # join, tup, choice


def from_json(j, ref=None) -> Val:
    """The value ``to_json`` wrote; ``ref`` maps every symbol reference (to make it absolute)."""
    if isinstance(j, str):
        return known(j)
    t = j[0]
    if t == "sym":
        return Sym(ref(j[1]) if ref else j[1])
    if t == "ret":
        return Ret(ref(j[1]) if ref else j[1])
    if t == "retof":
        return RetOf(ref(j[1]) if ref else j[1], tuple((k, from_json(a, ref)) for k, a in j[2]))
    if t == "self":
        return Self(j[1])
    if t == "loaderat":
        return LoaderAt(j[1])
    if t == "param":
        return Param(j[1], j[2])
    if t == "carried":
        return Carried(j[1], j[2], j[3])
    if t == "attr":
        return Attr(from_json(j[1], ref), j[2])
    if t == "elem":
        return Elem(from_json(j[1], ref), j[2])
    if t == "meth":
        return Meth(from_json(j[1], ref), j[2], j[3])
    if t == "call":
        return CallV(from_json(j[1], ref))
    if t == "marking":
        return Marking(from_json(j[1], ref))
    if t == "hostbatch":
        return HostBatch(from_json(j[1], ref))
    if t == "named":
        return Named(from_json(j[1], ref), j[2])
    if t == "used":
        return Used(from_json(j[1], ref), j[2])
    if t == "arith":
        return Arith(tuple(from_json(p, ref) for p in j[1]), j[2])
    if t == "join":
        return Join(tuple(from_json(p, ref) for p in j[1]))
    if t == "tup":
        return Tup(tuple(from_json(p, ref) for p in j[1]))
    if t == "choice":
        return Choice(tuple(from_json(p, ref) for p in j[1]))
    raise ValueError(f"not a value: {j!r}")


def map_refs(v: Val, ref) -> Val:
    """``v`` with every symbol reference mapped by ``ref``."""
    return from_json(to_json(v), ref)
