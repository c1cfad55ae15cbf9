"""More things Dynamo does not put in a graph, for HPU012: logger queries, torch.autograd.functional,
the ``nn.Parameter`` constructor, a tensor as a slice bound.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md has the
table): inside a compiled region each one is a graph break at its line, with the reason Dynamo
logs quoted in the message.

- a ``logging.Logger`` method other than the log calls (those are HPU012's own):
  ``logger.isEnabledFor(...)``, ``getEffectiveLevel()``... ("logging.Logger method not supported for
  non-export cases"). The usual ``if logger.isEnabledFor(logging.DEBUG): logger.debug(...)`` breaks at
  the test on every call; its body runs only at that level, so what is in it is not reported (one
  finding, at the test);
- ``torch.autograd.functional.jacobian``/``hessian``/``vjp``/``jvp``/``hvp``/``vhp`` ("Failed to
  convert args/kwargs to proxy": the function argument; ``torch.func.jacrev``/``jacfwd``/``grad`` are
  traced, one graph);
- the ``nn.Parameter(...)`` constructor ("Attempted to use `torch.nn.Parameter()` constructor with
  Dynamo"); stored on the module (``self.scale = ...``, a new key of an ``nn.ParameterDict``), the
  module's parameters change and the next call recompiles as well;
- a tensor as a slice bound, ``x[:, :n]`` or ``x.narrow(1, 0, n)`` with ``n = mask.sum(-1).max()``
  (Python needs an int: "Unsupported Tensor.item() call with capture_scalar_outputs=False", or
  "Data dependent operator" for ``narrow``); not reported under ``capture_scalar_outputs``, as for
  ``.item()``.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import child_nodes

LOGGER_QUERIES = frozenset({"isEnabledFor", "getEffectiveLevel"})
LOGGER_NAMES = ("logger", "log", "logging", "LOGGER", "_logger", "_log")
LOGGER_WHY = ("Dynamo does not trace `Logger.{name}()` (\"logging.Logger method not supported for "
              "non-export cases\")")
FIX_LOGGER = ("Ask the logger once, outside the compiled function (`debug = logger.isEnabledFor(logging.DEBUG)` "
              "at import or set-up), and log in the eager code around it from the values it returns")
AUTOGRAD_FUNCTIONAL = frozenset({"jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"})
AF_WHY = ("Dynamo does not trace `torch.autograd.functional.{name}()` (it cannot put the function it is given "
          "in the graph: \"Failed to convert args/kwargs to proxy\")")
FIX_AF = ("Use torch.func (`jacrev`/`jacfwd`/`hessian`/`vjp`/`jvp`), which Dynamo traces, or take the "
          "derivatives with `torch.autograd.grad(..., create_graph=True)` in the eager code")
PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
PARAMETER_WHY = ("Dynamo does not trace the `nn.Parameter()` constructor (\"Attempted to use "
                 "`torch.nn.Parameter()` constructor with Dynamo\"); stored on the module, it changes the "
                 "module's parameters, so the next call recompiles too")
FIX_PARAMETER = ("Create the parameters in `__init__` (all the keys known up front, or `nn.LazyLinear`-style "
                 "modules materialised by one eager call before compiling), not inside forward")
SLICE_WHY = ("a tensor used as a slice bound must be read to the host as a Python int (\"Unsupported "
             "Tensor.item() call with capture_scalar_outputs=False\")")
FIX_SLICE = ("Keep the full length and mask the padding (a size that changes per batch also recompiles), "
             "or compute the bound in the eager code (in the collator) and slice there")


def is_logger(an, node: cst.BaseExpression) -> bool:
    """`logging`, or a name or attribute spelled as a logger (`logger`, `self.log`)."""
    qn = an.qualname(node) or ""
    if qn == "logging":
        return True
    name = node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else ""
    return name in LOGGER_NAMES


def region_call(an, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call of this module's kinds, or None."""
    func = node.func
    qn = an.qualname(func) or ""
    if qn in PARAMETER:
        return "`nn.Parameter(...)`", PARAMETER_WHY, FIX_PARAMETER, lambda: True
    module, _, name = qn.rpartition(".")
    if module == "torch.autograd.functional" and name in AUTOGRAD_FUNCTIONAL:
        return f"`{qn}()`", AF_WHY.format(name=name), FIX_AF, lambda: True
    if type(func) is cst.Attribute:
        method = func.attr.value
        if method in LOGGER_QUERIES and is_logger(an, func.value):
            return f"`{method}()` of a logger", LOGGER_WHY.format(name=method), FIX_LOGGER, lambda: True
    return None


def narrow_bounds(node: cst.Call) -> list:
    """The start and length arguments of `x.narrow(dim, start, length)`."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value != "narrow":
        return []
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    out = positional[1:3]
    out += [a.value for a in node.args if a.keyword is not None and a.keyword.value in ("start", "length")]
    return out


def slice_bounds(node: cst.Subscript) -> list:
    """The bounds (start, stop, step) of the slices in a subscript: `x[:, :n]` -> [n]."""
    out = []
    for el in node.slice:
        s = el.slice
        if type(s) is cst.Slice:
            out += [b for b in (s.lower, s.upper, s.step) if b is not None and type(b) is not cst.Integer]
    return out


def under_logger_test(an) -> bool:
    """The point is in the body of `if logger.isEnabledFor(...):` (or another logger query): the
    test breaks on every call, the body runs only at that level and is not reported."""
    for b in an.if_branches:
        if b.in_body and _queries_logger(an, b.node.test):
            return True
    return False


def _queries_logger(an, test: cst.BaseExpression) -> bool:
    cache = an.__dict__.setdefault("_logger_tests", {})  # (each test is asked for every point under it)
    got = cache.get(id(test))
    if got is None:
        got = cache[id(test)] = _walk_for_logger_query(an, test)
    return got


def _walk_for_logger_query(an, test: cst.BaseExpression) -> bool:
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in LOGGER_QUERIES \
                and is_logger(an, n.func.value):
            return True
        stack += child_nodes(n)
    return False
