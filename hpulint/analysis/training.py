"""Whether a training step may run a function: asked of the linked project for each host copy
that may be a loop's output (see :mod:`hpulint.analysis.outputs`). It reads only the linked
facts (no libcst), so a warm run that checks its cached answers does not import the parser."""
from __future__ import annotations

import weakref
from typing import Optional

_CALLERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # Linked -> its callers map
# per-step hooks a trainer runs for evaluation only (Lightning runs them without gradients)
EVAL_HOOKS = frozenset({"validation_step", "validation_step_end", "test_step", "predict_step", "prediction_step",
                        "eval_step", "eval_forward"})


def reached_by_training(linked, fid: str) -> bool:
    """Whether ``fid`` runs in a step that trains, or may: it is a per-step hook or forward()
    (which training runs too), some step loop that trains calls it (directly or through hot
    functions), or it is hot through a path this does not follow (a callback)."""
    callers = _unguarded_callers(linked)
    seen, todo = set(), [fid]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        why = linked.hot.get(f) or ""
        if f != fid and not why:
            continue  # a caller that does not run every step
        if why and not why.startswith("called from"):
            if linked.project.functions[f][1]["name"] in EVAL_HOOKS:
                continue  # validation_step(): the evaluation the trainer runs, without training
            return True  # forward(), a hook: training runs it too
        direct = callers.get(f, [])
        if not direct and why:
            return True  # hot through a callback or another path not followed here
        for g, loop in direct:
            step = _step_loop_around(linked, g, loop)
            if step is None:
                todo.append(g)
                continue
            facts = linked.training_facts(g, step)
            if facts["backward"] or facts["opt_step"]:
                return True
    return False


def _step_loop_around(linked, fid: str, loop: int) -> Optional[int]:
    loops = linked.project.functions[fid][1]["loops"]
    while loop is not None and loop >= 0:
        if (fid, loop) in linked.step_loops:
            return loop
        loop = loops[loop]["parent"]
    return None


def _unguarded_callers(linked) -> dict:
    """fid -> [(caller fid, loop index)] of the calls not under a logging-interval test (made
    once per linked project: each question used to walk every call site of the project)."""
    callers = _CALLERS.get(linked)
    if callers is None:
        callers = {}
        for g, sites in linked.sites.items():
            for loop, cls, *_rest in sites:
                guarded = _rest[-1]
                if cls is not None and cls[1] is not None and not guarded:
                    callers.setdefault(cls[1], []).append((g, loop))
        _CALLERS[linked] = callers
    return callers
