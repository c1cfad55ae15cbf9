"""Forward hooks added on every pass of a loop and never removed, for HPU016.

Measured on torch 2.13 (CPU, ``eager`` backend; fixtures in fixtures/HPU016): Dynamo inlines the
submodules of a compiled module with their hooks and guards on how many each one has
("len(self._modules['layers']._modules['1']._forward_hooks) != 1"), so a
``layer.register_forward_hook(f)`` at the start of every epoch, its handle dropped, adds a hook per
epoch and a recompile per epoch: 5 epochs, 5 graphs, 4 recompiles (and the eager fallback after
``recompile_limit``); the handle removed at the end of each epoch, or the hook registered once, one
graph.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, loop_head
from hpulint.rules.compiled_region import MANY, distinct_values, recompiles_text

HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
MESSAGE = (
    "`{compiled}` runs a submodule to which `{call}`{where} adds a hook {how}, and the handle is never "
    "removed: Dynamo guards on the number of hooks of "
    "each submodule of the compiled module (\"len(..._forward_hooks) != 1\"), so every new hook is a "
    "recompile, {values}. Register the hook once, before the loop, or keep the handle and call "
    "`handle.remove()` at the end of the pass"
)


def added_hook(an, node: cst.Call) -> Optional[str]:
    """The receiver's text for `x.register_forward_hook(f)` whose handle is dropped (the call is a
    statement of its own), or None."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value not in HOOK_METHODS or not node.args:
        return None
    stmt = an.statement
    if type(stmt) is not cst.SimpleStatementLine or not any(type(s) is cst.Expr and s.value is node
                                                            for s in stmt.body):
        return None
    return code(func.value)


def hook_growth(hooks: list, loop_calls: list, compiled_of: dict, limit: int) -> list:
    """(call of the compiled module in the loop, message) for each dropped-handle hook registration (``hooks``: call, receiver, loop
    around it, enclosing function name) made on every pass of a loop: in the loop itself, or in a
    function the loop calls (``loop_calls``), in a file that compiles a module (``compiled_of``),
    on a receiver that is not the compiled module itself (its own hooks run outside the graph). The
    finding is at the first call of a compiled name in that loop, where Dynamo's recompiles are
    tied (the guard names no line of the file)."""
    if not compiled_of:
        return []
    roots = set(compiled_of) | set(compiled_of.values())
    out = []
    for call, receiver, loop, fn_name in hooks:
        if receiver in roots:
            continue
        how = None
        if loop is not None:
            how, loop_node = f"on every pass of `{loop_head(loop.node)}`", loop.node
        elif fn_name is not None:
            for callee, where, site in loop_calls:
                if callee == fn_name or callee.endswith("." + fn_name):
                    how, loop_node = f"each time `{callee}()` runs in `{loop_head(where.node)}`", where.node
                    break
        if how is None:
            continue
        n = distinct_values(loop_node.iter) if type(loop_node) is cst.For else None
        if n is not None and n < MANY:
            continue
        site = next((c for callee, where, c in loop_calls if callee in compiled_of
                     and any(lp.node is loop_node for lp in where.chain())), None)
        if site is None:
            continue
        values = recompiles_text(n, limit, unit="passes") if n is not None else (
            "and after `recompile_limit` (8) the compiled forward runs eagerly for the rest of the run")
        out.append((site, MESSAGE.format(compiled=code(site.func), call=code(call.func) + "(...)",
                                         where=f" in {fn_name}()" if fn_name and loop is None else "", how=how, values=values)))
    return out
