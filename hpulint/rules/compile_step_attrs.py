"""A step counter kept on another object, for HPU016: an int attribute the training loop bumps
between calls (``self.global_step += 1`` in a trainer's ``fit``), read inside the compiled region
through a reference to that object (``self.trainer.global_step`` in a Lightning-style
``training_step``, ``state.step`` in a compiled function).

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md): Dynamo reads an int
attribute of a plain object as a constant and guards on its value; it does not make it dynamic
(automatic dynamic covers int arguments and, with a config flag, an nn.Module's ints), so each new
step is a recompile, and after ``recompile_limit`` (8) the function runs eagerly for the rest of
the run: 8 graphs, 7 recompiles and an eager fallback over 12 steps, whether the object is a
trainer the module holds or a module-level object. A tensor counter bumped in place (a buffer
and ``add_(1)``) is in the graph: 1 graph. An attribute read through ``self`` directly is
HPU016's own (an int attribute of the module, set between calls or bumped in the region).
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.compile_state import bumped_attribute, int_step, is_self_attr
from hpulint.rules.compiled_region import code_of, compiled_why, where

MESSAGE = (
    "`{read}` is read {where}, and `{stmt}` in the loop that calls it ({loop_fn}) changes it between calls: "
    "Dynamo reads an int attribute of a plain object as a constant and guards on its value, without making it "
    "dynamic, so every new value recompiles, and after `recompile_limit` ({limit}) Dynamo runs the function "
    "eagerly for the rest of the run (eager fallback). Pass the step in as an argument (an int argument is made "
    "dynamic after one recompile) or as a 0-d tensor, or keep the counter in a tensor buffer bumped in place"
)


class OuterCounters:
    """Filled while the file is walked (HPU016 calls it), asked after the walk."""

    def __init__(self) -> None:
        self.bumps: dict = {}  # attr -> [(statement, loop, function scope)]: `x.attr += 1` in a loop
        self.reads: list = []  # (Attribute node, function scope): `other.attr` read in a function
        self.stored: set = set()  # (id(function scope), attr) stored there (not a read of a step)

    def bump(self, an, node) -> None:
        target = bumped_attribute(node)
        if target is None or an.loop is None or not int_step(node):
            return
        self.bumps.setdefault(target.attr.value, []).append((node, an.loop, an.function))
        self.stored.add((id(an.function), target.attr.value))

    def read(self, an, node: cst.Attribute) -> None:
        fn = an.function
        if fn.kind != "function" or is_self_attr(node) or type(node.value) not in (cst.Name, cst.Attribute):
            return
        if type(node.value) is cst.Name and node.value.value == "self":
            return
        self.reads.append((an, node, fn))

    def findings(self, int_attrs: set, loop_calls: list, compiled: set, limit: int):
        """(read node, when) for each read of a bumped int attribute in a compiled region, once per
        function and attribute; ``loop_calls`` are (callee code, loop, call) of the file's loops,
        ``compiled`` the names of compiled callables."""
        seen = set()
        for an, node, fn in self.reads:
            attr = node.attr.value
            if attr not in int_attrs or attr not in self.bumps or (id(fn), attr) in seen \
                    or (id(fn), attr) in self.stored:
                continue
            bumps = [(stmt, loop, scope) for stmt, loop, scope in self.bumps[attr]
                     if _calls_compiled(loop, scope, loop_calls, compiled)]
            if not bumps:
                continue
            seen.add((id(fn), attr))
            stmt, loop, scope = bumps[0]

            def when(an=an, fn=fn, node=node, stmt=stmt, scope=scope):
                why = compiled_why(an, fn)
                if why is None or compiled_why(an, scope) is not None:
                    return None  # not read in a compiled region, or bumped inside one (HPU016's own)
                loop_fn = f"{scope.name}()" if scope.kind == "function" else "the module level"
                return MESSAGE.format(read=code_of(node), where=where(fn, why), limit=limit, loop_fn=loop_fn,
                                      stmt=code_of(stmt).strip().splitlines()[0])
            yield node, when


def _calls_compiled(loop, scope, loop_calls: list, compiled: set) -> bool:
    """The loop (or one inside it) calls a compiled callable, or a callable its function was given
    (`def fit(self, module, training_step, batches)`: the step function passed in)."""
    params = set(getattr(scope, "params", ()) or ()) if scope.kind == "function" else set()
    for callee, lp, _ in loop_calls:
        if loop not in lp.chain():
            continue
        if callee in compiled or callee in params:
            return True
    return False
