"""The link step: facts that need the whole project, computed to a fixed point.

- A function *steps* when its body (outside its own loops) runs backward(), an optimizer step or
  a marker, or calls a function that steps (``train_step``).
- A function *calls a model* when its body calls one (a model instance, ``self(...)`` in a
  module, ``model.decode(...)``), or calls a function that does (``p_sample(model, x, t)``).
- A loop is a *step loop* when one pass is one step. Its own body (nested loops keep theirs)
  marks a step, iterates a marking loader or an ``xm.optimizer_step(..., barrier=True)``; or,
  when the loop is not already inside one step (in a hot function or in another step loop),
  it runs backward(), an optimizer step, a model, or calls a function that steps or calls a model.
- A function is *hot* (runs every step) when it is ``forward`` of a model class, a per-step hook
  (``training_step``...), called from a step loop or from a hot function, or passed as a callback
  there (``optimizer.step(closure)``).
- A parameter *carries a counter* when a step loop passes its counter (or int arithmetic on
  it) for that parameter, directly or through another function's parameter.
- A function's *target* (hpu, xla) comes from its own file's imports and device strings, else
  from the functions that call it (an entry script that imports Habana puts its callees on hpu).
- A function is *compiled* when ``torch.compile`` wraps or decorates it, it is ``forward`` of a
  compiled model, or a compiled function calls it.
"""
from __future__ import annotations

import os

from typing import Optional

from hpulint.analysis.calls import PROPERTY_READ
from hpulint.analysis.link_counters import CounterFacts
from hpulint.analysis.link_loops import LOADER_PASS, StepLoops
from hpulint.analysis.link_targets import TargetsAndRegions
from hpulint.analysis.cuda import cuda_bound
from hpulint.analysis.training import TrainingFacts
from hpulint.analysis.seeds import body_runs_every_step, step_seeds
from hpulint.analysis.preparation import without_preparation
from hpulint.analysis.project import Project
from hpulint.analysis.resolve import loader_sites
from hpulint.analysis.values import MLOADER, MODEL

MAX_ROUNDS = 6
STEP = "step"  # a call reached from the one-step update a step loop's pass calls (see _hot_and_loops)


class Linked(StepLoops, TargetsAndRegions, TrainingFacts, CounterFacts):
    """The project's linked facts (plain data: picklable, cheap to ship to worker processes)."""

    def __init__(self, project: Project, target: str = "auto") -> None:
        self.project = project
        self.configured_target = target
        # fid -> [(loop, classification, args, kwargs, tainted, deferred, callee, guarded)]
        self.sites: dict = {}
        self.call_targets: dict = {}  # fid -> [classifications of its k-th call]
        self._by_loop: dict = {}  # fid -> loop index (-1: the body) -> its sites
        self._per_call_cache: dict = {}  # fid -> the sites it runs once per call (_per_call)
        self.steps: dict = {}  # fid -> reason
        self.trains: set = set()  # fids whose own body runs an optimizer step
        # fids whose body, or a function it calls there, runs backward() or an optimizer step (not
        # only markers)
        self.trains_within: set = set()
        # fid -> reason: its body marks a step (`htcore.mark_step()` between an encoder's stages),
        # or calls, as a function or a module, one that does
        self.marking: dict = {}
        self.calls_model: dict = {}  # fid -> reason
        # functions that call a model anywhere below them, in their loops too (a KV-cache wrapper's
        # `generate()` that runs the draft model `gamma` times)
        self.reaches_model: set = set()
        self.hot: dict = {}  # fid -> reason
        # functions that run step loops, called once per pass of another step loop: their code
        # outside their own step loops runs once per that step
        self.body_hot: dict = {}
        self.step_loops: dict = {}  # (fid, index) -> reason
        self.counter_params: dict = {}  # fid -> {param: reason}
        self.fed_params: dict = {}  # fid -> {param: reason}: a step loop assigns the result back to it
        self.targets: dict = {}  # fid -> (target, evidence)
        self.compiled: dict = {}  # fid -> reason
        # fid -> the modules whose `torch.compile(instance)` compiled it (none: a decorator, so
        # every call of it is compiled)
        self.compiled_in: dict = {}
        self.eager: dict = {}  # fid -> reason it runs eagerly next to compiled code (not lazy mode)
        # functions compiled where the compile always runs (not only under `if args.compile:`)
        self.always_compiled: set = set()
        # and everything those roots (and decorated functions) reach: compiled on every path
        self.compiled_unconditionally: set = set()
        # fid -> why it runs on CUDA only (no lazy device: see analysis.cuda)
        self.cuda_only: dict = cuda_bound(project, target)
        self._classify_sites()
        self._steps_and_models()
        self._hot_and_loops()
        self._counters()
        self._fed_back()
        self._targets()
        self._compiled()
        self._eager()

    # --- helpers -------------------------------------------------------------------------

    def where(self, fid: str) -> str:
        """`name()` for messages, with its file when that is not obvious."""
        mod, f = self.project.functions[fid]
        path = _shown(self.project.modules[mod].get("path") or mod)
        if f["kind"] == "module":
            return f"the module body of {path}"
        name = f["name"]
        cls = self.project.classes.get(f.get("cls") or "")
        if cls is not None:
            name = f"{cls[1]['name']}.{name}"
        return f"{name}() in {path}"

    def called(self, fid: str) -> str:
        """`name()` of a called function in a reason, or "a lambda"."""
        f = self.project.functions[fid][1]
        name = f["name"]
        if name in ("__call__", "forward") and f.get("cls") in self.project.classes:
            # an instance called: its class says which one
            return f"{self.project.classes[f['cls']][1]['name']}.{name}()"
        return "a lambda" if name == "<lambda>" else f"{name}()"

    def _classify_sites(self) -> None:
        p = self.project
        for fid in p.functions:
            out = []
            by_call = []
            # calls under `if top_k is not None:` with `top_k=None` that no project caller gives
            dead = {k for k, names in p.functions[fid][1].get("optional", ())
                    if any(p.never_given(fid, n) for n in names)}
            for k, (loop, callee, args, kwargs, tainted, deferred, name, guarded) in enumerate(p.calls(fid)):
                if name == PROPERTY_READ:
                    # `self.temperature` read: a call of its getter when it names a property
                    getter = p.method(callee.base.cls, callee.name)
                    targets = [("fn", getter, 1)] if getter and p.is_property(getter) else []
                    by_call.append(targets)
                    if not targets:
                        continue
                else:
                    targets = p.targets(callee, name)
                    by_call.append(targets)
                if k in dead:
                    continue  # it never runs as the project calls its function
                for cls in targets or [None]:
                    out.append((loop, cls, args, kwargs, tainted, deferred, callee, guarded))
            self.sites[fid] = out
            self.call_targets[fid] = by_call
            by_loop: dict = {}
            for s in out:
                by_loop.setdefault(s[0], []).append(s)
            self._by_loop[fid] = by_loop

    def _counted_steps(self, fid: str, loops: dict) -> bool:
        """Every step loop of ``fid`` is a `for` loop (over a range or a collection)."""
        f = self.project.functions[fid][1]
        return all(f["loops"][i]["iter"] is not None for g, i in loops if g == fid)

    def _runs_model_itself(self, fid: str, loop: int, multi) -> bool:
        """Loop ``loop``'s own body calls a model, directly or through a function that runs no
        step loop of its own."""
        return any(cls is not None and cls[1] not in multi and (self._runs_model(cls) or cls[1] in self.calls_model)
                   for _, cls, *_ in self._own(fid, loop))

    def _own(self, fid: str, loop: int):
        """Classified calls made directly by the body of loop ``loop`` (-1: the function body)."""
        return self._by_loop[fid].get(loop, [])

    # --- steps and models ----------------------------------------------------------------

    def _per_call(self, fid: str) -> list:
        """The calls a function makes once per call of it: its body's, and those in its loops over
        the parts of one step (micro-batches: `for micro_batch_index in range(n):`). Asked on every
        round of the fixed point below: computed once."""
        got = self._per_call_cache.get(fid)
        if got is not None:
            return got
        out = self._own(fid, -1)
        mod = self.project.functions[fid][0]
        for i, info in enumerate(self.project.functions[fid][1]["loops"]):
            if info["parts"] or (info["iter"] is not None and self.project.resolve(
                    self.project.val(info["iter"], mod)).kind == MODEL):
                # (`for m in self.models: m.decode(x)`: an ensemble's members, each once a call)
                out = out + self._own(fid, i)
        self._per_call_cache[fid] = out
        return out

    def _runs_model(self, cls) -> bool:
        """A call of a model (not of a project loss module, `FocalLoss(nn.BCEWithLogitsLoss())`:
        a criterion's terms are no model run)."""
        if cls is None or cls[0] != "model":
            return False
        owner = self.project.functions[cls[1]][1].get("cls") if cls[1] is not None else None
        c = self.project.classes.get(owner or "")
        return c is None or not c[1]["name"].endswith(("Loss", "Criterion"))

    def _steps_and_models(self) -> None:
        p = self.project
        for fid, (_, f) in p.functions.items():
            if f["marks"]:
                self.steps[fid] = f["marks"][0]
                if f["marks"][0] == "marks a step":
                    self.marking[fid] = "marks a step"
                if "runs an optimizer step()" in f["marks"]:
                    self.trains.add(fid)
                if any(m != "marks a step" for m in f["marks"]):
                    self.trains_within.add(fid)
            for loop, cls, *_ in self._per_call(fid):
                if self._runs_model(cls):
                    self.calls_model[fid] = "calls a model"
                    break
        changed = True
        while changed:
            changed = False
            for fid in p.functions:
                for loop, cls, *_ in self._per_call(fid):
                    if cls is None or cls[0] != "fn":
                        continue
                    callee = cls[1]
                    if fid not in self.steps and callee in self.steps and callee != fid:
                        self.steps[fid] = f"calls {self.called(callee)}, which runs a step"
                        changed = True
                    if fid not in self.trains_within and callee in self.trains_within and callee != fid:
                        self.trains_within.add(fid)
                        changed = True
                    if fid not in self.calls_model and callee in self.calls_model and callee != fid:
                        self.calls_model[fid] = f"calls {self.called(callee)}, which calls a model"
                        changed = True
                for loop, cls, *_ in self._per_call(fid):
                    if cls is not None and fid not in self.marking and cls[1] in self.marking \
                            and cls[1] != fid:
                        self.marking[fid] = f"calls {self.called(cls[1])}, which marks a step"
                        changed = True
        reaches = set(self.calls_model)
        callers: dict = {}
        for fid in p.functions:
            for sites in self._by_loop[fid].values():
                for _, cls, *_ in sites:
                    if self._runs_model(cls):
                        reaches.add(fid)
                    elif cls is not None and cls[0] == "fn" and cls[1] != fid:
                        callers.setdefault(cls[1], set()).add(fid)
        self.reaches_model = _with_callers(reaches, callers)

    # --- hot functions and step loops ----------------------------------------------------

    def _multi_step(self, loops: dict) -> set:
        """Functions that run many steps per call: they hold a step loop, or call one that does
        (a sampler's `sample()`, a `train_one_epoch()`): calling one is not one step."""
        callers: dict = {}  # fid -> the functions whose body (not a loop in it) calls it
        for fid in self.project.functions:
            for _, cls, *_ in self._own(fid, -1):
                if cls is not None and cls[1] is not None:
                    callers.setdefault(cls[1], []).append(fid)
        return _with_callers({fid for fid, _ in loops}, callers)

    def _hot_and_loops(self) -> None:
        p = self.project
        seeds = step_seeds(self.project)
        hot = dict(seeds)
        loops: dict = {}
        multi: set = set()
        # what forward() or a step hook calls runs inside that one step, whatever else is known:
        # its loops (attention tiles, layers) are unrolled into the step's graph, not steps
        inside, todo = set(), list(seeds)
        while todo:
            fid = todo.pop()
            if fid not in inside:
                inside.add(fid)
                todo += [c for _, cls, *_ in self.sites.get(fid, ()) if cls is not None for c in cls[1:2] if c]
        for _ in range(MAX_ROUNDS):
            new_loops, within = {}, inside.union(hot)
            for fid, (_, f) in p.functions.items():
                for i in range(len(f["loops"])):
                    reason = self._loop_reason(fid, i, f, within, new_loops, multi)
                    if reason is not None:
                        new_loops[(fid, i)] = reason
            new_loops = self._autoregressive_runs(self._runs_of_steps(without_preparation(self, new_loops)))
            multi = self._multi_step(new_loops)
            new_hot = {fid: why for fid, why in seeds.items() if fid not in multi}
            todo, body_steps = [], []
            for (fid, i), reason in new_loops.items():
                inner = self._inner_loops(fid, i)
                info = p.functions[fid][1]["loops"][i]
                # a pass per batch: over a data loader, or a marking one (an MpDeviceLoader, the
                # per-device loader torch_xla's old DataParallel hands its loop function)
                batch = reason == LOADER_PASS or (reason == "marks a step" and info["iter"] is not None and p.resolve(
                    p.val(info["iter"], p.functions[fid][0])).kind == MLOADER)
                # `while ...: x = one_step(x)`: the one-step update the loop runs
                iterates_steps = info["iter"] is None and info["carried"]
                # `for _ in range(n): logits = verify(model, ids); ids, ... = update(ids, ...)`: a pass
                # that runs a model itself and a carried update (speculative decoding's draft
                # expansion inside it) is one step, the update's own loops too (not a loop over a
                # data loader: a batch a pass, whatever its callees run)
                one_step = info["carried"] and not batch and self._runs_model_itself(fid, i, multi)
                fed = info.get("feeds") or ()  # (by the name written: the update it hands `ids` to)
                for loop, cls, args, kwargs, tainted, deferred, callee, guarded in self.sites[fid]:
                    if loop in inner and not self._logging_only(guarded, cls):
                        why = f"called from the step loop in {self.where(fid)}"
                        if cls is not None and cls[1] in multi and loop == i:
                            if one_step and (cls[1] in self.calls_model or cls[1] in self.reaches_model) \
                                    and p.functions[cls[1]][1]["name"] in fed:
                                body_steps.append((cls[1], why, STEP))
                            elif iterates_steps and cls[1] in self.calls_model:
                                body_steps.append((cls[1], why, False))  # the step (see _loop_reason)
                        todo.append((fid, cls, args, kwargs, deferred, why, batch))
            for fid in list(new_hot):
                todo += [t + (False,) for t in self._from_hot(fid)]
            body: dict = {}
            for target, why, within_step in body_steps:
                if target not in body:
                    body[target] = why
                    todo += [t + (within_step,) for t in self._from_hot(target, new_loops)]
            holders = {fid for fid, _ in new_loops}
            for fid, why in seeds.items():
                # a model's forward() that holds a decoding loop (captioning's greedy decode), an
                # engine's execute_model() that runs the model once per pooled request: the
                # framework calls it every step, so its own body runs once a step (not a
                # pipeline's __call__() nor an evaluation hook that samples: whole sampling runs)
                if fid in multi and body_runs_every_step(why):
                    # (what it calls that runs whole step loops, a sampler's `sample()` in a
                    # validation step, keeps its setup to each run)
                    body[fid] = why
                    todo += [t + (False,) for t in self._from_hot(fid, new_loops)]
            while todo:
                caller, cls, args, kwargs, deferred, why, batch = todo.pop()
                for target in self._callees(cls, args, kwargs, deferred):
                    if target in multi and batch is STEP and self._counted_steps(target, new_loops):
                        # a function the step's one-step update calls (a draft model's tree
                        # expansion in speculative decoding): inside that step, its loops too
                        # (counted ones: a refinement `while` loop until a loss is low enough
                        # runs steps of its own)
                        if target not in new_hot:
                            new_hot[target] = why
                            todo += [t + (STEP,) for t in self._from_hot(target)]
                    elif target in multi:
                        # a function that calls whole step loops, called once per batch of a
                        # loop over a data loader: its own body runs once per batch (a PPO step
                        # generates, then masks its trajectory). A function that holds a step
                        # loop itself (a decoding run) keeps its setup and its result to the
                        # run, and a loop over prompts or queries is a loop over runs.
                        # (a function whose own step loops only train, a GAN's D steps or
                        # gradient accumulation, is the batch's training step: its body too)
                        if batch and target not in body and (target not in holders
                                                             or self._trains_per_batch(target, new_loops)):
                            body[target] = why
                            todo += [t + (True,) for t in self._from_hot(target, new_loops)]
                    elif target not in new_hot:
                        new_hot[target] = why
                        todo += [t + (batch,) for t in self._from_hot(target)]
            if new_hot == hot and new_loops == loops:
                break
            hot, loops = new_hot, new_loops
        self.hot, self.step_loops, self.multi_step = hot, loops, multi
        self.body_hot = {fid: why for fid, why in body.items() if fid not in hot}

    def _trains_per_batch(self, fid: str, loops: dict) -> bool:
        """Every step loop of ``fid`` is one only because it runs backward() or an optimizer step,
        over no data loader (a GAN's discriminator steps, gradient accumulation): ``fid`` is one
        batch's training, not an epoch."""
        p = self.project
        mod, f = p.functions[fid]
        mine = [(j, why) for (g, j), why in loops.items() if g == fid]
        return bool(mine) and all(
            why in ("runs an optimizer step()", "runs backward()") and (
                f["loops"][j]["iter"] is None or not loader_sites(p.resolve(p.val(f["loops"][j]["iter"], mod))))
            for j, why in mine)

    def _from_hot(self, fid: str, loops: Optional[dict] = None) -> list:
        """The calls a hot function makes, each with why its callee runs every step; with
        ``loops`` (the step loops), only those outside the function's own step loops."""
        why = f"called from {self.where(fid)}"
        props = {cls[1]: self.reached_from(fid, cls[1]) for _, cls, *_ in self.sites[fid]
                 if cls is not None and cls[1] is not None and self.project.is_property(cls[1])}
        skip: set = set()
        for i in range(len(self.project.functions[fid][1]["loops"])) if loops is not None else ():
            if (fid, i) in loops:
                skip |= self._inner_loops(fid, i)
        # a call under a logging-interval test does not run every step (`save_progress(...)`
        # under `if step % save_steps == 0:`): it does not make its callee hot
        return [(fid, cls, args, kwargs, deferred, props.get(cls[1], why) if cls is not None else why)
                for loop, cls, args, kwargs, _, deferred, _, guarded in self.sites[fid]
                if not self._logging_only(guarded, cls) and loop not in skip]

    def _logging_only(self, guarded: bool, cls) -> bool:
        """A call under a logging-interval test runs on a few steps only; not a call of a function
        whose own body trains (`if t % replay_every == 0: agent.learn(mem)`): that test is how often it
        trains (a validation that generates, marking steps, is no training, nor an evaluation that
        calls a forward-backward function it tells to run forward only)."""
        return guarded and not (cls is not None and cls[1] is not None and cls[1] in self.trains)

    def reached_from(self, fid: str, callee: str, what: str = "") -> str:
        """Why ``callee`` runs where ``fid`` does: it calls it, or reads it (a property)."""
        if self.project.is_property(callee):
            f = self.project.functions[fid][1]
            owner = f"{self.project.classes[f['cls']][1]['name']}.{f['name']}()" if f["cls"] else f"{f['name']}()"
            name = self.project.functions[callee][1]["name"]
            return f"a property {what}{owner} reads as `self.{name}`"
        return f"called from {what}{self.where(fid)}"

    def _callees(self, cls, args, kwargs, deferred: bool) -> list:
        out = []
        if cls is not None and cls[1] is not None:
            out.append(cls[1])
        if deferred:
            return out
        # callbacks: optimizer.step(closure), checkpoint(fn, x)
        return out + self.project.functions_passed(args, kwargs)


def link(summaries: list, target: str) -> Linked:
    """The project of ``summaries`` (None for a file that has none), linked. The summaries are
    taken in the order of their modules and paths, whatever order the workers finished them in:
    the same project gives the same facts with any number of jobs."""
    from hpulint.analysis.project import Project

    ordered = sorted((s for s in summaries if s is not None),
                     key=lambda s: (s.get("module") or "", s.get("path") or ""))
    return Linked(Project(ordered), target)


def _shown(path: str) -> str:
    """A path as messages show it: relative to the working folder when it is inside it (the
    same text whether the project was linked from a folder or from one of its files)."""
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:  # another drive
            return path
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return path


def _with_callers(seeds: set, callers: dict) -> set:
    """``seeds`` and every function that calls one of them, through any chain of ``callers``
    (fid -> the functions that call it)."""
    out = set(seeds)
    todo = list(out)
    while todo:
        for fid in callers.get(todo.pop(), ()):
            if fid not in out:
                out.add(fid)
                todo.append(fid)
    return out
