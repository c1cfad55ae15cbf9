"""Pruning a compiled module again and again between its calls, for HPU016.

``torch.nn.utils.prune`` replaces the pruned parameter (``weight``) with ``weight_orig``, a
``weight_mask`` buffer and a forward pre-hook that recomputes ``weight``; pruning it again wraps
the hooks in a ``PruningContainer``. Dynamo guards on a compiled module's parameters and on the
type of each of its submodules' hooks, so measured on torch 2.13 (CPU, ``eager`` backend): a
round of training then ``prune.l1_unstructured`` on each Linear, 5 rounds, is 3 graphs and 2
recompiles ("KeyError on ..._parameters['weight']", then "___check_type_id(..._forward_pre_hooks
...)"); ``global_unstructured`` the same; pruned once before the first call, or each pruning made
permanent with ``prune.remove`` in the same round, one graph; 2 rounds, one recompile (not
reported).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, loop_head
from hpulint.rules.compile_loop_reach import first_call_of, for_loops, reached_calls, roots
from hpulint.rules.compiled_region import MANY, distinct_values

PRUNERS = frozenset({"l1_unstructured", "random_unstructured", "ln_structured", "random_structured",
                     "global_unstructured", "custom_from_mask", "identity"})
PREFIXES = ("torch.nn.utils.prune.",)
MESSAGE = (
    "`{compiled}` runs `{module}`, which `{call}`{where} prunes again on every pass of `{loop}`: pruning "
    "replaces the parameter (`weight`) with `weight_orig`, a mask and a forward pre-hook, and pruning again wraps the "
    "hooks in a `PruningContainer`; Dynamo guards on the compiled module's parameters and on its hooks' types "
    "(\"KeyError on ..._parameters['weight']\", \"___check_type_id(..._forward_pre_hooks...)\"), so the "
    "compiled forward is compiled 3 times (2 recompiles). Prune once before compiling, or make each round's "
    "pruning permanent with `prune.remove(module, \"weight\")` (the mask stays in the weights; one graph)"
)


def repeated_pruning(an, module: cst.Module, compiled_of: dict) -> list:
    """(call of the compiled module in the loop, message) for a loop of 3 or more passes (or an
    unknown number) that calls a compiled module and prunes a submodule of what it compiles, in
    the loop or in a function of the file the loop calls, without `prune.remove` there."""
    if module is None or not compiled_of:
        return []
    out, done = [], set()
    for loop in for_loops(an):
        n = distinct_values(loop.iter)
        if n is not None and n < MANY:
            continue
        reached = reached_calls(module, loop)
        quals = [(c, bind, scope, an.qualname(c.func) or "") for c, bind, scope in reached]
        if any(q.startswith(PREFIXES) and q.endswith(".remove") for _, _, _, q in quals):
            continue
        for call, bind, scope, qn in quals:
            if not qn.startswith(PREFIXES) or qn.rsplit(".", 1)[1] not in PRUNERS or not call.args:
                continue
            hit = roots(call.args[0].value, bind, scope)
            targets = {name for name, inst in compiled_of.items() if inst in hit or name in hit}
            site = first_call_of(loop, targets)
            if site is None or id(site) in done:
                continue
            done.add(id(site))
            where = f" in {scope.name.value}()" if type(scope) is cst.FunctionDef else ""
            out.append((site, MESSAGE.format(compiled=code(site.func), module=compiled_of.get(code(site.func)),
                                             call=code(call.func) + "(...)", where=where, loop=loop_head(loop))))
            break
    return out
