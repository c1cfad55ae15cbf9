"""Global torch settings a loop changes between the calls of a compiled callable, for HPU017.

Dynamo guards every graph on the global state ("GLOBAL_STATE changed: num_threads",
"... default_dtype"), and a graph made under one value does not run under another. Measured on
torch 2.13 (CPU, ``eager`` backend): ``torch.set_num_threads(n)`` for ``n`` in 1, 2, 4 around
the calls of one compiled model, directly or in a helper the loop calls, is 3 graphs and 2
recompiles (``range(1, 5)``: 4 graphs); 1, 2, 1, 2: 2 graphs (the second value's graph is kept);
the same value every pass, or set once before the loop, one graph. ``torch.set_default_dtype``
over three dtypes: 3 graphs. (``use_deterministic_algorithms`` with ``warn_only`` and the
reduced-precision flags can make 3 or more combinations: compile_global_flags.)
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code, loop_head
from hpulint.rules.compile_loop_reach import first_call_of, for_loops, reached_calls, resolve
from hpulint.rules.compiled_region import MANY, distinct_values, recompiles_text

SETTERS = {"torch.set_num_threads": "num_threads", "torch.set_default_dtype": "default_dtype"}
MESSAGE = (
    "`{name}` is called in `{loop}`, which sets `{setter}({arg})`{where} to {n} different values: Dynamo guards "
    "each graph on the global state (\"GLOBAL_STATE changed: {state}\"), so each new value is a new graph, "
    "{values}. Set it once before the first call, or measure each setting in its own process (or with a fresh "
    "`torch.compile` per setting and `torch._dynamo.reset()` between them)"
)


def global_state_changes(an, module: cst.Module, compiled: set, limit: int) -> list:
    """(first call of a compiled name in the loop, message) for a `for` over 3 or more known values
    that passes its target to `torch.set_num_threads`/`set_default_dtype`, in its body or in a
    function of the file it calls, and calls a compiled callable (``compiled``: names called)."""
    if module is None or not compiled:
        return []
    out, done = [], set()
    for loop in for_loops(an):
        n = distinct_values(loop.iter)
        if n is None or n < MANY or type(loop.target) is not cst.Name:
            continue
        for call, bind, scope in reached_calls(module, loop):
            state = SETTERS.get(an.qualname(call.func) or "")
            if state is None or not call.args:
                continue
            arg = resolve(call.args[0].value, bind)
            if type(arg) is not cst.Name or arg.value != loop.target.value:
                continue
            site = first_call_of(loop, compiled)
            if site is None or id(site) in done:
                continue
            done.add(id(site))
            where = f" (in {scope.name.value}())" if type(scope) is cst.FunctionDef else ""
            out.append((site, MESSAGE.format(name=code(site.func), loop=loop_head(loop), setter=code(call.func),
                                             arg=code(call.args[0].value), where=where, n=n, state=state,
                                             values=recompiles_text(n, limit))))
            break
    return out
