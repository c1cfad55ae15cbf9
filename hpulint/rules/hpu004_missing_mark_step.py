"""HPU004 missing-mark-step: a training loop on a lazy device that never marks a step.

Sources: Gaudi docs, "HPU Graphs for Training": "mark step is needed for HPU lazy
mode before and after the optimizer step" and "Usage of mark_step": added after
backward and after the optimizer step. In lazy mode ops are only recorded until a step marker:
without one the graph of every iteration is appended to the last, and nothing runs until a
tensor is read. PyTorch/XLA needs one marker per step (``xm.mark_step()``, ``torch_xla.sync()``,
or iterating an ``MpDeviceLoader``, which marks a step per batch).
"""
from __future__ import annotations

import libcst as cst

from hpulint.model import SAFE, Fix
from hpulint.rules.base import Rule

NONE_MESSAGE = (
    "training loop runs backward() and an optimizer step() on a lazy device ({target}) but never "
    "marks a step: the recorded graph grows every iteration and nothing runs until a tensor is "
    "read. {advice}"
)
ADVICE = {
    "hpu": "Call htcore.mark_step() after loss.backward() and after optimizer.step()",
    "xla": "Call xm.mark_step() (or torch_xla.sync()) after optimizer.step(), or iterate an MpDeviceLoader",
}
_EMPTY = cst.Module([])
DEAD = " (its step markers are under `if {test}:`, which never holds: {why})"
AFTER_BACKWARD = (
    "no step marker between backward() and the optimizer step: Gaudi lazy mode expects "
    "htcore.mark_step() after loss.backward() so the backward graph is compiled and cached on "
    "its own; add it before optimizer.step()"
)
AFTER_STEP = (
    "no step marker after the optimizer step: the optimizer's ops join the next iteration's "
    "graph. Add htcore.mark_step() after optimizer.step()"
)


class MissingMarkStep(Rule):
    code = "HPU004"
    name = "missing-mark-step"
    summary = "a lazy-device training loop with no step marker (or, on Gaudi, a missing one)"
    # (backward() and the optimizer step may both be in a callee in another file: any loop)
    triggers = ("for ", "while ")
    # a lazy-mode rule: it checks each loop's own mode (it reports after the walk)
    fix_safety = "safe"


    def finish(self) -> None:
        an = self.an
        trains = {}
        for loop in an.all_loops:
            target = an.target_of(loop.scope)
            if target is None or not loop.is_step_loop:
                continue
            if not an.lazy_mode(loop.scope) or "compile" in an.evidence:
                continue  # torch.compile / eager mode: no lazy graph to cut
            if target == "hpu" and ("deepspeed" in an.evidence or "lightning_habana" in an.evidence):
                # DeepSpeed's engine, and Lightning's HPU strategies (Fabric's and the
                # Trainer's), mark the step on Gaudi after backward() and the optimizer step
                continue
            if getattr(loop.scope, "hot_reason", None) and _counted(loop.node):
                # a few training steps (a GAN's discriminator steps) in a function a caller's step
                # loop runs once a pass: that loop is the one that marks, or is reported
                continue
            facts = an.loop_training(loop)
            if target == "hpu" and facts.get("engine"):
                continue  # (its training callees are in a module that drives DeepSpeed's engine)
            if facts["backward"] and facts["opt_step"]:
                trains[id(loop)] = (loop, target, facts)
        for loop, target, facts in trains.values():
            # the training loop is the innermost one that runs both: an epoch loop around it
            # is not reported again
            if any(id(lp) in trains for lp in an.all_loops if lp is not loop and loop in lp.chain()):
                continue
            self._check_loop(loop, target, facts)

    def _own(self, loop) -> tuple:
        """backward(), step() and marker calls written in the loop's body and nested loops."""
        an = self.an
        backward, steps, markers, dead = [], [], [], []
        for lp in an.all_loops:
            if loop in lp.chain():
                backward += lp.facts.backward
                steps += lp.facts.opt_step
                markers += lp.facts.markers
                dead += lp.facts.dead_markers
        return backward, steps, markers, dead

    def _check_loop(self, loop, target: str, facts: dict) -> None:
        backward, steps, markers, dead = self._own(loop)
        other_marks = facts["callee_markers"] or facts["loader"]
        if facts["markers"] or other_marks:
            if target == "hpu" and markers and not other_marks:
                self._gaudi_order(loop, backward, steps, markers)
            return
        fix = None
        pair = self._backward_then_step(loop, backward, steps)
        if pair is not None and not dead:  # with dead markers the fix is to their test
            b_node, s_node = pair
            fix = self._marker_fix([b_node, s_node] if target == "hpu" else [s_node], target)
        message = NONE_MESSAGE.format(target=target, advice=ADVICE[target])
        if dead:
            message += self._dead_note(dead)
        self.report(loop.node, message, fix=fix)

    @staticmethod
    def _dead_note(dead: list) -> str:
        _, branch, why = dead[0]
        return DEAD.format(test=_EMPTY.code_for_node(branch.test), why=why)

    def _backward_then_step(self, loop, backward, steps):
        """(last backward() before the first step(), that step()), both in the loop's own body."""
        order = self.an.call_order
        own = set(map(id, loop.facts.backward)) | set(map(id, loop.facts.opt_step))
        if not backward or not steps or not all(id(n) in own for n in (*backward, *steps)):
            return None  # spread over functions or nested loops
        b = min(order[id(n)] for n in backward)
        s_nodes = [n for n in steps if order[id(n)] > b]
        if not s_nodes:
            return None
        s_node = min(s_nodes, key=lambda n: order[id(n)])
        b_node = max((n for n in backward if order[id(n)] < order[id(s_node)]), key=lambda n: order[id(n)])
        return b_node, s_node

    def _marker_fix(self, calls: list, target: str):
        """Insert the target's step marker after the statements holding ``calls``."""
        an = self.an
        stmts = [an.call_statement.get(id(c)) for c in calls]
        if not all(type(s) is cst.SimpleStatementLine for s in stmts) or len({id(s) for s in stmts}) != len(stmts):
            return None
        marker, imports = marker_call(an, target)
        changes = {}
        for stmt in stmts:
            changes[stmt] = lambda updated, text=marker: cst.FlattenSentinel(
                [updated, cst.parse_statement(text + "\n")])
        return Fix(SAFE, f"insert {marker}", changes, imports)

    def _gaudi_order(self, loop, backward, steps, markers) -> None:
        """Gaudi: a marker after backward() and after optimizer.step(), reported precisely."""
        pair = self._backward_then_step(loop, backward, steps)
        if pair is None:
            return  # spread over functions: only presence is checked
        b_node, s_node = pair
        order = self.an.call_order
        b = min(order[id(n)] for n in backward)
        s = order[id(s_node)]
        ms = [order[id(m)] for m in markers]
        if not any(order[id(b_node)] < m < s for m in ms):
            self.report(b_node, AFTER_BACKWARD, fix=self._marker_fix([b_node], "hpu"))
        if not any(m > s or m < b for m in ms):
            self.report(s_node, AFTER_STEP, fix=self._marker_fix([s_node], "hpu"))


MARKER_MODULES = {
    "hpu": ("habana_frameworks.torch.core", "mark_step", "import habana_frameworks.torch.core as htcore",
            "htcore.mark_step()"),
    "xla": ("torch_xla.core.xla_model", "mark_step", "import torch_xla.core.xla_model as xm", "xm.mark_step()"),
}


def _counted(node) -> bool:
    """`for _ in range(k):`."""
    it = getattr(node, "iter", None)
    return type(it) is cst.Call and type(it.func) is cst.Name and it.func.value == "range"


def marker_call(an, target: str) -> tuple:
    """(call text, imports to add): the step marker spelled the way the file imports it."""
    module, func, import_line, default = MARKER_MODULES[target]
    spelled = an.local_name_for(f"{module}.{func}")
    if spelled is not None:
        return f"{spelled}()", ()
    if target == "xla":
        sync = an.local_name_for("torch_xla.sync")
        if sync is not None:
            return f"{sync}()", ()
    return default, (import_line,)
