"""Determinism and reduced-precision flags a loop sets to 3 or more combinations between the calls of a
compiled callable, for HPU017.

Dynamo guards every graph on the global state, and that state holds two flags for
``torch.use_deterministic_algorithms(mode, warn_only=...)`` ("GLOBAL_STATE changed:
deterministic_algorithms", "... deterministic_algorithms_warn_only") and one each for
``torch.backends.cuda.matmul.allow_tf32``, ``allow_fp16_reduced_precision_reduction`` and
``allow_bf16_reduced_precision_reduction`` ("allow_fp16_reduce"...). One flag takes two values (one
recompile at most), but a loop over 3 or more combinations is a graph per combination. Measured on
torch 2.13 (CPU, ``eager`` backend): a reproducibility check run under the default, under
``use_deterministic_algorithms(True)`` and under ``(True, warn_only=True)`` around the calls of one
compiled model (the arguments from a tuple target, or ``**kwargs`` of a dict per setting) is 3
graphs and 2 recompiles; the fp16 and bf16 reduction flags over (off, off), (on, off), (on, on), the
same; the mode toggled on and off every step, 2 graphs (each kept); set once before the loop, one
graph; ``torch._dynamo.reset()`` before each setting, no recompile. (``cudnn.allow_tf32`` and
``set_float32_matmul_precision`` over "highest", "high", "medium" give 2 graphs at most.)
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code, descendants, loop_head, names_in
from hpulint.rules.compile_loop_reach import resets_dynamo, compiled_site, for_loops, reached_calls
from hpulint.rules.compiled_region import MANY, recompiles_text

DETERMINISTIC = "torch.use_deterministic_algorithms"
FLAGS = {"torch.backends.cuda.matmul.allow_tf32": "allow_tf32",
         "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": "allow_fp16_reduce",
         "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": "allow_bf16_reduce"}
MESSAGE = (
    "{name} is called in `{loop}`, which sets {setters} to {n} different combinations: Dynamo guards each graph "
    "on the global state (\"GLOBAL_STATE changed: ...\": {state}), so each combination is a new graph, {values}. "
    "Set it once before the first call, or compare the settings in separate processes (or call "
    "`torch._dynamo.reset()` before each setting)"
)


def global_flag_changes(an, module: cst.Module, compiled: set, literals: dict, limit: int) -> list:
    """(first call of a compiled name in the loop, message) for a `for` over a literal list of 3 or
    more items whose parts given to `use_deterministic_algorithms` or assigned to a reduced-precision
    flag (in the body, or in a function of the file it calls) make 3 or more combinations."""
    if module is None or not compiled:
        return []
    out = []
    for loop in for_loops(an):
        it = literals.get(loop.iter.value) if type(loop.iter) is cst.Name else loop.iter
        parts = _target_parts(loop.target)
        if type(it) not in (cst.List, cst.Tuple) or parts is None:
            continue
        reached = reached_calls(module, loop)
        if resets_dynamo(an, reached):
            continue
        used, setters, states = set(), [], []
        for call, bind, _ in reached:
            if (an.qualname(call.func) or "") != DETERMINISTIC:
                continue
            names = {n for a in call.args for n in names_in(bind.get(code(a.value), a.value))}
            if names & set(parts):
                used |= names & set(parts)
                setters.append(f"`{code(call.func)}(...)`")
                states += ["deterministic_algorithms", "deterministic_algorithms_warn_only"]
        for n in descendants(loop.body):
            if type(n) is cst.Assign and len(n.targets) == 1 and set(names_in(n.value)) & set(parts):
                flag = FLAGS.get(an.qualname(n.targets[0].target) or "")
                if flag is not None:
                    used |= set(names_in(n.value)) & set(parts)
                    setters.append(f"`{code(n.targets[0].target)}`")
                    states.append(flag)
        if not used:
            continue
        n = _combinations(it, [parts[u] for u in sorted(used)])
        found = compiled_site(loop, reached, compiled)
        if n is None or n < MANY or found is None:
            continue
        site, helper = found  # at the call of the compiled callable, where Dynamo's guard fails
        name = f"`{code(site.func)}`" + (f" (in {helper}(), which the loop calls)" if helper else "")
        out.append((site, MESSAGE.format(name=name, loop=loop_head(loop), setters=" and ".join(setters),
                                         n=n, state=", ".join(dict.fromkeys(states)), values=recompiles_text(n, limit,
                                                                                                   "combinations"))))
    return out


def _target_parts(target: cst.BaseExpression) -> Optional[dict]:
    """name -> its position in each item (None: the whole item) for `for x in` / `for a, b in`."""
    if type(target) is cst.Name:
        return {target.value: None}
    if type(target) in (cst.Tuple, cst.List) and all(type(el.value) is cst.Name for el in target.elements):
        return {el.value.value: k for k, el in enumerate(target.elements)}
    return None


def _combinations(it, positions: list) -> Optional[int]:
    """How many different combinations of the used parts the literal items make (by their text)."""
    seen = set()
    for el in it.elements:
        v = el.value
        if type(el) is cst.StarredElement:
            return None
        if None in positions:
            seen.add(code(v))
        elif type(v) in (cst.Tuple, cst.List) and len(v.elements) > max(positions):
            seen.add(tuple(code(v.elements[k].value) for k in positions))
        else:
            return None
    return len(seen)
