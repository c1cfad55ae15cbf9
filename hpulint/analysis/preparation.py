"""Loops that prepare a run's inputs are not step loops (part of the link step).

A loop is a step loop when one pass is one step; calling a model is the weakest evidence of that,
and it also describes a loop that only encodes the inputs of a run: the control images, the
reference images, one prompt per text encoder, before the run's own denoising loop. Such a loop
runs once per run with as many passes as it is given items, so what its passes record is the same
on every run: its counters and accumulators are not recompiles per step, and the helpers it calls
(image preprocessing) do not run every step.

:func:`without_preparation` drops those loops from the step loops the link found in one round:
a loop over the items of a collection (not `range(n)`), a step loop only because it calls a
model (no marker, backward, optimizer step or loader), that

- precedes, at the same level of the same function, another step loop, and walks the function's
  own inputs (`for image in control_image`, a parameter) or carries nothing from one pass to the
  next (a denoising loop over the scheduler's timesteps carries its latents, and stays a step loop
  when a chunked decode loop follows it); or
- is in a function that every project caller calls at its top level, before one of the caller's
  own top-level step loops (`cond = self.prepare_latents(...)` then the denoising loop).

Loops that *finish* a run are dropped the same way: a model-only loop that carries nothing from
one pass to the next (`for i in range(0, n, chunk): frames.append(vae.decode(latents[i:i + chunk]))`)
and follows, at the same level of the same function, another step loop, or is in a function that
every project caller calls at its top level after one of its own top-level step loops
(`frames = self.decode_latents(latents)` after the denoising loop).
"""
from __future__ import annotations


def without_preparation(linked, loops: dict) -> dict:
    """``loops`` ((fid, index) -> reason) less the preparation loops (see the module docstring)."""
    p = linked.project
    callers = None
    out = dict(loops)
    for (fid, i), reason in loops.items():
        if not model_only(reason):
            continue
        f = p.functions[fid][1]
        info = f["loops"][i]
        if _per_item(fid, info):
            if callers is None:
                callers = _callers_of(linked)
            if _called_in_loops(p, callers.get(fid), callers):
                del out[(fid, i)]
                continue
        if not info.get("carried"):
            # a decode loop after the run (`for i in range(0, n, chunk): frames.append(vae.decode(...))`)
            earlier = [j for j in range(i) if (fid, j) in loops and f["loops"][j]["parent"] == info["parent"]]
            if earlier:
                del out[(fid, i)]
                continue
            if callers is None:
                callers = _callers_of(linked)
            if _called_around_steps(p, callers.get(fid), loops, after=True):
                del out[(fid, i)]
                continue
        if not info.get("collection"):
            continue
        later = [j for j in range(i + 1, len(f["loops"]))
                 if (fid, j) in loops and f["loops"][j]["parent"] == info["parent"]]
        if later and (not info.get("carried") or info.get("inputs")):
            del out[(fid, i)]
            continue
        if callers is None:
            callers = _callers_of(linked)
        if _called_around_steps(p, callers.get(fid), loops):
            del out[(fid, i)]
    return out


def _per_item(fid: str, info: dict) -> bool:
    """`for i in range(img1.shape[0]): value += lpips(img1[i], img2[i])`: the counter numbers the
    items of a parameter (its first dimension, its length), and no value the loop carries is
    handed to a call (a denoising loop hands its latents to the model)."""
    j = info.get("len_of")
    return isinstance(j, list) and len(j) == 3 and j[0] == "param" and j[1] == fid and not info.get("feeds")


def _called_in_loops(p, sites, callers: dict, depth: int = 0) -> bool:
    """Every one of ``sites`` (caller, call index) is inside a loop of its function, or at the top
    level of a function itself only called that way (and there is at least one): the items the
    callee walks are those of one pass there, a batch."""
    if not sites or depth > 3:
        return False
    return all(p.functions[g][1]["calls"][k][1] != -1 or _called_in_loops(p, callers.get(g), callers, depth + 1)
               for g, k in sites)


def model_only(reason: str) -> bool:
    """A step loop only because it calls a model (no marker, backward, optimizer or loader)."""
    return reason == "calls a model" or (reason.startswith("calls ") and reason.endswith(", which calls a model"))


def _called_around_steps(p, sites, loops: dict, after: bool = False) -> bool:
    """Every one of ``sites`` (caller, call index) is at the top level of its function, before
    (``after``: after) a step loop of that function (and there is at least one site):
    `cond = self.prepare_latents(...)` then the denoising loop; the denoising loop then
    `frames = self.decode_latents(latents)`."""
    if not sites:
        return False
    for g, k in sites:
        f = p.functions[g][1]
        call = f["calls"][k]
        before = call[8] if len(call) > 8 else None
        if call[1] != -1 or before is None:
            return False
        # (the call is at its function's top level, so every loop before it is over, nested ones
        # too: a denoising loop inside a FreeInit loop over restarts)
        span = range(before) if after else range(before, len(f["loops"]))
        if not any((g, j) in loops for j in span):
            return False
    return True


def _callers_of(linked) -> dict:
    """fid -> [(caller fid, call index)] for every classified call of the project."""
    out: dict = {}
    for g, by_call in linked.call_targets.items():
        for k, targets in enumerate(by_call):
            for t in targets:
                if t is not None and t[1] is not None:
                    out.setdefault(t[1], []).append((g, k))
    return out
