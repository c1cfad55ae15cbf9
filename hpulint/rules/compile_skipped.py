"""Context managers, serialisation and LR-scheduler calls Dynamo does not trace, for HPU012.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md has the
table): inside a compiled region each one is a graph break at its line, with the reason Dynamo
logs quoted in the message.

- context managers Dynamo does not enter: ``torch.autograd.graph.save_on_cpu``,
  ``saved_tensors_hooks``, ``torch.utils.flop_counter.FlopCounterMode``,
  ``torch.autograd.detect_anomaly``/``set_detect_anomaly`` (their constructors are marked as not to be
  traced, then "Dynamo does not know how to enter a `save_on_cpu` context manager") and a
  ``torch.device`` used as one ("... enter a `device` context manager"). As for ``fork_rng``, Dynamo
  cannot resume inside the block: the function holding the ``with`` runs eagerly, and nothing in the
  block is a break of its own. ``disable_saved_tensors_hooks``, ``torch.profiler.profile``,
  ``record_function``, ``no_grad`` and ``torch.nn.attention.sdpa_kernel`` are traced (no break);
- serialisation: ``torch.save``/``torch.load`` (torch's serialisation is marked as not to be traced)
  and ``pickle.dump``/``dumps``/``load``/``loads`` (C builtins Dynamo does not know);
- a learning-rate scheduler's ``step``, ``get_last_lr``, ``state_dict`` and ``load_state_dict``
  (``torch.optim.lr_scheduler``: "Dynamo developers have intentionally marked that the function
  `LRScheduler.step` should not be traced"), on an object built by a ``torch.optim.lr_scheduler``
  class (or by a ``get_*schedule*`` factory of ``transformers``/``diffusers``, which return one).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants

UNENTERED = {
    "torch.autograd.graph.save_on_cpu": "save_on_cpu",
    "torch.autograd.graph.saved_tensors_hooks": "saved_tensors_hooks",
    "torch.utils.flop_counter.FlopCounterMode": "FlopCounterMode",
    "torch.autograd.detect_anomaly": "detect_anomaly",
    "torch.autograd.set_detect_anomaly": "set_detect_anomaly",
    "torch.autograd.anomaly_mode.detect_anomaly": "detect_anomaly",
    "torch.autograd.anomaly_mode.set_detect_anomaly": "set_detect_anomaly",
    "torch.device": "device",
}
UNENTERED_WHY = ("Dynamo does not enter a `{name}` context manager (\"Dynamo does not know how to enter a `{name}` "
                 "context manager\"{skip}): it cannot resume inside the block, so the function that holds the `with` "
                 "runs eagerly")
SKIP_INIT = "; its constructor is marked as not to be traced"
FIX_UNENTERED = {
    "save_on_cpu": ("Enter it in the eager code around the compiled call and its backward (`with save_on_cpu(): "
                    "loss = compiled(x); loss.backward()`), not inside the compiled module"),
    "saved_tensors_hooks": ("Register the hooks in the eager code around the compiled call and its backward, not "
                            "inside the compiled module"),
    "FlopCounterMode": ("Count the FLOPs once, in the eager code, on the uncompiled module (`with "
                        "FlopCounterMode(display=False) as c: model(x)`), and reuse the count for the throughput "
                        "log"),
    "detect_anomaly": ("Turn anomaly detection on in the eager code around the compiled call, for a debugging run "
                       "only"),
    "set_detect_anomaly": ("Turn anomaly detection on in the eager code around the compiled call, for a debugging "
                           "run only"),
    "device": "Pass `device=` to the factory calls instead (`torch.zeros(n, device=x.device)`)",
}
SERIALIZE = {"torch.save": "torch's serialisation is marked as not to be traced",
             "torch.load": "torch's serialisation is marked as not to be traced",
             "pickle.dump": "a C builtin it does not know", "pickle.dumps": "a C builtin it does not know",
             "pickle.load": "a C builtin it does not know", "pickle.loads": "a C builtin it does not know"}
SERIALIZE_WHY = "Dynamo does not trace `{name}()` ({why})"
FIX_SERIALIZE = ("Save or load in the eager code around the compiled function (after the call, every N steps, from "
                 "the module itself), not inside it")
SCHEDULER_METHODS = frozenset({"step", "get_last_lr", "state_dict", "load_state_dict"})
SCHEDULER_FACTORIES = ("transformers.", "diffusers.optimization.")
SCHEDULER_WHY = ("Dynamo does not trace `LRScheduler.{name}()` (torch's learning-rate schedulers: \"intentionally "
                 "marked that the function `LRScheduler.{name}` should not be traced\")")
FIX_SCHEDULER = ("Step the scheduler in the eager code around the compiled function (after `optimizer.step()`); "
                 "pass the learning rate in as a tensor if the compiled code needs it")


def unentered_with(an, item: cst.BaseExpression) -> Optional[tuple]:
    """(what is said, why, fix) for a `with` item Dynamo does not enter (other than fork_rng), or None."""
    if type(item) is not cst.Call:
        return None
    name = UNENTERED.get(an.qualname(item.func) or "")
    if name is None:
        return None
    why = UNENTERED_WHY.format(name=name, skip="" if name == "device" else SKIP_INIT)
    return f"`with {_short(item)}:`", why, FIX_UNENTERED[name]


def serialize_call(an, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for torch.save/load or a pickle call, or None."""
    qn = an.qualname(node.func) or ""
    why = SERIALIZE.get(qn)
    if why is None:
        return None
    return f"`{qn}()`", SERIALIZE_WHY.format(name=qn, why=why), FIX_SERIALIZE, lambda: True


def scheduler_call(an, built, fn, node: cst.Call) -> Optional[tuple]:
    """(check, subject) for `sched.step()` and the scheduler's other skipped methods, where
    `sched` (a module-level name or `self.<attr>`) is built by an LR scheduler class; the check
    and the subject (what is said, why, fix) run after the walk. Not in a function that steps an
    optimizer too (`opt.step(); sched.step()`, the compiled-optimizer recipe): measured, Dynamo
    breaks at the optimizer's step there (the scheduler wraps it), not at the scheduler's."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value not in SCHEDULER_METHODS:
        return None
    method = func.attr.value
    steps = [c.func.value for c in descendants(fn.node) if type(c) is cst.Call and type(c.func) is cst.Attribute
             and c.func.attr.value == "step" and c is not node] if type(fn.node) is cst.FunctionDef else []
    values = [an.value(s) for s in steps]

    def check() -> bool:
        made = {q for s in steps for q in built.built_as(fn, s)}
        if any(an.kind(v) == "optimizer" for v in values) \
                or any(q.startswith("torch.optim.") and not is_scheduler(q) for q in made):
            return False
        return any(is_scheduler(q) for q in built.built_as(fn, func.value))

    return check, lambda: (f"`{code(func)}()`", SCHEDULER_WHY.format(name=method), FIX_SCHEDULER)


def is_scheduler(qn: str) -> bool:
    """A class of `torch.optim.lr_scheduler`, or a scheduler factory of transformers or diffusers
    (`get_linear_schedule_with_warmup`, `get_scheduler`: they return a `LambdaLR`)."""
    if qn.startswith("torch.optim.lr_scheduler."):
        return True
    leaf = qn.rsplit(".", 1)[-1]
    return qn.startswith(SCHEDULER_FACTORIES) and leaf.startswith("get_") and "schedule" in leaf


def _short(node: cst.CSTNode) -> str:
    text = code(node)
    return text if len(text) <= 60 and "\n" not in text else code(node.func) + "(...)"
