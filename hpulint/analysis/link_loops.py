"""Step loops: the link step's reading of one loop, on a fixed-point round (see link.py's module
docstring for what a step loop is). A mixin of :class:`hpulint.analysis.link.Linked`: it reads the
call sites, steps, model calls and marking functions the link computed before."""
from __future__ import annotations

from typing import Optional

from hpulint.analysis.loop_kinds import holds_modules, numbers_models, runs_own_layers, samples
from hpulint.analysis.preparation import model_only
from hpulint.analysis.values import DATA, LOADER, MLOADER, NONE, OTHER, SCALAR, SEQ, SIZE, TENSOR

# what a carried value can be known to be that is no tensor: a number, a string, a host container
NUMBERS = frozenset({SCALAR, DATA, SEQ, SIZE, OTHER, NONE})

LOADER_PASS = "iterates a data loader"


class StepLoops:
    def _loop_reason(self, fid: str, index: int, f: dict, hot: dict, loops: dict,
                     multi: frozenset = frozenset()) -> Optional[str]:
        info = f["loops"][index]
        if info.get("once"):
            # `for batch in loader: ...; break`: its body runs once, whatever it marks or calls
            return None
        marks = info["marks"]
        if marks and marks[0] == "marks a step":
            return "marks a step"
        it = None
        if info["iter"] is not None:
            it = self.project.resolve(self.project.val(info["iter"], self.project.functions[fid][0]))
            if it.kind == MLOADER:
                return "marks a step"
        if info["parts"]:
            return None  # each optimizer, scheduler or micro-batch of the same step
        if info.get("env") and self._model_call(fid, index) is not None:
            # a rollout (`action = policy.act(obs[step]); envs.step(action)`): each pass hands the
            # policy's action to the environment on the host, one step of its own, also inside
            # the update loop that trains on the rollout
            return "runs the policy and steps an environment"
        nested, parent = False, info["parent"]
        while not nested and parent is not None:
            # (a loop that trains inside a loop over a data loader steps on its own: the batch
            # loop is a step loop only for what its body does once per batch)
            why = loops.get((fid, parent))
            nested = why is not None and not (marks and why == LOADER_PASS)
            parent = f["loops"][parent]["parent"]
        if nested or (fid in hot and not info.get("yields") and not samples(self.project, info, f, it)):
            # passes inside one step: unrolled into the same graph (a generator's loop that yields
            # once a pass is not: each pass is one pass of the loop consuming it)
            return self._marking_pass(fid, index, it)
        gen = self._yielding(info, multi, fid)
        if gen is not None:
            return f"iterates {self.called(gen)}, which runs a step for each item it yields"
        inner = self._inner_loops(fid, index) - {index}
        if marks and any(f["loops"][j]["marks"] and not f["loops"][j]["parts"] and self._over_loader(fid, f, j)
                         for j in inner):
            # an epoch around a loop over the data loader that trains: its own optimizer step
            # flushes the last partial accumulation (`if remainder: xm.optimizer_step(opt)`)
            return None
        if marks:
            return marks[0]
        # the micro-batches of this pass (`for micro_batch in micro_batches: loss.backward()`): their
        # backward and optimizer steps are this pass's step
        parts = {j for j in inner if f["loops"][j]["parts"] and f["loops"][j]["parent"] == index}
        got = next((f["loops"][j]["marks"][0] for j in sorted(parts) if f["loops"][j]["marks"]), None)
        if got is not None:
            return got
        if (it is None or it.kind != LOADER) and \
                any(f["loops"][j]["marks"] for j in inner - parts):
            # an epoch: a loop nested in it trains (or marks), and a checkpoint helper that marks
            # a step before saving does not make the epoch one step (a loop over a data loader
            # is one batch a pass, whatever trains inside: PPO's optimisation epochs per batch)
            return None
        if holds_modules(it) or numbers_models(self.project, fid, info):
            # `for chunk in model_chunks: chunk.disable_hooks()`, `for k in range(len(unets)):
            # train(unet_number=k)`: each pass one of the modules, the same set every step
            return None
        own = self._own(fid, index)
        if it is not None and it.kind == LOADER and any(cls is not None for _, cls, *_ in own):
            return LOADER_PASS  # one batch a pass: whatever its callees do inside
        for _, cls, *_ in own:  # a function that runs a (training) step at its top level
            # (not one that only marks steps and also holds step loops: a generate() that marks a
            # step before its token loop is a whole run, see `held` below; a PPO step that trains
            # on its mini-batches is one step)
            if cls is not None and cls[1] in self.steps and cls[1] != fid \
                    and (cls[1] not in multi or cls[1] in self.trains_within):
                return f"calls {self.called(cls[1])}, which runs a step"
        held = [cls[1] for _, cls, *_ in own if cls is not None and cls[1] in multi]
        if held:
            if info["iter"] is None and info["carried"]:
                # `while n < total: x, idx = sampling_step(x, idx)`: an iterative loop whose callee
                # runs the model once a call besides loops of its own (a rejection loop, a draft
                # model's tokens): each pass is one step
                got = next((c for c in held if c in self.calls_model), None)
                if got is not None:
                    return f"calls {self.called(got)}, which calls a model"
                # `while prefix.shape[1] < T: x = cache.generate(prefix, gamma)`: a round of
                # speculative decoding, the draft model's tokens in the callee's loop and the
                # sequence carried to the next round
                fed = info.get("feeds") or ()
                got = next((c for c in held if c in self.reaches_model
                            and self.project.functions[c][1]["name"] in fed), None)
                if got is not None:
                    return f"calls {self.called(got)}, which runs a model in a loop"
            if info["carried"]:
                # `for i in range(n): x = self._maskgit_update(x, ...)` with another sampler's update,
                # which holds loops of its own, in another branch: a one-step update that calls the
                # model makes each pass a step
                got = next((cls[1] for _, cls, *_ in own if cls is not None and cls[1] not in multi
                            and cls[1] in self.calls_model and cls[1] != fid), None)
                if got is not None:
                    return f"calls {self.called(got)}, which calls a model"
            return None  # each pass runs whole step loops (a sampling run, an epoch)
        if not info["carried"] and any(cls is not None and cls[1] in multi and cls[1] != fid
                                       for j in inner - parts for _, cls, *_ in self._own(fid, j)):
            # `for a, b in zip(prompts, prompts[1:]): emb = embed(a) ... for t in T: self(latents=...)`:
            # a nested loop runs whole pipelines, so a pass of this one is many steps
            return None
        if runs_own_layers(self.project, f, info, own, it):
            return None
        why = self._model_call(fid, index)
        if why is not None:
            return why
        if info["carried"] and self._carries_maybe_tensor(self.project.functions[fid][0], f, index):
            # a denoising loop that calls the UNet once per prompt in a nested loop (`for j in
            # range(n_prompts): preds.append(unet(x, t, emb[j:j + 1]))`): the nested passes are parts
            # of this loop's step (the loop carries a tensor: a per-sample preparation loop that
            # keeps a running maximum of sizes carries only a number)
            for j in sorted(self._inner_loops(fid, index) - {index}):
                inner = f["loops"][j]
                if not inner["carried"] and not inner["marks"]:
                    why = self._model_call(fid, j)
                    if why is not None:
                        return f"{why} in a nested loop"
        return None

    def _over_loader(self, fid: str, f: dict, index: int) -> bool:
        v = f["loops"][index]["iter"]
        if v is None:
            return False
        it = self.project.resolve(self.project.val(v, self.project.functions[fid][0]))
        return it.kind in (LOADER, MLOADER)

    def _marking_pass(self, fid: str, index: int, it) -> Optional[str]:
        """A pass inside code one step runs that runs a module whose forward marks a step (a
        video VAE's encoder, which marks between its stages, run on one chunk a pass): each pass
        is graphs of its own, not unrolled into the caller's (a loop over layers is not this, nor
        one whose nested loops mark; nor a pipeline schedule's loop over instructions, whose
        handlers mark: the run it makes is one training step)."""
        f = self.project.functions[fid][1]
        if holds_modules(it) or any(f["loops"][j]["marks"] for j in self._inner_loops(fid, index) - {index}):
            return None
        got = next((c[1] for _, c, *_ in self._own(fid, index)
                    if c is not None and c[0] == "model" and c[1] in self.marking and c[1] != fid), None)
        return None if got is None else f"calls {self.called(got)}, which marks a step"

    def _yielding(self, info: dict, multi: frozenset, owner: str) -> Optional[str]:
        """The generator a loop iterates when the generator's step loop yields once a pass
        (`for tokens, done in stream_tokens(model, ...)`, or a parameter every caller fills with
        one: `def decode_stream(self, token_stream): for token in token_stream:`): each pass here is
        one step there."""
        v = info["iter"]
        if not (isinstance(v, list) and v):
            return None
        if v[0] == "param":
            p = self.project
            given = p.passed(p.val(v, p.functions[owner][0]), defaults=False)
            # (a caller that passes a generator of steps makes each pass a step, whatever others pass)
            return next((g.ref for g in given if g.tag in ("ret", "retof") and self._yields_steps(g.ref, multi)),
                        None)
        if v[0] not in ("ret", "retof"):
            return None
        return v[1] if self._yields_steps(v[1], multi) else None

    def _yields_steps(self, fid, multi: frozenset) -> bool:
        """``fid`` is a generator whose step loop yields, or returns what one returns (`def
        generate(...): return generate_fn(...)`)."""
        for _ in range(3):
            entry = self.project.functions.get(fid)
            if entry is None:
                return False
            if fid in multi and any(lp.get("yields") for lp in entry[1]["loops"]):
                return True
            ret = entry[1]["ret"]
            if not (isinstance(ret, list) and ret and ret[0] in ("ret", "retof")):
                return False
            fid = self.project.val(ret, entry[0]).ref
        return False

    def _runs_of_steps(self, loops: dict) -> dict:
        """A loop that is a step loop only because it calls a model, around a counted loop that
        passes its counter to a call that runs the model (a loop over video chunks that encodes
        each chunk's inputs, then denoises it with `do_sample_per_step(model, ..., step)`): each
        outer pass is a run, and the inner loop's passes are its steps; so is a loop that calls the
        model and fills, at its counter's position, the tensor it reads (a token a pass), and a
        `while` loop that calls the model until its block is decoded (a block's tokens). The inner
        loop is a step loop too (a corrector loop that only repeats a model call, `for _ in
        range(k)`, is not)."""
        out = None
        for (fid, i), reason in loops.items():
            if not model_only(reason):
                continue
            f = self.project.functions[fid][1]
            for j in sorted(self._inner_loops(fid, i) - {i}):
                info = f["loops"][j]
                if info["collection"] or info["parts"] or info["marks"] or (fid, j) in loops \
                        or numbers_models(self.project, fid, info):
                    continue
                # (`for j in range(w): logits = model.transformer(idx[:, :j]) ... idx[:, j] = ix`:
                # the pass fills the tensor it reads at its counter's position, a token a pass)
                # (`while True: logits = model(x[:, start:], past_key_values=kv) ... if done: break`:
                # a loop with no bound of its own decodes until the block is filled, a pass a step)
                why = self._model_call(fid, j, with_counter=not info.get("fills") and info["iter"] is not None)
                if why is not None:
                    if out is None:
                        out = dict(loops)
                    out[(fid, j)] = why
        return loops if out is None else out

    def _autoregressive_runs(self, loops: dict) -> dict:
        """A loop whose passes each run a sampling loop (nested in it, or in a function its body
        calls) and carry a tensor to the next pass (an autoregressive video sampler's frame loop:
        `for frame_idx in range(n): ... for step_idx in range(k): model(...)`, then `history =
        torch.cat([history, frame], 1)`): each pass's own ops (the slices its counter bounds, the
        history it grows) are recorded into that pass's first step, so the loop is a step loop of
        its own. Only when its own body slices with its counter or grows what it carries (the
        summary's ``own_shapes``: a loop over a model's codebooks that hands each stage to a
        sampling run is not, the same stages every run). Not a loop over data, prompts or a
        collection, nor one that trains or marks."""
        out = None
        held = {fid for fid, _ in loops}
        for fid, (mod, f) in self.project.functions.items():
            for i, info in enumerate(f["loops"]):
                if (fid, i) in loops or not info["carried"] or not info.get("own_shapes") or info["collection"] \
                        or info["parts"] or info["marks"] or info.get("yields"):
                    continue
                if info["iter"] is not None:
                    it = self.project.resolve(self.project.val(info["iter"], mod))
                    if it.kind in (LOADER, MLOADER):
                        continue
                inner = [j for j in self._inner_loops(fid, i) - {i} if (fid, j) in loops]
                runs = [loops[(fid, j)] for j in inner if model_only(loops[(fid, j)])]
                if len(runs) != len(inner):
                    continue  # (a nested loop that trains or marks: an epoch)
                called = [cls[1] for _, cls, *_ in self._own(fid, i) if cls is not None and cls[1] in held
                          and cls[1] != fid and all(model_only(r) for (g, _), r in loops.items() if g == cls[1])]
                if not runs and not called:
                    continue
                name = self._carried_tensor(mod, f, i)
                if name is None:
                    continue
                if out is None:
                    out = dict(loops)
                how = "runs a sampling loop" if runs else f"calls {self.called(called[0])}, which runs a sampling loop"
                out[(fid, i)] = f"{how} each pass and carries `{name}` to the next"
        return loops if out is None else out

    def _carried_kinds(self, mod: str, f: dict, index: int) -> dict:
        """name -> kind of what loop ``index`` carries from pass to pass (resolved at the link)."""
        return {name: self.project.resolve(self.project.val(v, mod)).kind
                for name, v in sorted(f["loops"][index].get("carried_vals", {}).items())}

    def _carries_maybe_tensor(self, mod: str, f: dict, index: int) -> bool:
        """Loop ``index`` carries a value that may be a tensor (not one known to be a number, a
        string or a host sequence: `max_len = max(max_len, n)`)."""
        kinds = self._carried_kinds(mod, f, index)
        return not kinds or any(k not in NUMBERS for k in kinds.values())

    def _carried_tensor(self, mod: str, f: dict, index: int) -> Optional[str]:
        """The name of a tensor loop ``index`` carries from pass to pass, if any."""
        return next((name for name, k in self._carried_kinds(mod, f, index).items() if k == TENSOR), None)

    def _model_call(self, fid: str, index: int, with_counter: bool = False) -> Optional[str]:
        """Why loop ``index`` calls a model on every pass; ``with_counter``: only by a call it passes
        its counter to (`do_sample_per_step(model, ..., step)`)."""
        for _, cls, _, _, tainted, _, callee, *_ in self._own(fid, index):
            if cls is None or (with_counter and f"loop:{index}" not in tainted.values()):
                continue
            if callee is not None and callee.tag == "elem" and callee.base.tag == "choice":
                continue  # `metric_map[metric](...)`: one of a table of functions a pass, not one step
            if self._runs_model(cls):
                return "calls a model"
            if cls[1] in self.calls_model:
                return f"calls {self.called(cls[1])}, which calls a model"
        return None

    def _inner_loops(self, fid: str, index: int) -> set:
        loops = self.project.functions[fid][1]["loops"]
        out = {index}
        changed = True
        while changed:
            changed = False
            for j, info in enumerate(loops):
                if j not in out and info["parent"] in out:
                    out.add(j)
                    changed = True
        return out
