"""What the calls of one compiled callable differ in besides their arguments' values, for HPU017.

Measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md):

- **the autocast state around the call**: Dynamo guards on the global autocast state
  ("GLOBAL_STATE changed: autocast(cpu)_enabled", "... autocast(cpu)_dtype"), so one compiled model
  called without autocast, then under bf16 and fp16 ``torch.autocast`` gives 3 graphs and 2
  recompiles (also when a helper returns ``contextlib.nullcontext()`` or ``torch.autocast(...)`` per
  precision name); two states, one recompile; one dtype throughout, one graph. ``float32`` on the CPU
  is autocast turned off (the same state as none);
- **bool flags in several combinations** (``output_hidden_states``/``output_attentions``): Dynamo
  guards on a bool or ``None`` argument by value and never makes it dynamic, so each new combination
  of the flags the function reads is a graph: 4 combinations, 4 graphs; 3, 3; flags the function
  does not read cost nothing.

- **the grad mode around the call**: Dynamo guards on the grad mode ("GLOBAL_STATE changed:
  grad_mode"), and an input made under ``torch.inference_mode()`` has other dispatch keys ("dispatch
  key set mismatch"), so one compiled model called with gradients, under ``torch.no_grad()`` and under
  ``torch.inference_mode()`` gives 3 graphs and 2 recompiles; ``no_grad()`` and
  ``set_grad_enabled(False)`` are one state; two states, one recompile (not reported).

All three are reported at the compile call, where every recompile of the callable is tied.
"""
from __future__ import annotations

from itertools import product
from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes, code, descendants, names_in, one_line
from hpulint.rules.compiled_region import MANY, recompiles_text

AUTOCASTS = {"torch.autocast": None, "torch.amp.autocast": None, "torch.amp.autocast_mode.autocast": None,
             "torch.cpu.amp.autocast": "cpu", "torch.cuda.amp.autocast": "cuda"}
NULL = ("contextlib.nullcontext", "nullcontext")
OFF = "no autocast"
DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": None, "float": None}
CONSTANTS = ("True", "False", "None")
AUTOCAST = (
    "`{name}` is called under {n} different autocast states ({said}): Dynamo guards on the global autocast "
    "state (\"GLOBAL_STATE changed: autocast\"), so each new state is a new graph, {values}. Call it under one "
    "autocast setting and run the other settings eagerly (`with torch.compiler.set_stance(\"force_eager\"):`), "
    "or accept a full compile per setting (a second `torch.compile` of the same model shares its cache)"
)
GRAD = (
    "`{name}` is called under {n} grad modes ({said}): Dynamo guards on the grad mode (\"GLOBAL_STATE changed: "
    "grad_mode\") and on an input made under inference mode (\"dispatch key set mismatch\"), so each mode is a "
    "new graph, {values}. Use one mode for the calls that do not train (`torch.no_grad()` for both rollouts and "
    "evaluation), or run the evaluation through the uncompiled module"
)
GRAD_MODES = {"torch.no_grad": "no_grad", "torch.autograd.no_grad": "no_grad", "torch.enable_grad": "grad",
              "torch.autograd.enable_grad": "grad", "torch.inference_mode": "inference_mode",
              "torch.autograd.inference_mode": "inference_mode", "torch.set_grad_enabled": None,
              "torch.autograd.set_grad_enabled": None}
FLAGS = (
    "`{name}` is called with {n} combinations of {flags} ({said}): Dynamo guards on a bool or `None` "
    "argument by value and never makes it dynamic, so each new combination of the flags it reads is a new "
    "graph, {values}. Call it with one combination (return every output each time and drop what a caller "
    "does not need in the eager code), or run the rare combinations eagerly (`with "
    "torch.compiler.set_stance(\"force_eager\"):`)"
)


def call_states(module: cst.Module, an, sites: dict, definition) -> list:
    """(compile site, message) for each compiled callable (``sites``: name -> the node that compiles
    it) whose calls in the file run under 3 or more autocast states, or pass 3 or more combinations
    of bool flags the function reads (``definition(name)``: its FunctionDef and parameters skipped)."""
    if module is None or not sites:
        return []
    defs = {st.name.value: st for st in module.body if type(st) is cst.FunctionDef}
    calls = _calls(module, set(sites), defs)
    out = []
    for name, site in sites.items():
        mine = [c for c in calls if c[0] == name]
        if not mine:
            continue
        states = _autocast(an, mine, defs)
        if states is not None and len(states) >= MANY:
            said = ", ".join(sorted(OFF if s == OFF else f"{s[1]} on {s[0]}" for s in states))
            out.append((site, AUTOCAST.format(name=name, n=len(states), said=said,
                                              values=recompiles_text(len(states), unit="states"))))
            continue
        modes = _grad_modes(an, mine)
        if modes is not None and len(modes) >= MANY:
            said = ", ".join(sorted(modes))
            out.append((site, GRAD.format(name=name, n=len(modes), said=said,
                                          values=recompiles_text(len(modes), unit="modes"))))
            continue
        fn, skip = definition(name)
        flagged = _flags(mine, fn, skip) if fn is not None else None
        if flagged is not None:
            flags, combos, lines = flagged
            said = ", ".join(lines[:4]) + (", ..." if len(lines) > 4 else "")
            out.append((site, FLAGS.format(name=name, n=combos, flags=", ".join(f"`{f}`" for f in flags),
                                           said=said, values=recompiles_text(combos, unit="combinations"))))
    return out


def _calls(module: cst.Module, compiled: set, defs: dict) -> list:
    """(callee, call, with items around it, `for` loops around it, enclosing def or None) for each
    call of a compiled name, or of a parameter that a call of its function fills with one."""
    passed = {}  # (def name, parameter) -> compiled name given to it
    named = []  # every call of a plain name, with where it is (one walk of the module)
    stack = [(module, (), (), None)]
    while stack:
        node, withs, fors, fn = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Name:
            named.append((node, withs, fors, fn))
            if node.func.value in defs:
                params = [p.name.value for p in defs[node.func.value].params.params]
                for k, a in enumerate(node.args):
                    if type(a.value) is cst.Name and a.value.value in compiled:
                        p = a.keyword.value if a.keyword is not None else params[k] if k < len(params) else None
                        passed[(node.func.value, p)] = a.value.value
        if type(node) is cst.FunctionDef:  # (children pushed last first: the calls come in source order)
            stack += [(c, (), (), node) for c in reversed(child_nodes(node.body))]
        elif type(node) is cst.With:
            inner = withs + tuple(item.item for item in node.items)
            stack += [(c, inner, fors, fn) for c in reversed(child_nodes(node.body))]
        elif type(node) is cst.For:
            stack += [(c, withs, fors + (node,), fn) for c in reversed(child_nodes(node.body))]
        else:
            stack += [(c, withs, fors, fn) for c in reversed(child_nodes(node))]
    out = []
    for node, withs, fors, fn in named:
        name = node.func.value
        callee = name if name in compiled else passed.get((fn.name.value, name)) if fn is not None else None
        if callee is not None:
            out.append((callee, node, withs, fors, fn))
    return out


# --- autocast ------------------------------------------------------------------------------------

def _autocast(an, calls: list, defs: dict) -> Optional[set]:
    """The autocast states the calls run under (None when one of them is not known)."""
    states = set()
    for _, _, withs, fors, fn in calls:
        got = {OFF}
        for item in reversed(withs):  # the innermost autocast decides
            s = _states(an, item, fors, fn, defs, 0)
            if s is None:
                return None
            if s:
                got = s
                break
        states |= got
    return states


def _states(an, item, fors, fn, defs: dict, depth: int) -> Optional[set]:
    """The autocast states a `with` item sets: an empty set for one that is not about autocast, None
    when it is not known."""
    if type(item) is cst.IfExp:
        a, b = (_states(an, x, fors, fn, defs, depth) for x in (item.body, item.orelse))
        return None if a is None or b is None else (a | b) or set()
    if type(item) is not cst.Call:
        return set()
    qn = an.qualname(item.func) or code(item.func)
    if qn in NULL:
        return {OFF}
    if qn in AUTOCASTS:
        return _autocast_call(item, AUTOCASTS[qn], fors, fn)
    if type(item.func) is cst.Name and item.func.value in defs and depth < 2:
        helper = defs[item.func.value]
        if any(type(a.value) in (cst.SimpleString, cst.Integer) for a in item.args):
            return None  # a literal picks one branch: not worked out here
        out = set()
        for r in descendants(helper.body):
            if type(r) is cst.Return and r.value is not None:
                s = _states(an, r.value, (), helper, defs, depth + 1)
                if s is None:
                    return None
                out |= s
        return out
    return set()


def _autocast_call(call: cst.Call, device: Optional[str], fors, fn) -> Optional[set]:
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if device is None:
        dev = kw.get("device_type", positional[0] if positional else None)
        device = dev.value.strip("'\"") if type(dev) is cst.SimpleString else code(dev) if dev is not None else "?"
        dtype = kw.get("dtype", positional[1] if len(positional) > 1 else None)
    else:
        dtype = kw.get("dtype")
    enabled = _values(kw.get("enabled"), fors, fn)
    dtypes = {"default"} if dtype is None else _dtypes(dtype, fors, fn)
    if enabled is None or dtypes is None:
        return None
    out = set()
    for on in enabled:
        for dt in dtypes:
            out.add(OFF if on == "False" or dt is None else (device, dt))
    return out


def _dtypes(expr, fors, fn) -> Optional[set]:
    """The dtypes an autocast's `dtype=` takes: a literal, a `for` over literals, a name assigned a
    literal dict's item in the function (`{"bf16": torch.bfloat16, ...}[name]`); None is float32."""
    if type(expr) is cst.Attribute and code(expr.value) == "torch":
        return {DTYPES.get(expr.attr.value, expr.attr.value)}
    if type(expr) is cst.Subscript and type(expr.value) is cst.Dict:
        got = [_dtypes(el.value, (), None) for el in expr.value.elements if type(el) is cst.DictElement]
        return None if not got or None in got else set().union(*got)
    if type(expr) is not cst.Name:
        return None
    for lp in reversed(fors):
        if type(lp.target) is cst.Name and lp.target.value == expr.value and type(lp.iter) in (cst.List, cst.Tuple):
            got = [_dtypes(el.value, (), None) for el in lp.iter.elements]
            return None if None in got else set().union(*got)
    if fn is not None:
        for n in descendants(fn.body):
            if type(n) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == expr.value
                                             for t in n.targets):
                return _dtypes(n.value, (), None)
    return None


def _values(expr, fors, fn) -> Optional[list]:
    """The literal values (`"True"`, `"False"`, `"None"`) a flag takes: a literal, or a `for` target
    over a literal list of them; ["True"] when not given; None when not known."""
    if expr is None:
        return ["True"]
    if type(expr) is cst.Name and expr.value in CONSTANTS:
        return [expr.value]
    if type(expr) is cst.Name:
        for lp in reversed(fors):
            if type(lp.target) is cst.Name and lp.target.value == expr.value \
                    and type(lp.iter) in (cst.List, cst.Tuple) \
                    and all(type(el.value) is cst.Name and el.value.value in CONSTANTS for el in lp.iter.elements):
                return [el.value.value for el in lp.iter.elements]
    return None


# --- grad mode ----------------------------------------------------------------------------------

def _grad_modes(an, calls: list) -> Optional[set]:
    """The grad modes the calls run under (the innermost `with` that sets one, else the enclosing
    function's `@torch.no_grad()`/`@torch.inference_mode()` decorator, else gradients on); None when
    one of them is not known."""
    modes = set()
    for _, _, withs, _, fn in calls:
        got = None
        for item in reversed(withs):
            m = _grad_mode(an, item)
            if m == "?":
                return None
            if m is not None:
                got = m
                break
        if got is None and fn is not None:
            for d in fn.decorators:
                m = _grad_mode(an, d.decorator)
                if m == "?":
                    return None
                got = m or got
        modes.add(got or "grad")
    return modes


def _grad_mode(an, item) -> Optional[str]:
    """The grad mode a `with` item or decorator sets, None for one that sets none, "?" when not known."""
    call = item if type(item) is cst.Call else None
    qn = an.qualname(call.func if call is not None else item) or ""
    if qn not in GRAD_MODES:
        return None
    mode = GRAD_MODES[qn]
    args = [a.value for a in call.args] if call is not None else []
    if mode == "inference_mode" and args:
        flag = args[0]
        if type(flag) is cst.Name and flag.value in ("True", "False"):
            return mode if flag.value == "True" else None
        return "?"
    if mode is None:
        if len(args) != 1 or type(args[0]) is not cst.Name or args[0].value not in ("True", "False"):
            return "?"
        return "grad" if args[0].value == "True" else "no_grad"
    return mode


# --- bool flags -----------------------------------------------------------------------------------

def _flags(calls: list, fn: cst.FunctionDef, skip: int) -> Optional[tuple]:
    """(the flags that differ, the number of combinations, the calls that bring each) when the calls
    give 3 or more combinations of the bool/None parameters the function reads, else None."""
    params = list(fn.params.params)[skip:]
    read = set(names_in(fn.body))
    flags = [p for p in params if p.default is not None and type(p.default) is cst.Name
             and p.default.value in CONSTANTS and p.name.value in read]
    if len(flags) < 1:
        return None
    names = [p.name.value for p in params]
    combos, lines = set(), []
    for _, call, _, fors, _ in calls:
        if any(a.star for a in call.args):
            continue
        given = {}
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else names[k] if k < len(names) else None
            given[key] = a.value
        choices = []
        for p in flags:
            v = _values(given[p.name.value], fors, None) if p.name.value in given else [p.default.value]
            if v is None:
                break
            choices.append(v)
        else:
            new = set(product(*choices)) - combos
            if new:
                combos |= new
                lines.append(f"`{one_line(call, 70)}`")
    differ = [p.name.value for k, p in enumerate(flags) if len({c[k] for c in combos}) > 1]
    if len(combos) < MANY:
        return None
    return differ, len(combos), lines
