"""Does real Dynamo show what each static finding claims? (The ``compile`` profile; no torch here.)

A finding at line L is **confirmed** when the run under Dynamo shows, at L:

* HPU012 (host read), HPU013 (data-dependent branch), HPU014 (data-dependent output shape,
  ``torch.equal``), HPU010 (a context manager in a compiled region): a graph break at L (for
  HPU013, anywhere in the test of the ``if``/``while`` that starts at L);
* HPU015 (shape specialised), HPU016 (module attribute), HPU017 (changing Python value): at
  least 2 recompilations of that kind, or an eager fallback, tied to L. A recompilation is tied
  to L when L is the line the guard came from, the line that called the compiled function, the
  ``torch.compile``/``.compile()`` call or the ``def`` of the compiled function (for HPU015
  also: L calls ``torch._dynamo.mark_static`` and the run recompiled on sizes). "At least 2":
  Dynamo recompiles once anyway when an int, a float or a dimension first changes, and makes
  it dynamic from then on (automatic dynamic shapes); a rule claims more than that. The kinds:
  HPU015 a size or stride guard (or an input's rank or dtype), HPU016 a guard on
  ``self.<attribute>``, HPU017 a guard on any
  other Python value (``== 'step3'``, ``len(xs) == 4``, ``G['STEP'] == 2``).

Otherwise it is **not reproduced**. The lazy-mode codes (HPU001-HPU009, HPU011) are **not
checked** on this profile: it measures Dynamo, not a lazy device's graph cache or host syncs.
``unexplained()`` lists graph breaks, recompilations and fallbacks no finding accounts for.
"""
from __future__ import annotations

import os
import re

from .dynamo_logs import first_sourced
from .replay_queries import _read

BREAK_CODES = ("HPU010", "HPU012", "HPU013", "HPU014")
RECOMPILE_CODES = ("HPU015", "HPU016", "HPU017")
NEED_RECOMPILES = 2
LAZY_ONLY = ("a lazy-mode rule: the compile profile measures Dynamo's graphs, breaks and "
             "recompilations, not a lazy device's graph cache or host syncs")


def _same_file(a, b) -> bool:
    if not a or not b:
        return False
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _attr(f, name, default=None):
    if isinstance(f, dict):
        return f.get(name, default)
    return getattr(f, name, default)


def guard_kind(guard: str) -> str:
    """``shape``, ``attribute``, ``grad`` (requires_grad and other tensor properties) or
    ``value`` (any other Python value)."""
    if not guard:
        return "value"
    if "size mismatch" in guard or "stride mismatch" in guard or "dimension mismatch" in guard \
            or ".size()" in guard or ".stride()" in guard or "attribute 'stride'" in guard:
        return "shape"  # ("'NoneType' object has no attribute 'stride'": a stride guard that could not run)
    if guard.startswith("tensor ") or "requires_grad" in guard or "dtype mismatch" in guard \
            or "device mismatch" in guard:
        return "grad"
    if guard.startswith(("self.", "L['self']", "not self.", "len(self.")) or "L['self']." in guard:
        return "attribute"
    if guard.startswith(("KeyError on self.", "___check_type_id(self.", "___check_obj_id(self.")):
        return "attribute"  # a parameter or hook of a submodule replaced (torch.nn.utils.prune)
    return "value"


_KIND = {"HPU015": "shape", "HPU016": "attribute", "HPU017": "value"}
# an attribute of an object a frame reads through a global or a local (`G['counter'].n == 3`):
# a "value" guard (HPU017: an int kept in an object by value), and also HPU016's when the code
# that changes it is the object's own method (`self.n += 1`)
_OBJECT_ATTR = re.compile(r"^(?:not )?[LG]\['\w+'\](?:\._modules\['\w+'\])*\.\w+ (?:==|!=|is) ")


def codes_for(guard: str) -> tuple:
    """The recompile rules a recompilation guarded by ``guard`` can confirm. HPU016 also covers
    the `requires_grad` of parameters changed between calls (module state, "grad" guards)."""
    kind = guard_kind(guard)
    if "dtype mismatch" in (guard or "") and "Guard failed on a parameter" in guard:
        return ("HPU016",)  # a compiled module's weights converted between calls (compile_weight_dtypes)
    if "rank mismatch" in (guard or "") or "dtype mismatch" in (guard or ""):
        return ("HPU015",)  # an input's rank or dtype: never made dynamic (compile_forms)
    if kind == "grad":
        return ("HPU016",)
    out = tuple(c for c, k in _KIND.items() if k == kind)
    if kind == "value" and _OBJECT_ATTR.match(guard or ""):
        out += ("HPU016",)
    return out


def _first_failure(event):
    if event.get("kind") == "fallback":
        return event.get("last_reason") or {}
    return first_sourced(event.get("guard_failures") or [])


def tied_lines(event, script) -> set:
    """The lines of ``script`` a recompilation or fallback is tied to (see the module doc)."""
    out = set()
    failure = _first_failure(event)
    if failure.get("line") and _same_file(failure.get("file"), script):
        out.add(failure["line"])
    if event.get("line") and _same_file(event.get("call_file"), script):
        out.add(event["line"])
    site = event.get("compiled_at")
    if site and _same_file(site[0], script):
        out.add(site[1])
    if event.get("def_line") and _same_file(event.get("file"), script):
        out.add(event["def_line"])
    return out


def break_lines_in(e, script) -> set:
    """The script's lines a graph break is at: where Dynamo logged it, and for one logged inside
    the standard library (`copy.deepcopy`), the user's call of it."""
    out = set()
    if _same_file(e.get("file"), script) and e.get("line"):
        out.add(e["line"])
    if e.get("call_line") and _same_file(e.get("call_file"), script):
        out.add(e["call_line"])
    return out


def _breaks_in(run, script, lo, hi):
    return [e for e in run.get("events", []) if e.get("kind") == "graph_break"
            and any(lo <= n <= hi for n in break_lines_in(e, script))]


def _tied(run, script, line, code):
    recs, falls = [], []
    for e in run.get("events", []):
        if e.get("kind") not in ("recompile", "fallback"):
            continue
        if code not in codes_for(_first_failure(e).get("guard", "")):
            continue
        if line in tied_lines(e, script):
            (recs if e["kind"] == "recompile" else falls).append(e)
    return recs, falls


def _marked_static_at(run, script, line) -> bool:
    return any(e.get("kind") == "mark_static" and e.get("line") == line
               and _same_file(e.get("file"), script) for e in run.get("events", []))


def _of_kind(run, script, kind):
    recs, falls = [], []
    for e in run.get("events", []):
        if e.get("kind") in ("recompile", "fallback") and _same_file(e.get("call_file"), script) \
                and guard_kind(_first_failure(e).get("guard", "")) == kind:
            (recs if e["kind"] == "recompile" else falls).append(e)
    return recs, falls


def _plural(n, word):
    return f"{n} {word}{'s' * (n != 1)}"


def _guards(events) -> str:
    guards = [_first_failure(e).get("guard", "") for e in events]
    guards = [g for g in guards if g]
    if not guards:
        return ""
    if len(guards) == 1 or guards[0] == guards[-1]:
        return guards[0]
    return f"{guards[0]} ... {guards[-1]}"


def _break_evidence(evs) -> str:
    n = sum(e.get("count", 1) for e in evs)
    reasons = sorted({e.get("reason") or "?" for e in evs})
    skipped = any(e.get("frame_skipped") for e in evs)
    text = f"{_plural(n, 'graph break')} at this line ({'; '.join(reasons)})"
    if skipped:
        text += "; Dynamo could not resume after it and ran the whole function eagerly"
    return text


def confirm(findings, run_result: dict, source: str | None = None) -> list:
    """One dict per finding: ``{"code", "line", "status", "evidence", ...}``."""
    script = run_result.get("script")
    out = []
    for f in findings:
        code, line = _attr(f, "code"), _attr(f, "line")
        item = {"code": code, "line": line, "name": _attr(f, "name"),
                "message": _attr(f, "message")}
        if code in BREAK_CODES:
            lo = hi = line
            if code == "HPU013":  # the whole test, not the body: Dynamo names the jump's line
                hi = max(line, _test_end(source, script, line))
            evs = _breaks_in(run_result, script, lo, hi)
            item["graph_breaks"] = sum(e.get("count", 1) for e in evs)
            if evs:
                item["status"] = "confirmed"
                item["evidence"] = _break_evidence(evs)
            else:
                item["status"] = "not reproduced"
                item["evidence"] = (f"no graph break at this line ({_plural(run_result.get('graph_breaks') or 0, 'graph break')} "
                                    f"in the run)")
        elif code in RECOMPILE_CODES:
            kind = _KIND[code]
            recs, falls = _tied(run_result, script, line, code)
            if code == "HPU015" and _marked_static_at(run_result, script, line):
                # mark_static at L: the shape recompilations of the run (the tensor it marked
                # is not named by Dynamo's guard, only the function's argument)
                recs, falls = _of_kind(run_result, script, "shape")
            item["recompiles"] = len(recs)
            item["fallbacks"] = len(falls)
            parts = []
            if recs:
                parts.append(f"{_plural(len(recs), 'recompilation')} ({_guards(recs)})")
            if falls:
                e = falls[0]
                parts.append(f"eager fallback of {e.get('function')} after "
                             f"{e.get('limit_name', 'recompile_limit')} ({e.get('limit')})")
            if len(recs) >= NEED_RECOMPILES or falls:
                item["status"] = "confirmed"
                item["evidence"] = "; ".join(parts)
            else:
                item["status"] = "not reproduced"
                what = {"shape": "a size", "attribute": "a module attribute",
                        "value": "a Python value"}[kind]
                item["evidence"] = (f"{_plural(len(recs), 'recompilation')} on {what} tied to this "
                                    f"line and no eager fallback (a storm needs "
                                    f"{NEED_RECOMPILES} or more)")
        else:
            item["status"] = "not checked"
            item["evidence"] = LAZY_ONLY
        out.append(item)
    return out


def _test_end(source, script, line) -> int:
    """The last line of the test expression of the if/while/assert starting at ``line``."""
    import ast

    try:
        tree = ast.parse(_read(source, script))
    except (SyntaxError, ValueError):
        return line
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)) and node.lineno == line:
            return node.test.end_lineno or line
    return line


def unexplained(findings, run_result: dict, source: str | None = None) -> list:
    """Graph breaks, recompilations and eager fallbacks that no finding explains."""
    script = run_result.get("script")
    by_code = {}
    for f in findings:
        by_code.setdefault(_attr(f, "code"), set()).add(_attr(f, "line"))
    break_lines = set().union(*(by_code.get(c, set()) for c in BREAK_CODES))
    recompile_lines = {c: by_code.get(c, set()) for c in RECOMPILE_CODES}
    out = []
    groups = {}
    for e in run_result.get("events", []):
        kind = e.get("kind")
        if kind == "graph_break":
            if break_lines_in(e, script) & break_lines:
                continue
            out.append({"kind": "graph_break", "file": e.get("file"), "line": e.get("line"),
                        "reason": e.get("reason"), "count": e.get("count", 1)})
        elif kind in ("recompile", "fallback"):
            gk = guard_kind(_first_failure(e).get("guard", ""))
            tied = tied_lines(e, script)
            if any(tied & recompile_lines[c] for c in codes_for(_first_failure(e).get("guard", ""))):
                continue
            key = (kind, e.get("function"), e.get("file"), e.get("def_line"), gk)
            g = groups.get(key)
            if g is None:
                g = groups[key] = {"kind": kind, "function": e.get("function"),
                                   "file": e.get("file"), "line": e.get("def_line"),
                                   "guard_kind": gk, "count": 0, "first": _first_failure(e)}
                out.append(g)
            g["count"] += 1
    return out
