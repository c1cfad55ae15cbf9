"""Does the replay show the mechanism each static finding claims? (No torch import here.)

A finding at line L is **confirmed** when the replay shows, at L:

* HPU001: recompilations caused by a constant that changed at L;
* HPU002, HPU005: a host sync at L in (about) every step: at least 2, and at least 80% of the
  steps (optimizer steps if the script has any, else backward passes, else step markers);
* HPU003: at least 2 recompilations caused by an input shape (or constant) of the op at L;
* HPU004 (the finding is on a ``for``/``while`` line): the graph grew with no step marker over
  more than one training iteration, recorded from a line inside that loop;
* HPU006: a recompilation caused by a shape made at L (the output of a data-dependent op that
  ran on the host there, or the indices a boolean mask made there, changed shape) or by a
  constant that changed at L (a slice bound read from data); or the data-dependent op at L ran
  on the host in (about) every step;
* HPU007 (the finding is on the ``DataLoader(...)`` call): a recompilation caused by a batch of
  that DataLoader that is shorter in its first dimension than the batch before it;
* HPU018 (the finding is on the padding call): a recompilation caused by an input whose length
  (a dimension after the first) changed, uploaded at L or later in the loop or function around L;
* HPU008: a host sync at L in (about) every step (the test read on the host); the evidence
  also counts the extra graphs recorded for the other paths, when the replay took more than one.

Otherwise it is **not reproduced** (with what the replay did see there). HPU009 and HPU010 are
**not checked**: HPU Graphs and ``torch.compile`` are not simulated (the shims run both as
plain lazy-mode code), so their mechanism cannot show. Codes the verifier does not know are
**not checked** too. ``unexplained()`` lists the recompilations and syncs that no finding
accounts for: the linter's blind spots.
"""
from __future__ import annotations

import os

from .replay_queries import (  # noqa: F401 (loop_ranges, statement_ranges, steps_estimate: the API)
    EVERY_STEP, HOST_RUN, _attr, _changes_at, _every_step, _fmt, _growth_in, _host_runs_at, _loop_at,
    _made_at, _new_length, _padded_lengths, _path_lines, _paths_in, _read, _recompiles, _same_file,
    _short_batches, _syncs_at, _values, loop_ranges, scope_range, statement_ranges, steps_estimate,
)

KNOWN = ("HPU001", "HPU002", "HPU003", "HPU004", "HPU005", "HPU006", "HPU007", "HPU008", "HPU018")
NOT_SIMULATED = {
    "HPU009": "HPU Graphs are not simulated: the replay runs the wrapped model in lazy mode, "
              "without capture, replay or the APIs' input checks",
    "HPU010": "torch.compile is not simulated: the replay runs the compiled code as it is, so "
              "a graph break cannot show",
}


def confirm(findings, run_result: dict, source: str | None = None) -> list:
    """One dict per finding: ``{"code", "line", "status", "message", ...counts}``.

    ``findings`` are ``hpulint.model.Finding`` objects (or dicts with ``code`` and ``line``);
    ``run_result`` is what ``replay.run``/``replay.replay`` returned. ``source`` is the
    script's text, used to find a loop's extent for HPU004 (read from ``run_result["script"]``
    when not given).
    """
    if run_result.get("profile") == "compile":  # real Dynamo: compile_confirm.py
        from .compile_confirm import confirm as confirm_compile

        return confirm_compile(findings, run_result, source)
    script = run_result.get("script")
    steps = steps_estimate(run_result)
    loops = None
    statements = None
    out = []
    for f in findings:
        code, line = _attr(f, "code"), _attr(f, "line")
        item = {"code": code, "line": line, "name": _attr(f, "name"), "message": _attr(f, "message")}
        if code == "HPU001":
            n, ch = _changes_at(run_result, script, line, ("constant",))
            item["recompiles"] = n
            if n >= 1:
                item["status"] = "confirmed"
                item["evidence"] = (f"{n} recompilation{'s' * (n != 1)} caused by a constant that "
                                    f"changed at this line ({_values(ch)})")
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"no recompilation was caused by a constant at this line "
                                    f"({run_result.get('compiles')} compilations, "
                                    f"{run_result.get('mark_steps')} step markers)")
        elif code == "HPU003":
            n, ch = _changes_at(run_result, script, line, ("shape", "constant"))
            item["recompiles"] = n
            if n >= 2:
                item["status"] = "confirmed"
                what = (f"input {ch[0].get('input')}" if ch[0]["kind"] == "shape"
                        else "a constant")
                item["evidence"] = (f"{n} recompilations: {what} of the op at this line changed "
                                    f"every step ({_values(ch)})")
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"{n} recompilation{'s' * (n != 1)} caused by a shape at "
                                    f"this line (needs 2 or more)")
        elif code in ("HPU002", "HPU005"):
            count, what = _syncs_at(run_result, script, line)
            item["syncs"] = count
            item["steps"] = steps
            need = max(2, int(EVERY_STEP * steps)) if steps else 2
            if count >= need:
                item["status"] = "confirmed"
                item["evidence"] = f"{count} host syncs ({what}) in {steps} steps"
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"{count} host sync{'s' * (count != 1)} at this line in "
                                    f"{steps} steps (every step needs {need})")
        elif code == "HPU004":
            if loops is None:
                text = source
                if text is None and script and os.path.exists(script):
                    with open(script, encoding="utf-8") as fh:
                        text = fh.read()
                loops = loop_ranges(text or "")
            rng = _loop_at(loops, line)
            if rng is None:
                item["status"] = "not reproduced"
                item["evidence"] = "no loop at this line"
            else:
                ev = _growth_in(run_result, script, rng[0], rng[1])
                item["loop"] = list(rng)
                if ev is None:
                    item["status"] = "not reproduced"
                    item["evidence"] = (f"no graph grew across iterations of the loop at lines "
                                        f"{rng[0]}-{rng[1]}")
                elif ev["kind"] == "growth":
                    item["status"] = "confirmed"
                    item["evidence"] = (f"{ev.get('optimizer_steps', 0)} optimizer steps and "
                                        f"{ev.get('backward_passes', 0)} backward passes went into "
                                        f"one graph with no step marker ({ev.get('nodes')} nodes)")
                else:
                    item["status"] = "confirmed"
                    item["evidence"] = ev["cause"]["summary"]
        elif code == "HPU006":
            n, ch = _made_at(run_result, script, line)
            runs, what = _host_runs_at(run_result, script, line)
            item["recompiles"] = n
            item["host_runs"] = runs
            item["steps"] = steps
            every, need = _every_step(runs, steps)
            parts = []
            if n:
                shapes = [c for c in ch if c["kind"] == "shape"]
                if shapes:
                    c = shapes[0]
                    parts.append(f"{n} recompilation{'s' * (n != 1)} caused by a shape made at "
                                 f"this line ({c.get('input')}: {_fmt(c['old'])} -> "
                                 f"{_fmt(c['new'])}{' ...' if len(shapes) > 1 else ''})")
                else:
                    parts.append(f"{n} recompilation{'s' * (n != 1)} caused by a constant that "
                                 f"changed at this line ({_values(ch)})")
            if runs:
                parts.append(f"{runs} host run{'s' * (runs != 1)} ({what}) in {steps} steps")
            if n >= 1 or every:
                item["status"] = "confirmed"
                item["evidence"] = "; ".join(parts)
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"no recompilation was caused by a shape or constant made at "
                                    f"this line, and {runs} host run{'s' * (runs != 1)} of a "
                                    f"data-dependent op in {steps} steps (every step needs {need})")
        elif code == "HPU007":
            _input_recompiles(item, *_short_batches(run_result, script, line),
                              "a shorter batch of this DataLoader")
        elif code == "HPU018":
            _input_recompiles(item, *_padded_lengths(run_result, script, scope_range(_read(source, script), line)),
                              "a new length of a batch padded here", uploaded=True)
        elif code == "HPU008":
            count, what = _syncs_at(run_result, script, line)
            item["syncs"] = count
            item["steps"] = steps
            every, need = _every_step(count, steps)
            if statements is None:
                statements = statement_ranges(_read(source, script))
            rng = statements.get(line)
            paths = _paths_in(run_result, script, *rng) if rng else 0
            item["path_recompiles"] = paths
            if every:
                item["status"] = "confirmed"
                item["evidence"] = f"{count} host syncs ({what}) in {steps} steps"
                if paths:
                    item["evidence"] += (f"; {paths + 1} graphs for the paths taken ({paths} "
                                         f"recompilation{'s' * (paths != 1)} with other ops at "
                                         f"lines {rng[0]}-{rng[1]})")
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"{count} host sync{'s' * (count != 1)} at this line in "
                                    f"{steps} steps (every step needs {need})")
        elif code in NOT_SIMULATED:
            item["status"] = "not checked"
            item["evidence"] = NOT_SIMULATED[code]
        else:
            item["status"] = "not checked"
            item["evidence"] = "the verifier has no check for this rule"
        out.append(item)
    return out


def unexplained(findings, run_result: dict, source: str | None = None) -> list:
    """Recompilations and host syncs in the replay that no finding explains."""
    if run_result.get("profile") == "compile":
        from .compile_confirm import unexplained as unexplained_compile

        return unexplained_compile(findings, run_result, source)
    script = run_result.get("script")
    by_code = {}
    for f in findings:
        by_code.setdefault(_attr(f, "code"), set()).add(_attr(f, "line"))
    recompile_lines = by_code.get("HPU001", set()) | by_code.get("HPU003", set())
    sync_lines = set().union(*(by_code.get(c, set()) for c in ("HPU002", "HPU005", "HPU008")))
    dynamic_lines = by_code.get("HPU006", set())
    loader_lines = by_code.get("HPU007", set())
    padded = [scope_range(_read(source, script), x) for x in by_code.get("HPU018", ())]
    loops = []
    branches = []
    if by_code.get("HPU004") or by_code.get("HPU008"):
        text = _read(source, script)
        all_loops = loop_ranges(text)
        loops = [r for r in (_loop_at(all_loops, x) for x in by_code.get("HPU004", ())) if r]
        statements = statement_ranges(text)
        branches = [statements[x] for x in by_code.get("HPU008", ()) if x in statements]
    groups = {}
    for e in _recompiles(run_result):
        cause = e.get("cause", {})
        changes = cause.get("changes", [])
        lines = {c.get("line") for c in changes if _same_file(c.get("file"), script)}
        made = {c.get("from_line") for c in changes if c.get("kind") == "shape"
                and _same_file(c.get("from_file"), script)}
        constants = {c.get("line") for c in changes if c.get("kind") == "constant"
                     and _same_file(c.get("file"), script)}
        loaders = {c.get("loader_line") for c in changes if c.get("kind") == "shape"
                   and _same_file(c.get("loader_file"), script)}
        paths = {x for c in changes for x in _path_lines(c, script)}
        if cause.get("kind") == "grew" and any(c.get("carried") for c in changes):
            grown = {x for c in changes for x in c.get("lines", [])}
            if any(lo <= x <= hi for x in grown if x for lo, hi in loops):
                continue
        elif lines & recompile_lines or (made | constants) & dynamic_lines or loaders & loader_lines:
            continue
        elif padded and any(lo <= (c.get("from_line") or 0) <= hi for c in changes if c.get("kind") == "shape"
                            and _same_file(c.get("from_file"), script) and _new_length(c) for lo, hi in padded):
            continue
        if any(lo <= x <= hi for x in paths for lo, hi in branches):
            continue
        key = ("recompile", e.get("line"), cause.get("kind"),
               tuple(sorted((c.get("kind", ""), c.get("op") or "", c.get("line") or 0)
                            for c in changes)))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"kind": "recompile", "line": e.get("line"), "site": e.get("site"),
                               "cause": cause.get("kind"), "count": 0,
                               "summary": cause.get("summary")}
        g["count"] += 1
    out = list(groups.values())
    for e in run_result.get("events", []):
        if e.get("kind") != "sync":
            continue
        here = _same_file(e.get("file"), script)
        if here and (e.get("line") in sync_lines or
                     (e.get("line") in dynamic_lines and HOST_RUN in (e.get("what") or ""))):
            continue
        out.append({"kind": "sync", "line": e.get("line"), "file": e.get("file"),
                    "what": e.get("what"), "count": e.get("count")})
    return out


def _input_recompiles(item: dict, n: int, changes: list, cause: str, uploaded: bool = False) -> None:
    """HPU007, HPU018: confirmed by a recompilation whose changed input is ``cause``."""
    item["recompiles"] = n
    if n >= 1:
        c = changes[0]
        where = f", uploaded at line {c.get('from_line')}" if uploaded else ""
        item["status"] = "confirmed"
        item["evidence"] = (f"{n} recompilation{'s' * (n != 1)} caused by {cause} ({c.get('input')}: "
                            f"{_fmt(c['old'])} -> {_fmt(c['new'])}{where})")
    else:
        item["status"] = "not reproduced"
        item["evidence"] = f"no recompilation was caused by {cause}"
