"""What training does, from the linked project: whether a training step may run a function
(asked for each host copy that may be a loop's output, see :mod:`hpulint.analysis.outputs`), and
what a training loop runs with its callees (backward(), optimizer steps, markers, a marking
loader: :class:`TrainingFacts`, mixed into the link). It reads only the linked facts (no libcst),
so a warm run that checks its cached answers does not import the parser."""
from __future__ import annotations

import re
import weakref
from typing import Optional

from hpulint.analysis.resolve import loader_sites
from hpulint.analysis.values import LOADER, UNKNOWN, Attr, Named, Param, Ret, RetOf, Used

_CALLERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # Linked -> its callers map
# per-step hooks a trainer runs for evaluation only (Lightning runs them without gradients)
EVAL_HOOKS = frozenset({"validation_step", "validation_step_end", "test_step", "predict_step", "prediction_step",
                        "eval_step", "eval_forward"})


def reached_by_training(linked, fid: str) -> bool:
    """Whether ``fid`` runs in a step that trains, or may: it is a per-step hook or forward()
    (which training runs too), some step loop that trains calls it (directly or through hot
    functions), or it is hot through a path this does not follow (a callback)."""
    callers = _unguarded_callers(linked)
    seen, todo = set(), [fid]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        why = linked.hot.get(f) or ""
        if f != fid and not why:
            continue  # a caller that does not run every step
        if why and not why.startswith("called from"):
            if linked.project.functions[f][1]["name"] in EVAL_HOOKS:
                continue  # validation_step(): the evaluation the trainer runs, without training
            return True  # forward(), a hook: training runs it too
        direct = callers.get(f, [])
        if not direct and why:
            return True  # hot through a callback or another path not followed here
        for g, loop in direct:
            step = _step_loop_around(linked, g, loop)
            if step is None:
                todo.append(g)
                continue
            facts = linked.training_facts(g, step)
            if facts["backward"] or facts["opt_step"]:
                return True
    return False


def _step_loop_around(linked, fid: str, loop: int) -> Optional[int]:
    loops = linked.project.functions[fid][1]["loops"]
    while loop is not None and loop >= 0:
        if (fid, loop) in linked.step_loops:
            return loop
        loop = loops[loop]["parent"]
    return None


def _unguarded_callers(linked) -> dict:
    """fid -> [(caller fid, loop index)] of the calls not under a logging-interval test (made
    once per linked project: each question used to walk every call site of the project)."""
    callers = _CALLERS.get(linked)
    if callers is None:
        callers = {}
        for g, sites in linked.sites.items():
            for loop, cls, *_rest in sites:
                guarded = _rest[-1]
                if cls is not None and cls[1] is not None and not guarded:
                    callers.setdefault(cls[1], []).append((g, loop))
        _CALLERS[linked] = callers
    return callers


def _unwrapped(p, v):
    """What a loop over ``v`` iterates through a library's wrapper: `tqdm(loader, desc=...)`,
    `enumerate(loader)`, `islice(loader, n)` give the loader's batches (a project function's
    result is its own)."""
    for _ in range(4):
        if v.tag != "retof" or p.symbol(v.ref) is not None:
            break
        first = next((a for k, a in v.args if k == 0), None)
        if first is None:
            break
        v = first
    return v


_TRAINER = re.compile(r"trainer$", re.I)


def _given_to_trainer(callee, args, kwargs):
    """The loader a framework trainer trains on: `trainer.run(loader)` (ignite's Engine from
    `create_supervised_trainer`), `trainer.fit(model, loader)` or `fit(..., train_dataloaders=)`
    (Lightning's Trainer); the trainer is known by its name or its factory's."""
    if type(callee) is not Attr or callee.name not in ("run", "fit"):
        return None
    base = callee.base
    while type(base) in (Named, Used) and not (type(base) is Named and _TRAINER.search(base.name)):
        base = base.base
    name = base.name if type(base) in (Named, Param, Attr) else \
        base.ref.rsplit(".", 1)[-1].rsplit(":", 1)[-1] if type(base) in (Ret, RetOf) else ""
    if not _TRAINER.search(name):  # (`create_supervised_trainer`'s result too)
        return None
    if callee.name == "run":
        return args[0] if args else kwargs.get("data")
    return args[1] if len(args) > 1 else kwargs.get("train_dataloaders", kwargs.get("train_dataloader"))


class TrainingFacts:
    """What a training loop does, with its callees (a mixin of
    :class:`hpulint.analysis.link.Linked`: ``project``, ``sites``, ``step_loops`` and
    ``_inner_loops`` come from the class it is mixed into)."""

    _builds_device_loaders: Optional[bool] = None
    _fed: Optional[dict] = None

    def fed_loaders(self) -> dict:
        """``module#n`` of a `DataLoader(...)` call -> [target, lazy, where] of a training step
        loop that iterates the loader it makes, in any file: the loader reaches the loop through
        returns, tuple parts, parameters (its call sites) and attributes (see values.LoaderAt).
        A loop on a lazy target is preferred when several iterate the same loader."""
        if self._fed is None:
            fed: dict = {}
            p = self.project
            for fid, j in self.step_loops:
                mod, f = p.functions[fid]
                it = f["loops"][j]["iter"]
                sites = loader_sites(p.resolve(_unwrapped(p, p.val(it, mod)))) if it is not None else ()
                if not sites:
                    continue
                facts = self.training_facts(fid, j)
                if not (facts["backward"] or facts["opt_step"]):
                    continue  # evaluation: its short batch costs one graph more, once
                target = self.targets.get(fid)
                lazy = fid not in self.eager and (fid not in self.compiled or fid not in self.compiled_unconditionally)
                entry = [target[0] if target else None, lazy, self.where(fid)]
                for site in sites:
                    old = fed.get(site)
                    if old is None or (entry[0] and entry[1] and not (old[0] and old[1])):
                        fed[site] = entry
            for fid in p.functions:  # `trainer.run(train_loader)`, `trainer.fit(model, train_loader)`
                target = self.targets.get(fid)
                for _, callee, args, kwargs, *_ in p.calls(fid):
                    given = _given_to_trainer(callee, args, kwargs)
                    for site in loader_sites(p.resolve(given)) if given is not None else ():
                        if site not in fed or not fed[site][0]:
                            fed[site] = [target[0] if target else None, fid not in self.eager, self.where(fid)]
            self._fed = fed
        return self._fed

    def _device_loaders(self) -> bool:
        """Some module of the project builds an MpDeviceLoader/ParallelLoader."""
        if self._builds_device_loaders is None:
            self._builds_device_loaders = any("device-loader" in s.get("evidence", {})
                                              for s in self.project.modules.values())
        return self._builds_device_loaders

    def training_facts(self, fid: str, index: int) -> dict:
        """backward(), optimizer steps and markers of loop ``index`` of ``fid``: in its body, its
        nested loops and every function they call (transitively); and whether its loader marks."""
        p = self.project
        f = p.functions[fid][1]
        inner = self._inner_loops(fid, index)
        out = {"backward": False, "opt_step": False, "markers": False, "callee_markers": False,
               "loader": False, "engine": False}
        for j in inner:
            marks = f["loops"][j]["marks"]
            out["backward"] |= "runs backward()" in marks
            out["opt_step"] |= "runs an optimizer step()" in marks
            out["markers"] |= "marks a step" in marks
            if self.step_loops.get((fid, j)) == "marks a step" and "marks a step" not in marks:
                out["loader"] = True
        info = f["loops"][index]
        if not out["loader"] and info["iter"] is not None and self._device_loaders() and not info.get("host_batch"):
            # `for batch in self.train_loader` built elsewhere, in a project whose loader factory
            # wraps its loaders in an MpDeviceLoader (on XLA): that loader may mark the steps
            # (not one whose batches the body moves to the device: those are host tensors)
            # (one whose unpacked batch the body moves, over a loader the project resolves to a
            # plain one, iterates host batches: `for b, (x, y) in enumerate(train_loader)` with
            # `train_loader = DataLoader(...)` passed in)
            v = p.val(info["iter"], p.functions[fid][0])
            kind = p.resolve(v).kind
            out["loader"] = kind in (UNKNOWN, LOADER) and v.tag in ("attr", "param", "ret", "retof", "meth") \
                and not (info.get("moves_parts") and kind == LOADER)
        seen, todo = set(), [cls[1] for loop, cls, *_ in self.sites[fid]
                              if loop in inner and cls is not None and cls[1] is not None]
        while todo:
            g = todo.pop()
            if g in seen or g not in p.functions:
                continue
            seen.add(g)
            gf = p.functions[g][1]
            evidence = p.modules.get(p.functions[g][0], {}).get("evidence", {})
            # a callee in a module that drives DeepSpeed's engine (or Lightning's HPU strategies),
            # which mark the step on Gaudi after backward() and the optimizer step
            out["engine"] |= "deepspeed" in evidence or "lightning_habana" in evidence
            if gf["name"] == "backward" and "staticmethod" in gf["decorators"]:
                # an autograd Function's backward() (activation checkpointing re-runs the forward
                # and backpropagates through it): part of someone else's backward pass, it runs
                # only when a loss is backpropagated, not because this loop trains
                continue
            marks = list(gf["marks"])
            for info in gf["loops"]:
                marks += info["marks"]
            out["backward"] |= "runs backward()" in marks
            out["opt_step"] |= "runs an optimizer step()" in marks
            out["callee_markers"] |= "marks a step" in marks
            todo += [cls[1] for _, cls, *_ in self.sites[g] if cls is not None and cls[1] is not None]
        return out
