"""Where steps start: the functions a framework calls once per step, whatever calls them (forward()
of a model, per-step hooks, an optimizer's step(), a metric's update(), a callback's per-batch
events, a method installed as one of those by assignment). The link step makes what they call hot.
"""
from __future__ import annotations

import re
from typing import Optional

from hpulint.analysis.names import HOOK_REGISTRATIONS, STEP_HOOKS

_BATCH_EVENT = re.compile(r"^(?:on_)?(?:train_|validation_|val_|test_|predict_)?(?:batch|step|substep)_(?:start|end|begin)$|"
                          r"^on_(?:before|after)_(?:backward|optimizer_step|zero_grad)$|"
                          r"^(?:before|after)_(?:forward|loss|backward|train_batch|dataloader)$|"
                          r"^(?:batch|step)_(?:start|end|begin)$|^on_(?:train|validation|test|predict)_batch_(?:start|end)$")


FORWARD_SEED = "forward() of an nn.Module"
CALL_SEED = "__call__() of a model"
_ENGINE_STEP = "called every engine step"


def body_runs_every_step(why: str) -> bool:
    """A step hook whose body runs once per step even when it holds a step loop: a model's
    forward() (a greedy decode inside it), an engine's execute_model() (the model run once per
    pooled request), a training step hook (a preview sampled every few steps under a test inside
    it does not make each call a run); not a pipeline's __call__() or an evaluation hook that
    samples."""
    return why == FORWARD_SEED or why.endswith(_ENGINE_STEP) or why in _TRAINING_HOOKS


def step_hook_reason(name: str) -> str:
    """Why a framework's step hook (`training_step`, `compute_loss`...) runs every step."""
    return f"{name}(), called once per step"


_TRAINING_HOOKS = frozenset(step_hook_reason(name)
                            for name in ("training_step", "train_step", "training_step_end", "compute_loss"))


_TRAINER_STEP = frozenset({"get_batch_loss_metrics", "concatenated_forward", "compute_reference_log_probs",
                           "compute_ref_log_probs"})


def hook_reason(kind: Optional[str], name: str) -> Optional[str]:
    """Why a method of a framework class runs every step, if it does."""
    if kind == "optimizer" and name == "step":
        return "step() of an optimizer, called every step"
    if kind == "metric" and name in ("update", "forward"):
        return f"{name}() of a metric, called every batch"
    if kind == "callback" and _BATCH_EVENT.match(name):
        return f"{name}() of a callback, called every batch"
    if kind == "lightning" and name.startswith("on_") and _BATCH_EVENT.match(name):
        # a LightningModule's own hooks (`on_train_batch_end`, `on_before_optimizer_step`)
        return f"{name}() of a Lightning module, called every batch"
    if kind == "scheduler" and name in ("step", "scale_model_input"):
        return f"{name}() of a diffusion scheduler, called every denoising step"
    if kind == "engine" and name in ("execute_model", "sample_tokens", "take_draft_token_ids"):
        return f"{name}() of a vLLM worker or model runner, {_ENGINE_STEP}"
    if kind == "engine" and name == "generate_token":
        # text-generation-inference's server calls it for every Prefill and Decode request
        return f"{name}() of a text-generation-inference model, {_ENGINE_STEP}"
    if kind == "decoding" and name == "__call__":
        return "__call__() of a generation stopping criterion or logits processor, called by generate() at every decoding step"
    if kind == "trainer" and name in _TRAINER_STEP:
        # what a library trainer's training step calls on itself (TRL's preference trainers
        # compute the batch's loss and metrics with `get_batch_loss_metrics()`)
        return f"{name}() of a trainer, called every training step"
    if kind == "algorithm" and name == "apply":
        return "apply() of a training algorithm, called on every event it matches"
    return None


# a library model's helpers that run when it is built, loaded or saved, not on every forward
_SETUP_HELPER = re.compile(r"init|weight|tie|load|save|checkpointing|pretrained|config|embeddings|resize|"
                           r"register|^_set_|^_get_name|^_can_|^_supports|^_check|^_hf_|^_from", re.I)


def _library_forward(p, cid: str) -> bool:
    """The class runs a library model's forward(): no project class in its MRO defines one and a
    base is a library's model class (not torch's nn.Module, which calls no helper)."""
    if any("forward" in p.classes[c][1]["methods"] for c in p.mro(cid)):
        return False
    return any(not b.startswith("torch.") and b != "object" for b in p.external_bases(cid))


def _on_self(callee, classes: set) -> bool:
    """Is the summary callee `self.<name>` in a method of one of ``classes``?"""
    return isinstance(callee, list) and callee[0] == "attr" and isinstance(callee[1], list) \
        and callee[1][0] == "self" and callee[1][1] in classes


def _runs_training(f: dict) -> bool:
    """A forward() whose loops run backward() and an optimizer step: a trainer written as a
    module (`trainer()` runs the whole training); its own body runs once, its loop is the step."""
    marks = set()
    for lp in f.get("loops", ()):
        marks.update(lp["marks"])
    return "runs backward()" in marks and "runs an optimizer step()" in marks


def step_seeds(p) -> dict:
    """Functions a framework calls once per step: forward() of a model, step hooks, an
    optimizer's step(), a metric's update(), a callback's per-batch events."""
    hot = {}
    for cid, (mod, c) in p.classes.items():
        methods = c["methods"]
        if p.is_model_class(cid):
            for name in ("forward", "__call__"):
                fid = methods.get(name)
                if fid and not _runs_training(p.functions[fid][1]):
                    hot[fid] = FORWARD_SEED if name == "forward" else CALL_SEED
        if p.is_model_class(cid) and _library_forward(p, cid):
            # a subclass of a library's model that keeps the library's forward() and overrides
            # its private helpers (`_merge_input_ids_with_image_features`): nothing in the
            # project calls them, the library's forward() does, on every call
            mro = set(p.mro(cid))
            called = {c[6] for k in mro for g in p.classes[k][1]["methods"].values() if g in p.functions
                      for c in p.functions[g][1]["calls"] if _on_self(c[0], mro)}
            for name, fid in methods.items():
                if name.startswith("_") and not name.startswith("__") and name not in called \
                        and not _SETUP_HELPER.search(name):
                    hot.setdefault(fid, f"{name}() overrides a helper of a library model's forward(), "
                                        "which runs it on every call")
        if p.is_model_class(cid) and ("backward" in methods or "train_batch" in methods) \
                and ("step" in methods or any("step" in p.classes[c][1]["methods"] for c in p.mro(cid))):
            # a training engine (DeepSpeed's `DeepSpeedEngine`, its `PipelineEngine`): a module
            # that runs its own backward and optimizer step (or a whole batch), each called once
            # per training step
            for name in ("backward", "step", "train_batch"):
                if name in methods:
                    hot.setdefault(methods[name], f"{name}() of a training engine (a module with its own "
                                   "backward() and step()), called every step")
        kind = p.framework_kind(cid)
        for name, fid in methods.items():
            why = hook_reason(kind, name)
            if why and fid not in hot:
                hot[fid] = why
        for name in c["attrs"]:
            # `self.training_step = self.dynamic_ops_training_step`: a method installed as
            # a hook (or as forward) by assignment is called as that hook
            if name in STEP_HOOKS or (name == "forward" and p.is_model_class(cid)):
                why = f"installed as {name}(), called once per step"
            else:
                why = hook_reason(kind, name)
            if why is None:
                continue
            for v in p.class_attr(cid, name):
                if v.tag == "attr" and v.base.tag == "self":
                    fid = p.method(v.base.cls, v.name)
                    if fid is not None and fid not in hot:
                        hot[fid] = why
    for fid, (mod, f) in p.functions.items():
        for _, _, args, kwargs, _, _, name, _ in p.calls(fid) if f["calls"] else ():
            if name in HOOK_REGISTRATIONS:
                # `module.register_forward_hook(collect)`, `x.register_hook(save_grad)`: the hook
                # runs on every forward or backward of what it is registered on
                when = "backward" if "backward" in name or name == "register_hook" else "forward"
                for hook in p.functions_passed(args, kwargs):
                    hot.setdefault(hook, f"a hook given to {name}(), run on every {when}")
        if f["cls"] is not None and f["name"] in STEP_HOOKS and fid not in hot:
            hot[fid] = step_hook_reason(f["name"])
        elif (f["cls"] is None and f["kind"] != "module" and f["params"][:1] == ["self"]
              and f["name"].endswith("forward") and fid not in hot):
            # `def gaudi_llama_forward(self, ...)`, assigned over a model's forward
            hot[fid] = "a forward() written to replace a model's (its first parameter is self)"
    return hot
