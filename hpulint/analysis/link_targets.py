"""The link's facts about where code runs (a mixin of :class:`hpulint.analysis.link.Linked`):
each function's device target (hpu, xla) and its evidence, which functions a `torch.compile`
compiles (decorated, wrapped, a compiled module's `forward`, and what they call), and which run
eagerly next to compiled code rather than in lazy mode. See docs/analysis.md, "Targets".
"""
from __future__ import annotations

from hpulint.analysis.values import INST, MODEL, SYM



# `nn.Module.compile()` compiles torch's own `self._call_impl`: Dynamo does not trace torch's module
# machinery as user code (measured on 2.13: a Linear with a backward hook, compiled that way and
# called twice, records no graph and no break), so what it calls is no compiled region of the
# project (only met when linting torch itself)
TORCH_CALL_MACHINERY = frozenset({"_call_impl", "_wrapped_call_impl"})

class TargetsAndRegions:
    """Fills ``targets``, ``compiled``, ``compiled_in``, ``always_compiled``,
    ``compiled_unconditionally`` and ``eager`` of the
    linked project (the attributes and ``sites``/``where`` come from the class it is mixed into)."""

    def _targets(self) -> None:
        p = self.project
        todo = []
        for fid, (mod, f) in p.functions.items():
            ev = p.modules[mod].get("evidence", {})
            for t in ("hpu", "xla"):
                if t in ev:
                    path = p.modules[mod].get("path") or mod
                    self.targets[fid] = (t, f"{path} {ev[t]}")
                    todo.append(fid)
                    break
        todo += self._device_getter_callers()
        while todo:
            fid = todo.pop()
            target, evidence = self.targets[fid]
            for loop, cls, args, kwargs, tainted, deferred, callee, _ in self.sites[fid]:
                if cls is None or cls[1] is None or cls[1] in self.targets:
                    continue
                self.targets[cls[1]] = (target, f"{evidence}, and {self.where(fid)} calls it"
                                        if "calls it" not in evidence else evidence)
                todo.append(cls[1])
        # a model's methods run where its forward runs; a class's methods where its __init__ does
        for cid, (mod, c) in p.classes.items():
            known = [self.targets[f] for f in c["methods"].values() if f in self.targets]
            if known:
                for f in c["methods"].values():
                    self.targets.setdefault(f, known[0])

    def _device_getter_callers(self) -> list:
        """`device = get_device()` where `utils.get_device` returns `xm.xla_device()` (its file
        imports torch_xla): the caller runs on that device too, whatever its own file imports."""
        p = self.project
        getters = {fid for fid, (mod, f) in p.functions.items()
                   if fid in self.targets and f["ret"] is not None and _device_call(f["ret"])}
        out = []
        if not getters:
            return out
        for fid in p.functions:
            if fid in self.targets:
                continue
            got = next((cls[1] for _, cls, *_ in self.sites[fid] if cls is not None and cls[1] in getters), None)
            if got is not None:
                target, evidence = self.targets[got]
                self.targets[fid] = (target, f"{evidence}, and {self.where(fid)} gets its device from "
                                             f"{p.functions[got][1]['name']}()")
                out.append(fid)
        return out

    # --- compiled regions ----------------------------------------------------------------

    def _compiled(self) -> None:
        p = self.project
        todo = []
        for fid, (mod, f) in p.functions.items():
            dec = next((d for d in f["decorators"] if d == "torch.compile" or d.endswith("torch_xla.compile")), None)
            if dec is not None:
                self.compiled[fid] = f"@{'torch_xla.compile' if dec != 'torch.compile' else dec} on {f['name']}()"
                self.compiled_unconditionally.add(fid)
                todo.append(fid)
        for mod, s in p.modules.items():
            for j, how, optional in s.get("compiled", ()):
                v = p.resolve(p.val(j, mod))
                fids = []
                if v.kind == SYM and v.ref in p.functions:
                    fids = [v.ref]
                elif v.kind in (MODEL, INST) and v.ref:
                    fids = [x for x in (p.method(v.ref, "forward"), p.method(v.ref, "__call__")) if x]
                elif v.kind == MODEL:
                    fids = p.held_forwards(v)  # a compiled nn.Sequential runs its modules' forward
                for fid in fids:
                    if p.functions[fid][1]["name"] in TORCH_CALL_MACHINERY:
                        continue  # (torch's own `Module.compile()`: see TORCH_CALL_MACHINERY)
                    if not optional:
                        self.always_compiled.add(fid)
                        self.compiled_unconditionally.add(fid)
                    if fid not in self.compiled:
                        self.compiled[fid] = f"compiled with {how}"
                        self.compiled_in[fid] = set()
                        todo.append(fid)
                    if fid in self.compiled_in:  # (not when a decorator compiles it everywhere)
                        self.compiled_in[fid].add(mod)
                if v.kind == MODEL:
                    todo += self._swapped_in(mod, s, how, optional)
        always = list(self.compiled_unconditionally)
        while todo:
            fid = todo.pop()
            for _, cls, *_ in self.sites[fid]:
                # a `torch.compiler.disable`d function runs eagerly (the call is a graph break)
                if cls is not None and cls[1] is not None and cls[1] not in self.compiled \
                        and not p.disabled(cls[1]):
                    self.compiled[cls[1]] = self.reached_from(fid, cls[1], "the compiled ")
                    if fid in self.compiled_in:
                        self.compiled_in[cls[1]] = self.compiled_in[fid]
                    todo.append(cls[1])
        # what only an optional compile reaches (`if compile_optimizer_step: self.optimizer.step =
        # torch.compile(...)`) also runs uncompiled, in lazy mode when the option is off
        while always:
            fid = always.pop()
            for _, cls, *_ in self.sites[fid]:
                if cls is not None and cls[1] in self.compiled and cls[1] not in self.compiled_unconditionally:
                    self.compiled_unconditionally.add(cls[1])
                    always.append(cls[1])

    def _swapped_in(self, mod: str, s: dict, how: str, optional: bool) -> list:
        """The forwards of project modules the file swaps into a module with `setattr(model, name,
        QLinear(mod))` (quantization, LoRA injection), next to a compiled model: the compiled
        model runs them in place of the layers they replace."""
        p = self.project
        out = []
        for j, where in s.get("swapped", ()):
            got = p.resolve(p.val(j, mod))
            fid = p.method(got.ref, "forward") if got.kind == MODEL and got.ref else None
            if fid is None or fid in self.compiled or p.functions[fid][1]["name"] in TORCH_CALL_MACHINERY:
                continue
            self.compiled[fid] = f"compiled with {how} (swapped into the model with `setattr` in {where}())"
            self.compiled_in[fid] = {mod}
            if not optional:
                self.always_compiled.add(fid)
                self.compiled_unconditionally.add(fid)
            out.append(fid)
        return out

    def _lazy_module(self, mod: str) -> bool:
        """The module marks lazy steps (mark_step...) or sets PT_HPU_LAZY_MODE=1."""
        p = self.project
        if "lazy" in p.modules[mod].get("evidence", {}):
            return True
        ev = p.modules[mod].get("evidence", {})
        if "hpu-compile" in ev and "compile-optional" not in ev:
            # compiled with hpu_backend, always: eager mode, its mark_step calls are no-ops (not a
            # script that compiles only under a flag and otherwise marks its steps in lazy mode)
            return False
        for fid in p.modules[mod].get("functions", ()):
            f = p.functions.get(fid, (None, None))[1]
            if f and ("marks a step" in f["marks"] or any("marks a step" in lp["marks"] for lp in f["loops"])):
                return True
        return False

    def _eager(self) -> None:
        """Functions outside compiled regions that run in eager mode (not lazy mode): their file
        uses torch.compile (or sets PT_HPU_LAZY_MODE=0, or the configuration says target
        "compile") and never marks a lazy step; or they call a compiled function; and what they
        call."""
        if self.configured_target in ("hpu", "xla"):
            return
        p = self.project
        lazy = {mod: self._lazy_module(mod) for mod in p.modules}
        todo = []
        for fid, (mod, f) in p.functions.items():
            if fid in self.compiled or lazy[mod]:
                continue
            ev = p.modules[mod].get("evidence", {})
            path = p.modules[mod].get("path") or mod
            why = None
            if "imports torch_xla" in ev.get("xla", "") and "eager" not in ev \
                    and self.configured_target != "compile":
                # on an XLA device the code around a compiled function still records lazily
                # (unless PyTorch/XLA's eager mode is on): its host reads wait for a graph
                continue
            if self.configured_target == "compile":
                why = 'target = "compile" in the configuration'
            elif "eager" in ev:
                why = f"{path} {ev['eager']}"
            elif "hpu-compile" in ev and "compile-optional" not in ev:
                why = f"{path} {ev['hpu-compile']}"
            elif "compile" in ev:
                why = f"{path} {ev['compile']} and never marks a lazy step"
            else:
                # a module's forward compiled by `torch.compile(model)` in another script is
                # not compiled here: only that script calls the compiled wrapper
                # (`if compile: next_token = torch.compile(next_token)` leaves the lazy path)
                callee = next((cls[1] for _, cls, *_ in self.sites[fid]
                               if cls is not None and cls[1] in self.compiled
                               and mod in self.compiled_in.get(cls[1], (mod,))
                               and (cls[1] not in self.compiled_in or cls[1] in self.always_compiled)), None)
                if callee is not None:
                    why = f"it calls the compiled {self.where(callee)}"
            if why:
                self.eager[fid] = why
                todo.append(fid)
        while todo:
            fid = todo.pop()
            for _, cls, *_ in self.sites[fid]:
                g = cls[1] if cls is not None else None
                if g is None or g in self.compiled or g in self.eager or g not in p.functions \
                        or lazy[p.functions[g][0]]:
                    continue
                self.eager[g] = f"called from {self.where(fid)}, which runs eagerly"
                todo.append(g)
        if not self.eager:
            return
        # a helper both an eager script and a lazy one call (`compute_loss_with_mask` from
        # `train_hf.py` and from `train_xla.py`'s step loop) runs in lazy mode on the lazy path
        reached = [fid for fid, (mod, _) in p.functions.items() if lazy[mod] and fid not in self.compiled]
        seen = set(reached)
        while reached:
            fid = reached.pop()
            for _, cls, *_ in self.sites[fid]:
                g = cls[1] if cls is not None else None
                if g is None or g in seen or g in self.compiled or g not in p.functions:
                    continue
                seen.add(g)
                if g in self.eager and not self.eager[g].startswith("called from "):
                    continue  # its own file runs eagerly (and so does what it calls)
                self.eager.pop(g, None)
                reached.append(g)


# calls that make a device object: `xm.xla_device()`, `torch_xla.device()`, `torch.device("hpu")`
DEVICE_CALLS = frozenset({"torch_xla.core.xla_model.xla_device", "torch_xla.device", "torch.device"})


def _device_call(j) -> bool:
    """Is the summary value ``j`` (JSON) a device made by one of DEVICE_CALLS?"""
    while isinstance(j, list) and j[0] in ("named", "used"):
        j = j[1]
    if not isinstance(j, list):
        return False
    if j[0] == "meth" and isinstance(j[1], list) and j[1][0] == "sym":
        return f"{j[1][1]}.{j[2]}" in DEVICE_CALLS
    return j[0] in ("ret", "retof") and j[1] in DEVICE_CALLS

