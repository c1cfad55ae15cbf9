"""A file's summary: what the rest of the project needs to know about it, as plain JSON data.

Built from the walk of one file (no other file is read), cached by content, and linked with the
other files' summaries by :mod:`hpulint.analysis.project`:

- ``defs``: the module's top-level names and their values (functions, classes, imports: so a
  package's ``__init__`` re-exports resolve);
- ``classes``: bases, ``self.<attr>`` values assigned in any method, methods;
- ``functions`` (the module body counts as one, ``<module>``): parameters and the evidence of how
  they are used, the value returned, the step facts of the body (backward(), optimizer steps,
  markers) and of each loop, and every call: callee, loop, argument values, which arguments carry
  a loop counter, whether it sits under a logging-interval or run-once test;
- ``evidence``: what in the file says it targets hpu, xla or torch.compile; ``compiled``: the
  values given to ``torch.compile`` / ``.compile()``.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.host_readers import host_read
from hpulint.analysis.names import is_env_name
from hpulint.analysis.syntax import child_nodes, last_name, names_in
from hpulint.analysis.value_json import to_json
from hpulint.analysis.values import SEQ_TENSOR, V_SEQ_TENSOR, V_UNKNOWN, Named, Used, join

VERSION = 72


def body_marks(facts, loader_marks: bool = False) -> list:
    """What a body does directly that makes it a step: reasons in order of strength."""
    out = []
    if facts.markers or loader_marks:
        out.append("marks a step")
    if facts.backward:
        out.append("runs backward()")
    if facts.opt_step:
        out.append("runs an optimizer step()")
    return out


def _call(c, wraps_step: set) -> list:
    guarded = any(g not in wraps_step for g in c.guards)
    return [to_json(c.callee), c.loop, [to_json(a) if a is not None else None for a in c.args],
            {k: to_json(v) for k, v in c.kwargs.items()}, c.tainted, c.deferred, c.name, guarded, c.before]


def _feeds(fn, lp) -> list:
    if not lp.carried_names:
        return []
    carried = set(lp.carried_names)
    return sorted({c.name for c in fn.calls if c.loop == lp.index and c.name and type(c.node) is cst.Call
                   and any(carried.intersection(names_in(a.value)) for a in c.node.args)})


_JOINS = frozenset({"cat", "concat", "concatenate", "stack"})


def _shapes_per_pass(lp) -> bool:
    """The loop's own body (not its nested loops or functions) slices with its counters
    (`actions[:, i:i + w]`, `x[:, :end]` with `end` made from the counter) or joins a carried name
    onto itself (`history = torch.cat([history, frame], 1)`): each pass records new shapes or
    bounds of its own."""
    body = getattr(lp.node, "body", None)
    if body is None:
        return False
    carried = set(lp.carried_names)
    stack = list(child_nodes(body))
    while stack:
        n = stack.pop()
        if type(n) in (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef):
            continue
        if type(n) is cst.Subscript and any(
                type(el.slice) is cst.Slice and any(part is not None and lp.counters.intersection(names_in(part))
                                                     for part in (el.slice.lower, el.slice.upper))
                for el in n.slice):
            return True
        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and n.targets[0].target.value in carried and type(n.value) is cst.Call \
                and last_name(n.value.func) in _JOINS and n.value.args \
                and type(n.value.args[0].value) in (cst.List, cst.Tuple) \
                and any(type(e.value) is cst.Name and e.value.value == n.targets[0].target.value
                        for e in n.value.args[0].value.elements):
            return True
        stack += child_nodes(n)
    return False


def _env_loops(fn) -> set:
    """The loops whose body (not a nested loop's) steps an environment with an argument: each pass
    is one environment step, the action copied to the host for it."""
    out = set()
    for c in fn.calls:
        if c.loop < 0 or c.loop in out or type(c.node) is not cst.Call or not c.node.args:
            continue
        func = c.node.func
        if type(func) is cst.Attribute and func.attr.value == "step" \
                and is_env_name(last_name(func.value)):
            out.add(c.loop)
    return out


def summarize(an) -> dict:
    functions = {}
    for fn in an.all_functions:
        calls = fn.calls + list(fn.property_reads.values()) if fn.property_reads else fn.calls
        loops = []
        env = _env_loops(fn) if fn.loops else ()
        for lp in fn.loops:
            loops.append({
                "parent": lp.parent.index if lp.parent is not None else None,
                "marks": body_marks(lp.facts, lp.loader_marks),
                "iter": to_json(lp.iter_value) if lp.iter_value is not None else None,
                "iter_name": lp.iter_name,
                "parts": lp.step_parts or (lp.mini_parts and not lp.facts.opt_step),
                "collection": lp.collection,
                "carried": bool(lp.carried_vals),
                # what the carried names hold at the end of a pass (a tensor or not is decided at link)
                "carried_vals": {n: to_json(v) for n, v in list(zip(lp.carried_names, lp.carried_vals))[:4]},
                "own_shapes": _shapes_per_pass(lp) if lp.carried_vals else False,
                # it fills a tensor it reads, at a position its counter names (`idx[:, i, j] = ix`
                # after `patch = idx[:, i0:i1, j0:j1]`): autoregressive, each pass a new step
                "fills": bool(lp.fills.intersection(lp.carried_names, lp.reads)),
                # the functions (by the name written) the body hands a carried value to
                # (`x = cache.generate(prefix, k)`)
                "feeds": _feeds(fn, lp),
                "progress": lp.progress,
                "yields": lp.yields,
                "once": lp.once,
                "len_of": to_json(lp.len_of) if lp.len_of is not None else None,
                "inputs": any(p not in ("self", "cls") for p in lp.iterated_params),
                "env": lp.index in env,
                "host_batch": lp.host_batch,
                "moves_parts": lp.moves_parts,
                "line": None,
            })
        ret = fn.ret_annotation or (join(fn.returns) if fn.returns else None)
        if fn.ret_annotation is V_SEQ_TENSOR and fn.returns and all(v.tag == "tup" for v in fn.returns):
            # `-> Tuple[Tensor, Tensor]` over `return padding_mask, sequences`: the returned
            # tuple says more, position by position (a mask and a tensor); the annotation decides
            # when it says nothing
            ret = Used(join(fn.returns), SEQ_TENSOR)
        if fn.yields and fn.ret_annotation is None:
            # a generator: what its name says, but a `@contextmanager`'s call gives what it yields
            # to `with temporary_cuda(model) as m:` (the walk binds `m` to the call's value)
            managed = fn.yielded and any(d.rsplit(".", 1)[-1] == "contextmanager" for d in fn.decorators if d)
            ret = join(fn.yielded) if managed else Named(V_UNKNOWN, fn.name)
        functions[fn.fid] = {
            "name": fn.name,
            "kind": fn.kind,
            "cls": fn.cls.cid if fn.cls is not None else None,
            "params": fn.params,
            "evidence": fn.evidence,
            "cuda": fn.cuda_wired,
            "defaults": {k: to_json(v) for k, v in fn.defaults.items()},
            "ret": to_json(ret) if ret is not None else None,
            "marks": body_marks(fn.facts),
            "fed": [[c.index, c.fed] for c in fn.calls if c.fed],
            "optional": [[c.index, list(c.optional)] for c in fn.calls if c.optional],
            "spreads": sorted(fn.spreads),
            "calls": [_call(c, an.wraps_step) for c in calls],
            "loops": loops,
            "decorators": [d for d in fn.decorators if d],
            "registers": fn.registers,
            "host_read": host_read(fn.node, fn.params) if fn.kind != "module" else None,
            "registry_getter": fn.registry_getter,
            "index_uses": [[p, to_json(v)] for p, v in fn.index_uses[:16]],
            "carried": {f"{i}:{n}": to_json(v) for (i, n), v in fn.carried_defs.items()},
            "bumps": [[to_json(v), sorted(a for a in attrs if (name, a) not in fn.attr_resets), name]
                      for name, (v, attrs) in sorted(fn.attr_bumps.items())
                      if any((name, a) not in fn.attr_resets for a in attrs)],
        }
    classes = {}
    for info in an.classes.values():
        classes[info.cid] = {
            "name": info.name,
            "bases": info.bases,
            "attrs": {k: [to_json(v) for v in vals[:8]] for k, vals in info.attrs.items()},
            "methods": info.methods,
            "counter_attrs": sorted(info.counter_attrs),
            "decorators": [d for d in info.decorators if d],
            # flags a method sets True outside any logging interval: [flag, fid]
            "step_flags": sorted({(name, fid) for name, fid, ids in info.flag_sets
                                  if all(i in an.wraps_step for i in ids)}),
        }
    defs = {}
    for name, v in an.module_scope.bindings.items():
        defs[name] = to_json(v)
    return {
        "version": VERSION,
        "module": an.module,
        "package": an.is_package,
        "defs": defs,
        "classes": classes,
        "functions": functions,
        "stars": an.star_imports,
        "evidence": an.evidence,
        "off_flags": sorted(an.off_flags),
        "compiled": [[to_json(v), how, optional] for v, how, optional in an.compiled],
        "swapped": [[to_json(v), where] for v, where in an.swapped],
        "installed": [[to_json(m), to_json(r)] for m, r in an.installed],
    }
