"""The narrow interface rules ask: :class:`Analysis`.

While the file is walked, a rule reads the facts around its node (``an.loop``, ``an.function``,
``an.value(expr)``, ``an.counter_in(expr)``, ``an.here()``) and reports, with a deferred
condition when the answer needs the whole project. After the walk the engine links the project
and calls :meth:`Analysis.bind`; then the deferred conditions run and may ask what values *are*
(``an.is_tensor(v)``, ``an.is_host(v)``...), whether a loop is a step loop
(``loop.is_step_loop``), whether a function is hot, and whether a point runs every step
(``an.every_step(here)``), all answered through the project facts.
"""
from __future__ import annotations

from typing import NamedTuple, Optional
import libcst as cst

from hpulint.analysis import guards
from hpulint.analysis.facts import FileEnv, FileFacts
from hpulint.analysis.calls import calls_in
from hpulint.analysis.resolve import Resolver
from hpulint.analysis.state import Loop, Scope
from hpulint.analysis.syntax import names_in
from hpulint.analysis.values import (
    DATA, DEVICE_TENSORS, HOST, MASK, MODEL, SEQ_TENSOR, TENSOR, R, Val,
)
from hpulint.analysis.walker import Walker


# code whose target is not known runs on either lazy device: a test that excludes both
# (`if not (is_xla_tensor(x) or is_hpu_tensor(x)):`) keeps it off every target
_LAZY_TARGETS = {None: ("hpu", "xla")}


class Here(NamedTuple):
    """Where a report was made: its function, loop and the `if` branches around it."""

    function: Scope
    loop: Optional[Loop]
    branches: tuple


class Analysis(Walker):
    def __init__(self, module: str = "<string>", is_package: bool = False, target: str = "auto",
                 extra_markers: tuple = ()) -> None:
        super().__init__(module, is_package, target, extra_markers)
        self.facts: Optional[FileFacts] = None
        self.resolver: Optional[Resolver] = None

    def release(self) -> None:
        """Break the references between scopes, loops and classes (and to the tree's nodes),
        so the file's tree is freed as soon as the engine drops it: see ``FileState.release``."""
        for obj in (*self.all_functions, *self.scopes, *self.all_loops, *self.classes.values()):
            obj.__dict__.clear()
        self.__dict__.clear()

    # --- binding to the project ----------------------------------------------------------

    def bind(self, facts: FileFacts) -> None:
        """Take the project's answers: step loops, hot functions, targets, counters."""
        self.facts = facts
        carried = {(fn.fid, i, n): v for fn in self.all_functions for (i, n), v in fn.carried_defs.items()}
        self.resolver = Resolver(FileEnv(facts, carried))
        for fn in self.all_functions:
            info = facts.ask(("fn", fn.fid))
            fn.hot_reason = info["hot"]
            fn.steps_reason = info["steps"]
            fn.model_reason = info["model"]
            fn.compiled_reason = info["compiled"]
            fn.eager_reason = info.get("eager")
            fn.cuda_reason = info.get("cuda")
            fn.compiled_optionally = info.get("optional", False)
            fn.target_info = info["target"]
            fn.counter_reasons = info["counters"]
            fn.fed_reasons = info.get("fed", {})
            for lp in fn.loops:
                lp.step_reason = facts.ask(("loop", fn.fid, lp.index))

    # --- what values are (after bind) -------------------------------------------------------

    def resolve(self, v) -> R:
        if not isinstance(v, Val):
            v = self.value(v)
        if self.resolver is None:
            raise RuntimeError("hpulint: a rule asked what a value is before the project was linked")
        return self.resolver(v)

    def is_tensor(self, v) -> bool:
        """Any tensor: on the device, or on the host (a CPU tensor, a NumPy array)."""
        return self.resolve(v).kind in (TENSOR, MASK, HOST)

    def is_device_tensor(self, v) -> bool:
        return self.resolve(v).kind in DEVICE_TENSORS

    def is_host(self, v) -> bool:
        return self.resolve(v).kind == HOST

    def is_mask(self, v) -> bool:
        return self.resolve(v).kind == MASK

    def is_data_scalar(self, v) -> bool:
        return self.resolve(v).kind == DATA

    def is_model(self, v) -> bool:
        return self.resolve(v).kind == MODEL

    def is_tensor_tuple(self, v) -> bool:
        return self.resolve(v).kind == SEQ_TENSOR

    def kind(self, v) -> str:
        return self.resolve(v).kind

    # --- where we are ------------------------------------------------------------------------

    def here(self, node: Optional[cst.CSTNode] = None) -> Here:
        """``node``: the expression reported, for the branch of a conditional expression on a
        device (`loss.item() if not use_tpu else 0`) it is in."""
        branches = tuple(self.if_branches)
        if node is not None and any(self.ifexps):
            extra = []
            for entry in self.ifexps:
                if entry is not None:
                    ifexp, device = entry
                    side = True if _holds(ifexp.body, node) else False if _holds(ifexp.orelse, node) else None
                    if side is not None:
                        extra.append(guards.Branch(ifexp, side, False, device))
            branches += tuple(extra)
        return Here(self.function, self.loop, branches)

    def counter_why(self, here: Here, origin) -> Optional[str]:
        """Why a counter changes every step (after bind): its loop is a step loop, or the
        parameter gets a step loop's counter from a caller. None: it does not."""
        if isinstance(origin, Loop):
            return f"the loop {origin.step_reason}" if origin.is_step_loop else None
        reasons = getattr(here.function, "counter_reasons", None) or {}
        why = reasons.get(origin)
        return f"`{origin}` is {why}" if why else None

    def hot_reason(self, here: Here) -> Optional[str]:
        """Why the point runs every step: the innermost step loop around it wins; else its
        function when that is hot (a loop inside forward() runs every step too, but once per
        step, unrolled into one graph)."""
        outer = here.function.outer_here
        if outer is not None and here.loop is None:
            return self.hot_reason(outer)
        loop = here.loop
        while loop is not None:
            if loop.is_step_loop:
                return f"in a step loop that {loop.step_reason}"
            loop = loop.parent
        fn = here.function
        why = getattr(fn, "hot_reason", None)
        if why:
            # (one clause, no nested parentheses: "in forward() of an nn.Module", "in update(),
            # called from the step loop in ...")
            return f"in {why}" if why.startswith(f"{fn.name}()") else f"in {fn.name}(), {why}"
        return None

    def hot_context(self):
        """A zero-argument callable telling, after bind, why this point runs every step."""
        here = self.here()
        return lambda: self.hot_reason(here)

    def log_guarded(self, here: Here) -> bool:
        """Under a logging-interval or run-once test within the innermost step loop around the
        point (or anywhere in its function, when no loop around it steps: a function called per
        step): a guard above a loop over the values to log counts too. An `if` that wraps an
        optimizer step is gradient accumulation, not logging."""
        outer = here.function.outer_here
        if outer is not None and here.loop is None:
            return self.log_guarded(outer)
        loop = here.loop
        step = next((lp for lp in loop.chain() if lp.is_step_loop), None) if loop is not None else None
        depth = step.if_depth if step is not None else here.function.if_depth
        for b in here.branches[depth:]:
            if b.exits is not None and step is not None and (b.exits == "return" or b.exits is step):
                return True  # `if step >= total: print(loss.item()); return`: the last pass only
            if b.in_body and b.interval and id(b.node) not in self.wraps_step:
                if b.flag and self._step_flag(here, b.flag):
                    continue  # `if self.should_print:` set True on every optimizer step
                if b.pin_only and step is not None and not (b.once & step.counters):
                    continue  # `if fold == 0:` around a whole step loop: every step of that fold
                if step is not None and _outer_only(b.node.test, step):
                    continue  # `if epoch % 100 == 0:` in the batch loop: every batch of that epoch
                return True
        return False

    def _step_flag(self, here: Here, flag: str) -> bool:
        cls = here.function.cls
        return cls is not None and bool(self.facts.ask(("step-flag", cls.cid, flag)))

    def runs_once(self, here: Here) -> bool:
        """Under a test that pins a counter of the innermost step loop around the point, or of a
        loop around that one, to one value (`if i == 0:`, `if counter == 0:` for a prefill): the
        body runs on one pass, so what it bakes into the graph is the same every run. A counter
        of a loop inside the step (`for i, group in enumerate(param_groups): if i == 0:`) pins
        nothing across steps."""
        loop = here.loop
        step = next((lp for lp in loop.chain() if lp.is_step_loop), None) if loop is not None else None
        if step is None:
            return False
        counters = set()
        for lp in step.chain():
            counters |= lp.counters
        return any(b.in_body and b.once & counters for b in here.branches[step.if_depth:])

    def evaluated_on(self, here: Here, devices: tuple) -> bool:
        """Whether an operand that runs only after the device tests ``devices`` (each (device,
        positive), from the operands before it in an `and`/`or`) runs on the target at all."""
        if not devices:
            return True
        target = self.target_of(here.function)
        return any(all(guards.runs_on(d, p, t) for d, p in devices) for t in _LAZY_TARGETS.get(target, (target,)))

    def never_given_branch(self, here: Here) -> Optional[str]:
        """The parameter (default None or False, `if verbose:`, `if callback is not None:`) whose
        test keeps the point from running because no project caller gives it, if any."""
        optional = here.function.optional_ifs
        for b in here.branches if optional else ():
            name = optional.get(id(b.node)) if b.in_body else None
            if name is not None and self.facts.ask(("never-given", here.function.fid, name)):
                return name
        return None

    def device_excluded(self, here: Here) -> Optional[str]:
        """The device test that keeps the point off the target device, if any."""
        target = self.target_of(here.function)
        targets = _LAZY_TARGETS.get(target, (target,))
        for b in here.branches:
            if b.device is None:
                continue
            device, positive = b.device
            if not b.in_body:
                positive = not positive
            if not any(guards.runs_on(device, positive, t) for t in targets):
                return device
        return None

    def same_every_pass(self, here: Here, node) -> bool:
        """The expression has the same value in every pass of the innermost step loop around the
        point: it calls nothing and reads only names no pass binds (`indices[:2 * beam_size]`,
        `beam_size` read from a tensor once, before the loop)."""
        if calls_in(node):
            return False
        bound = self.step_bound_names(here)
        return bound is not None and not bound.intersection(names_in(node))

    @staticmethod
    def step_bound_names(here: Here) -> Optional[set]:
        """The names a pass of the innermost step loop around the point binds (its counters and
        assignments, its nested loops' too); None when no step loop is around it."""
        step = next((lp for lp in (here.loop.chain() if here.loop else ()) if lp.is_step_loop), None)
        if step is None:
            return None
        bound: set = set()
        for lp in here.function.loops:
            if step in lp.chain():
                bound |= lp.assigned | lp.counters
        return bound

    def every_step(self, here: Here) -> Optional[str]:
        """Why the point runs on the device every step, or None (not hot, logging only, or
        guarded off the target device). An opt-in parameter no project caller gives still counts:
        a library's public function is called with it by its users (bark's `top_p`)."""
        why = self.hot_reason(here)
        if why is None or self.log_guarded(here) or self.device_excluded(here):
            return None
        return why

    # --- targets -------------------------------------------------------------------------------

    def target_of(self, fn: Scope) -> Optional[str]:
        if self.configured_target in ("hpu", "xla"):
            return self.configured_target
        info = getattr(fn, "target_info", None)
        if info:
            return info[0]
        return self.target

    def target_evidence(self, fn: Scope) -> Optional[str]:
        if self.configured_target in ("hpu", "xla"):
            return f"target = \"{self.configured_target}\" in the configuration"
        info = getattr(fn, "target_info", None)
        if info:
            return info[1]
        t = self.target
        return self.evidence.get(t) if t else None

    @property
    def target(self) -> Optional[str]:
        """'hpu', 'xla' or None for the file: the configuration, else its own imports and device
        strings, else the target its functions get from their callers (after bind)."""
        if self.configured_target in ("hpu", "xla"):
            return self.configured_target
        if "hpu" in self.evidence:
            return "hpu"
        if "xla" in self.evidence:
            return "xla"
        for fn in self.all_functions:
            info = getattr(fn, "target_info", None)
            if info:
                return info[0]
        return None

    # --- compiled regions (torch.compile) -------------------------------------------------

    def compiled_why(self, fn: Scope) -> Optional[str]:
        """Why ``fn`` runs inside a compiled region (Dynamo traces it), or None (after bind)."""
        return getattr(fn, "compiled_reason", None)

    def loader_fed(self, call) -> Optional[str]:
        """The lazy target of a training step loop, in any file of the project, that iterates the
        loader this `DataLoader(...)` call makes; None when none does (or not in lazy mode)."""
        site = self.loader_sites.get(call)
        got = self.facts.ask(("loader-fed", site.site)) if site is not None else None
        if not got or not got[1]:
            return None
        return self.configured_target if self.configured_target in ("hpu", "xla") else got[0]

    def lazy_mode(self, fn: Scope) -> bool:
        """Whether code in ``fn`` can run in lazy mode (after bind): not when Dynamo traces it
        (unless only an optional compile reaches it), nor when it runs eagerly next to compiled
        code (see ``Linked._eager``)."""
        if getattr(fn, "eager_reason", None) or getattr(fn, "cuda_reason", None):
            return False  # (code written for CUDA only runs on no lazy device: analysis.cuda)
        return not getattr(fn, "compiled_reason", None) or getattr(fn, "compiled_optionally", False)

    # --- loops and functions -------------------------------------------------------------------

    def is_off_flag(self, name: str) -> bool:
        """An argparse option of the project that is False unless given (`action="store_true"`)."""
        return bool(self.facts.ask(("off-flag", name)))

    def loop_output(self, here: Here, node) -> bool:
        """The host copy at ``node`` is what a loop that does not train produces (an image
        written out, tokens streamed, detections unpacked for a scorer): see analysis.outputs."""
        from hpulint.analysis.outputs import is_loop_output

        return is_loop_output(self, here, node)

    def loop_training(self, loop: Loop) -> dict:
        """backward(), optimizer steps and markers of a loop with its nested loops and callees."""
        return self.facts.ask(("train", loop.scope.fid, loop.index))


def first_function(an: Analysis) -> Optional[Scope]:
    for s in reversed(an.scopes):
        if s.kind == "function":
            return s
    return None


def _holds(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack = [root]
    while stack:
        n = stack.pop()
        if n is node:
            return True
        stack.extend(n.children)
    return False


def _outer_only(test: cst.BaseExpression, step: Loop) -> bool:
    """The test reads only counters of loops around the step loop (an epoch's)."""
    names = set(names_in(test))
    outer = set()
    for lp in step.chain():
        if lp is not step:
            outer |= lp.counters
    return bool(names) and names <= outer - step.counters
