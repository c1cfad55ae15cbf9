"""A list argument whose length a loop over a few listed sizes sets, for HPU017.

A detector fed a Python list of images (torchvision-style ``model(images)``, stacked in ``forward``)
by a loop whose queue sizes are listed: Dynamo guards on a list's length (``len(L['images']) == 4``)
and never makes it dynamic, so each new length is a graph of its own. Measured on torch 2.13 (CPU,
``eager`` backend): lists of 4, 4, 3, 4, 2, 4, 5, 4 images, each ``[torch.rand(...) for _ in
range(n)]``: 4 graphs, 3 recompiles; the same images stacked by the caller before the call (one
tensor whose batch size is made dynamic): 2 graphs, 1 recompile. A length that follows a counter over
more values than the recompile limit is HPU017's own case (an eager fallback); this one is the
bounded one: a literal list or ``range`` of sizes (also through a module-level name bound to one).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_value_forms import _length_of
from hpulint.rules.compiled_region import (
    MANY, Drawn, distinct_values, drawn_sizes, literal_ints, names_in, recompiles_text,
)

LENGTHS = (
    "`{arg}` is a list whose length changes from one call of the compiled `{name}` to the next (`{made}`, "
    "{how}): Dynamo guards on a list's length and never makes it dynamic, so it compiles the function once "
    "per length, {values}. Stack the items into one tensor before the call (its size is made dynamic after "
    "one recompile), or pad the list to a fixed length"
)


def listed_lengths(rule, call: cst.Call, callee: str, loop, counters: dict) -> Optional[str]:
    """The message for an argument of ``call`` (in ``loop``) that is a list whose length follows loop
    counters over a known number (at least MANY) of sizes, or None (``rule``: HPU017, a LoopCalls)."""
    counters = dict(counters)
    for lp in loop.chain():  # `for n in QUEUE_SIZES`, a module-level literal list of ints
        node = getattr(lp, "node", None)
        if type(node) is cst.For and type(node.target) is cst.Name and type(node.iter) is cst.Name \
                and literal_ints(rule.literals.get(node.iter.value)):
            counters.setdefault(node.target.value, lp)
    for name, drawn in drawn_sizes(rule, loop).items():
        counters.setdefault(name, drawn)
    for a in call.args:
        if a.star == "**":
            continue
        # (`model(*views)`: Dynamo guards on the number of positional arguments too)
        expr = a.value
        value = rule.value_in_loop(expr.value, loop) if type(expr) is cst.Name else None
        for e in (expr, value):
            if e is None or not _length_of(e, counters):
                continue
            used = sorted(set(names_in(e)) & set(counters))
            n, how = _sizes(rule, counters, used)
            if n is None or n < MANY:
                continue
            return LENGTHS.format(arg=code(expr), name=callee, made=_short(e), how=how,
                                  values=recompiles_text(n, rule.limit, "lengths"))
    return None


def _sizes(rule, counters: dict, used: list) -> tuple:
    """(how many values the counters take together, how) when each is the target of a `for` over a
    literal list or range, directly or through a module-level name; (None, "") otherwise."""
    total, said = 1, []
    for u in used:
        node = getattr(counters.get(u), "node", None)
        if type(node) is not cst.For:
            return None, ""
        it = node.iter
        if type(it) is cst.Name:
            it = rule.literals.get(it.value)
        count = distinct_values(it) if it is not None else None
        if count is None:
            return None, ""
        total *= count
        drawn = isinstance(counters.get(u), Drawn)
        said.append(f"`{u} = random.choice({_short(node.iter)})`" if drawn
                    else f"`for {code(node.target)} in {_short(node.iter)}`")
    return total, ", ".join(said)


def _short(node) -> str:
    text = code(node)
    return text if "\n" not in text and len(text) <= 60 else "..."
