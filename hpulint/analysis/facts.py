"""One file's window onto the linked project: every question it asks, and the answers it got.

A file's rules read project facts only through :class:`FileFacts`. Each question is a small
tuple key and each answer plain data, and every pair is recorded: the cache keeps them with the
file's findings, and a later run reuses those findings as long as the same questions get the
same answers (whatever changed elsewhere in the project), without parsing the file again.
"""
from __future__ import annotations

import json
from typing import Optional

from hpulint.analysis.resolve import Env
from hpulint.analysis.values import R, R_UNKNOWN


def r_to_data(res: R):
    return [res.kind, res.ref, [r_to_data(p) for p in res.parts]] if res.parts else [res.kind, res.ref]


def r_from_data(d) -> R:
    return R(d[0], d[1], tuple(r_from_data(p) for p in d[2]) if len(d) > 2 else ())


class FileFacts:
    def __init__(self, linked, module: str) -> None:
        self.linked = linked
        self.module = module
        self.asked: dict = {}  # key -> answer (data)

    def ask(self, key: tuple):
        hit = self.asked.get(key, self)
        if hit is not self:
            return hit
        answer = answer_for(self.linked, key)
        self.asked[key] = answer
        return answer

    def records(self) -> list:
        return [[list(k), v] for k, v in self.asked.items()]


def answer_for(linked, key: tuple):
    """The answer to one question, as plain data (also used to re-check cached records)."""
    kind = key[0]
    p = linked.project
    if kind == "sym":
        return r_to_data(p.env.sym(p.absolute(key[2], key[1])))
    if kind == "ret":
        return r_to_data(p.env.ret(p.absolute(key[2], key[1])))
    if kind == "param":
        return r_to_data(p.resolve(_param(key[1], key[2])))
    if kind == "returns-params":
        s = p.symbol(p.absolute(key[2], key[1]))
        return bool(s is not None and s[0] == "fn" and p.returns_params(s[1]))
    if kind == "retof":
        s = p.symbol(p.absolute(key[2], key[1]))
        args = tuple((k, r_from_data(d)) for k, d in json.loads(key[3]))
        return r_to_data(p.ret_with(s[1], args))
    if kind == "inst":
        return r_to_data(p.env.instance(key[1]))
    if kind == "attr":
        return r_to_data(p.env.attr(key[1], key[2]))
    if kind == "meth":
        return r_to_data(p.env.meth(key[1], key[2]))
    if kind == "off-flag":
        return key[1] in p.off_flags
    if kind == "has-meth":
        return p.method(key[1], key[2]) is not None
    if kind == "call":  # what the k-th call of a function calls: [[kind, fid, shift]...]
        targets = linked.call_targets.get(key[1], [])
        return [list(t) for t in targets[key[2]]] if key[2] < len(targets) else []
    if kind == "callee":  # a project function's parameters and those that index a device tensor
        entry = p.functions.get(key[1])
        if entry is None:
            return None
        return {"name": entry[1]["name"], "params": entry[1]["params"],
                "index_params": linked.tensor_index_params(key[1]), "path": p.modules[entry[0]].get("path"),
                "disabled": p.disabled(key[1]), "host_read": entry[1].get("host_read")}
    if kind == "fn":
        fid = key[1]
        target = linked.targets.get(fid)
        return {
            "hot": linked.hot.get(fid) or linked.body_hot.get(fid),
            "steps": linked.steps.get(fid),
            "model": linked.calls_model.get(fid),
            "compiled": linked.compiled.get(fid),
            "eager": linked.eager.get(fid),
            "cuda": linked.cuda_only.get(fid),
            "optional": fid in linked.compiled and fid not in linked.compiled_unconditionally,
            "target": list(target) if target else None,
            "counters": dict(sorted(linked.counter_params.get(fid, {}).items())),
            "fed": dict(sorted(linked.fed_params.get(fid, {}).items())),
        }
    if kind == "loop":
        return linked.step_loops.get((key[1], key[2]))
    if kind == "step-flag":  # `self.should_print` set True by a method that runs every step
        return p.step_flag(linked, key[1], key[2])
    if kind == "counter-attr":
        return p.counter_attr(key[1], key[2])
    if kind == "counter-attr-named":  # a project class named like the object counts the attribute
        return any(p.counter_attr(cid, key[2]) == key[2] for cid in p.classes_named_like(key[1]))
    if kind == "loader-fed":  # a training step loop iterates this DataLoader(...) call's loader
        return linked.fed_loaders().get(key[1])
    if kind == "train":
        return linked.training_facts(key[1], key[2])
    if kind == "trains":  # a training step may run this function (see analysis.outputs)
        from hpulint.analysis.training import reached_by_training

        return reached_by_training(linked, key[1])
    if kind == "never-given":  # no project caller gives this None/False-default parameter
        return bool(p.never_given(key[1], key[2]))
    raise KeyError(f"unknown question {key!r}")


def _param(fid: str, name: str):
    from hpulint.analysis.values import Param

    return Param(fid, name)


class FileEnv(Env):
    """Values' leaves for one file, answered by the project through :class:`FileFacts`."""

    def __init__(self, facts: FileFacts, carried: Optional[dict] = None) -> None:
        self.facts = facts
        self.carried_vals = carried or {}  # (fid, loop index, name) -> Val (this file's loops)

    def carried(self, fid: str, index: int, name: str, resolve) -> R:
        v = self.carried_vals.get((fid, index, name))
        return resolve(v) if v is not None else R_UNKNOWN

    def _q(self, key: tuple) -> R:
        return r_from_data(self.facts.ask(key))

    def sym(self, ref: str) -> R:
        return self._q(("sym", self.facts.module, ref))

    def ret(self, ref: str) -> R:
        return self._q(("ret", self.facts.module, ref))

    def param(self, fid: str, name: str) -> R:
        return self._q(("param", fid, name))

    def ret_of(self, ref: str, args: tuple, resolve) -> R:
        if not self.facts.ask(("returns-params", self.facts.module, ref)):
            return self.ret(ref)
        data = json.dumps([[k, r_to_data(resolve(a))] for k, a in args])
        return self._q(("retof", self.facts.module, ref, data))

    def instance(self, cls: str) -> R:
        return self._q(("inst", cls))

    def attr(self, cls: str, name: str) -> R:
        return self._q(("attr", cls, name))

    def meth(self, cls: str, name: str) -> R:
        return self._q(("meth", cls, name))

    def has_method(self, cls: str, name: str) -> bool:
        return bool(self.facts.ask(("has-meth", cls, name)))


def still_valid(linked, records: list) -> bool:
    """Whether every recorded question gets the same answer from ``linked``."""
    for key, answer in records:
        try:
            if answer_for(linked, tuple(key)) != answer:
                return False
        except Exception:
            return False
    return True

