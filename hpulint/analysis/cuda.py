"""Code written for CUDA only, in a project that targets a lazy device (hpu, xla).

A repository of Gaudi or TPU models often keeps scripts and classes it never ported: a sampler
that moves its schedule to ``torch.device("cuda")``, an evaluation script that calls ``.cuda()``
on every input. Without Gaudi's GPU Migration toolkit (``import habana_frameworks.torch.gpu_migration``
in the model's script, which maps ``torch.cuda`` and ``device="cuda"`` to the hpu) such code
cannot run on the lazy device, so the lazy-mode rules stay quiet there.

Walk side (:func:`hard_wires_cuda`): a function *hard-wires CUDA* when it calls ``x.cuda()``,
``x.to("cuda")`` or ``x.to(torch.device("cuda"))`` on every path: not in a conditional
expression, and under no ``if`` but a type test (``if type(attr) == torch.Tensor:``) or
``if attr.device != torch.device("cuda"):``, which moves the value to CUDA whatever it was.
A move under any other test (``if use_gpu:``, ``if prev_t.size != 1:``) may be a branch the
lazy device never takes.

Link side (:func:`cuda_bound`): a function runs on CUDA only when it (or, for a method, any
method of its class: a sampler whose ``register_buffer`` moves every schedule tensor to CUDA)
hard-wires CUDA, its file has no hpu or xla evidence of its own, its model's folder (the
nearest folder with a ``requirements.txt``, ``setup.py``... up to the project root) holds Gaudi
code (a file with hpu evidence) and no file importing the GPU Migration toolkit, and no target
is configured (a configured target says the code runs there). On Gaudi the toolkit is how CUDA
code is meant to run (Intel's "GPU Migration Toolkit" page); a Gaudi model folder that does not
import it keeps its CUDA-only scripts as leftovers. A TPU port has no such switch, and its CUDA
trainer is often the code a user is porting: it stays checked.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Optional

import libcst as cst

from hpulint.analysis.guards import device_literal, device_predicate
from hpulint.analysis.syntax import keyword, one_line
from hpulint.index import MARKERS

MIGRATION = "habana_frameworks.torch.gpu_migration"


def hard_wires_cuda(an, node: cst.Call) -> Optional[str]:
    """The call's text when ``node`` moves a value to CUDA with nothing around it choosing the
    device (see the module docstring), else None."""
    func = node.func
    if type(func) is not cst.Attribute:
        return None
    name = func.attr.value
    if name == "cuda":
        if an.qualname(func.value) in ("torch", "torch.cuda"):
            return None
    elif name == "to":
        first = node.args[0].value if node.args and node.args[0].keyword is None else keyword(node, "device")
        if first is None or device_literal(first) != "cuda":  # "cuda", "cuda:0", `torch.device("cuda")`
            return None
    else:
        return None
    if an.ifexps:
        return None  # `x.cuda() if use_gpu else x`
    fn = an.function
    for b in an.if_branches[getattr(fn, "if_depth", 0):]:
        test = b.node.test
        dev = device_predicate(test)
        if dev is not None and dev == ("cuda", False) and b.in_body:
            continue  # `if attr.device != torch.device("cuda"): attr = attr.to(torch.device("cuda"))`
        if b.in_body and _type_test(test):
            continue  # `if type(attr) == torch.Tensor:`, `if isinstance(v, torch.Tensor):`
        return None  # a branch: it may not run on the device the project targets
    return one_line(node, 60)


def _type_test(test) -> bool:
    if type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "isinstance":
        return True
    return type(test) is cst.Comparison and type(test.left) is cst.Call and type(test.left.func) is cst.Name \
        and test.left.func.value == "type"


# --- link ------------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def model_folder(folder: str, root: str) -> str:
    """The nearest folder at or above ``folder`` holding a project marker, stopping at ``root``."""
    here = Path(folder)
    while True:
        if str(here) == root or any((here / m).exists() for m in MARKERS):
            return str(here)
        if here.parent == here:
            return root
        here = here.parent


def cuda_bound(project, configured_target: str) -> dict:
    """fid -> why it runs on CUDA only (see the module docstring)."""
    if configured_target not in ("auto", None, ""):
        return {}
    mods = project.modules
    if not any("hpu" in s.get("evidence", {}) for s in mods.values()):
        return {}
    wired = {fid: f.get("cuda") for fid, (_, f) in project.functions.items() if f.get("cuda")}
    if not wired:
        return {}
    paths = {mod: Path(s.get("path") or "").resolve() for mod, s in mods.items() if s.get("path")}
    if not paths:
        return {}
    root = _common(paths.values())
    migrated = {model_folder(str(paths[mod].parent), root) for mod, s in mods.items()
                if "gpu-migration" in s.get("evidence", {}) and mod in paths}
    gaudi = {model_folder(str(paths[mod].parent), root) for mod, s in mods.items()
             if "hpu" in s.get("evidence", {}) and mod in paths}
    by_class = {}
    for cid, (_, c) in project.classes.items():
        got = next(((f, wired[f]) for f in c["methods"].values() if f in wired), None)
        if got is not None:
            for f in c["methods"].values():
                by_class[f] = got
    out = {}
    for fid, (mod, f) in project.functions.items():
        got = (fid, wired[fid]) if fid in wired else by_class.get(fid)
        if got is None or mod not in paths:
            continue
        ev = mods[mod].get("evidence", {})
        folder = model_folder(str(paths[mod].parent), root)
        if "hpu" in ev or "xla" in ev or folder in migrated or folder not in gaudi:
            continue
        where = project.functions[got[0]][1]["name"]
        out[fid] = f"`{got[1]}` in {where}() puts it on CUDA, and nothing in its folder imports {MIGRATION}"
    if out:  # and the functions defined inside those (`def get_x_prev(e_t, index):` in a sampler's step)
        for fid in project.functions:
            if fid in out or ":" not in fid:
                continue
            mod, qual = fid.split(":", 1)
            parts = qual.split(".")
            outer = next((f"{mod}:{'.'.join(parts[:k])}" for k in range(len(parts) - 1, 0, -1)
                          if f"{mod}:{'.'.join(parts[:k])}" in out), None)
            if outer is not None:
                out[fid] = out[outer]
    return out


def _common(paths) -> str:
    folders = [str(p.parent) for p in paths]
    return os.path.commonpath(folders) if folders else "/"
