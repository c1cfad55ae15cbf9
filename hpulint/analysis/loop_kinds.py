"""Questions the link step asks of a loop before it calls it a step loop: does it sample (a
decoding or denoising run inside code a forward() runs), does it number a model's modules
(each pass one of them, the same set every step), does it run a module's own layers."""
from __future__ import annotations

import re

from hpulint.analysis.names import is_model_name
from hpulint.analysis.values import LOADER, MLOADER, MODEL, TUPLE

# a function or class whose loop is a sampling or decoding run (`p_sample_loop_ddim`, `_generate`,
# `EDMSampler.__call__`, `SequenceGenerator`)
_SAMPLING = re.compile(r"sampl|generat|denois|beam_search|greedy", re.I)


def samples(project, info: dict, f: dict, it) -> bool:
    """A sampling or decoding loop in code a model's forward() runs (a generator module whose
    forward() calls its `_generate()`, a pipeline model whose forward() samples): each pass
    feeds the last pass's output back and shows progress, or the function (or its class) is named
    for sampling. Its passes are steps, not layers unrolled into one graph."""
    if not info["carried"] or holds_modules(it):
        return False  # (`for block in self.blocks: h = block(h)`: a layer loop)
    cls = project.classes.get(f.get("cls") or "")
    names = f["name"] + " " + (cls[1]["name"] if cls is not None else "")
    return bool(info.get("progress")) or bool(_SAMPLING.search(names))


def numbers_models(project, fid: str, info: dict) -> bool:
    """`for k in range(len(decoder.unets))`, `range(1, trainer.num_unets + 1)`: the counter
    numbers a collection of modules, by its value or by its name."""
    j = info.get("len_of")
    if j is None:
        return False
    v = project.val(j, project.functions[fid][0])
    name = v.name.split("_", 1)[1] if v.tag == "attr" and v.name.startswith(("num_", "n_")) else \
        v.name if v.tag == "attr" else ""
    if name.endswith("s") and is_model_name(name[:-1]):
        return True
    return project.resolve(v).kind == MODEL


def holds_modules(it) -> bool:
    """The iterable is modules: a module container, or a list of modules (`self.blocks = [Block()
    ...]` that is also wrapped in `nn.Sequential(*self.blocks)`)."""
    return it is not None and (it.kind == MODEL or (
        it.kind == TUPLE and bool(it.parts) and all(p.kind == MODEL for p in it.parts)))


def runs_own_layers(project, f: dict, info: dict, own: list, it) -> bool:
    """`for i in range(cfg.hc_mult): key = self.key_projs[i](emb)` in a method of a module, with
    nothing carried from one pass to the next: each pass runs layers of the module itself, the
    same ones on every call (unrolled into one graph), so a pass is not a step. (A loop over a
    loader, or one that feeds its output back, as a module's `generate()` does, is not this.)"""
    if info["carried"] or info.get("yields") or (it is not None and it.kind in (LOADER, MLOADER)):
        return False
    cls = f.get("cls")
    if cls is None or not project.is_model_class(cls):
        return False
    calls = [(c, callee) for _, c, _, _, _, _, callee, *_ in own if c is not None]
    # (layers called as modules: `self._model_call(x)`, a method, may run the whole model)
    return bool(calls) and all(c[0] == "model" and _of_self(v) for c, v in calls)


def _of_self(v) -> bool:
    """`self.key_projs[i]`, `self.blocks`, `self.norm`: a module the object holds (not `self`)."""
    if v is None or v.tag not in ("attr", "elem"):
        return False
    while v.tag in ("attr", "elem"):
        v = v.base
    return v.tag == "self"
