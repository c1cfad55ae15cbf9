"""Calls and statements Dynamo does not put in a graph, for HPU012 (beyond host reads).

Every entry was measured on torch 2.13 (CPU, ``eager`` backend; docs/compile-target.md has the
table): inside a compiled region each one is a graph break ("Working with Graph Breaks";
Dynamo's own explanations are quoted in the messages).

- the global RNG state: ``torch.manual_seed``, ``torch.random.manual_seed``,
  ``torch.cuda.manual_seed(_all)``, ``torch.get_rng_state``/``set_rng_state``, Python's
  ``random.seed`` ("marked as skipped"), and ``<generator>.manual_seed(...)``;
- a ``torch.Generator``: made inside the region ("Opaque objects cannot be created inside the
  torch.compile region"), or passed as ``generator=`` to a random op ("Missing `as_proxy()`"),
  also through a parameter of the compiled function when a call gives it a generator
  (compile_passed_generators);
- a change of ``requires_grad``: ``t.requires_grad = ...`` (any value), ``requires_grad_(False)`` on
  parameters or a module, ``requires_grad_()``/``(True)`` on a tensor that is not a parameter, a
  factory with ``requires_grad=True``. Not a break: ``requires_grad_(True)`` on parameters that
  already require grad, ``requires_grad_(False)`` on an intermediate (no change);
- ``warnings.warn`` ("Dynamo does not know how to trace the Python builtin `_warnings.warn`"), on
  every call that reaches it (a branch Dynamo does not take costs nothing): reported when it runs
  for ordinary inputs (see ``warning_on_input``);
- a call of a function decorated with ``torch.compiler.disable`` ("Skip calling
  `torch.compiler.disable()`d function"): the graph ends before it and resumes after it.

In a ``@contextlib.contextmanager`` generator used as ``with cm():`` in the region, only the
first of these is a break: Dynamo does not resume inside the context manager, so the function
running the ``with`` runs eagerly (no graph of its own: "the whole function runs eagerly") and
the generator's later lines, before or after its ``yield``, are never traced (measured: two clock
reads around the ``yield``, one break).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.values import Elem, Meth

SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
                   "torch.cuda.manual_seed_all", "torch.get_rng_state", "torch.set_rng_state",
                   "torch.random.get_rng_state", "torch.random.set_rng_state", "torch.cuda.get_rng_state",
                   "torch.cuda.set_rng_state", "random.seed"})
SEED_WHY = "Dynamo does not trace `{name}()` (the global RNG state: \"marked as skipped\")"
FIX_SEED = ("Seed once in the eager code before the compiled call, or draw from an explicit seed "
            "tensor (`torch.rand` with a counter-based offset) without touching the RNG state")
GEN_SEED_WHY = ("Dynamo does not trace `Generator.manual_seed()` (\"a stateful RNG operation that "
                "cannot be soundly traced\")")
GENERATOR_NEW_WHY = ("Dynamo cannot create a `torch.Generator` inside the compiled region (\"Opaque objects "
                     "cannot be created inside the torch.compile region\")")
GENERATOR_ARG_WHY = ("Dynamo cannot put a `torch.Generator` argument in the graph (\"Missing `as_proxy()` "
                     "implementation\"): the random op runs eagerly")
FIX_GENERATOR = ("Draw the random values with the generator in the eager code and pass them in, or use "
                 "the global RNG inside the compiled function (seeded once, outside it)")
RG_SET_WHY = ("Dynamo does not support setting `Tensor.requires_grad` inside the compiled region (\"setattr() "
              "on Tensor.requires_grad not supported\")")
RG_CHANGE_WHY = ("Dynamo does not support changing a tensor's `requires_grad` inside the compiled region "
                 "(\"Unsupported Tensor.requires_grad_() call\", or \"requires_grad_() intermediate leaked "
                 "as output\")")
RG_FACTORY_WHY = "Dynamo does not create a tensor with `requires_grad=True` inside the compiled region"
FIX_RG = ("Set `requires_grad` in the eager code before the compiled call (freeze or unfreeze once, "
          "not per call), or make the tensor outside and pass it in")
WARN_WHY = "Dynamo does not trace `warnings.warn` (a Python builtin it does not know) when this line runs"
FIX_WARN = ("Warn in the eager code around the compiled function, or under `if not "
            "torch.compiler.is_compiling():`")
DISABLED_WHY = "it is decorated with `torch.compiler.disable`, and Dynamo never traces such a function"
FIX_DISABLED = ("Call it in the eager code around the compiled function (on the values it returns), or "
                "accept the break where the call is rare")


CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextmanager"})


def is_context_generator(fn) -> bool:
    """A generator decorated with `@contextlib.contextmanager` (measured on 2.13: the first graph break
    in it, before or after its `yield`, makes Dynamo run the function holding the `with` eagerly; the
    later lines of the generator are never traced, nor is the generator compiled as a frame of its own)."""
    return fn is not None and any(d in CONTEXT_MANAGERS for d in getattr(fn, "decorators", ()))


def untraced(an, node: cst.Call, in_except: bool = False, passed: Optional[set] = None,
             generators=None) -> Optional[tuple]:
    """(what is said, why Dynamo breaks, fix, check) for a call HPU012 reports beyond host
    reads, or None. ``check`` runs after the project is linked."""
    func = node.func
    qn = an.qualname(func) or ""
    if qn in SEEDS:
        return f"`{qn}()`", SEED_WHY.format(name=qn), FIX_SEED, lambda: True
    if qn == "torch.Generator":
        return "`torch.Generator()`", GENERATOR_NEW_WHY, FIX_GENERATOR, lambda: True
    if qn == "warnings.warn":
        needs = None if in_except else warning_on_input(an)
        if needs is None:
            return None
        given = passed if passed is not None else set()
        return "`warnings.warn(...)`", WARN_WHY, FIX_WARN, lambda: needs <= given
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "manual_seed" and not qn.startswith(("torch.", "random.")):
            return "`.manual_seed()` of a generator", GEN_SEED_WHY, FIX_GENERATOR, lambda: True
        if method == "requires_grad_":
            return _requires_grad_call(an, node, func.value)
    gen = _generator_arg(an, node, generators)
    if gen is not None:
        return gen
    if qn.startswith("torch.") and not qn.startswith("torch.nn.") and _literal(_kw(node, "requires_grad")) is True:
        return f"`{qn.rsplit('.', 1)[1]}(..., requires_grad=True)`", RG_FACTORY_WHY, FIX_RG, lambda: True
    return None


# what a branch on the inputs' tensors tests (`if mask.dtype != torch.bool:`, `if x.dim() == 2:`)
TENSOR_META = frozenset({"dtype", "shape", "ndim", "dim", "size", "device", "is_floating_point", "is_complex",
                         "layout", "is_contiguous", "is_sparse"})


def warning_on_input(an) -> Optional[set]:
    """Whether a `warnings.warn` runs for ordinary inputs (the caller rules out `except` handlers):
    every `if` around it in its function tests a tensor's dtype, shape or device (input
    normalization, as a mask converted to bool), or there is none (an empty set); or an `if` tests
    that an optional parameter was given (`if head_mask is not None:`): then the set of those
    parameters, and the warning runs when the compiled function is called with them (the caller
    checks the keywords its calls pass). A warning under a type check, a flag or an exception
    handler is a misuse or deprecation path (torch's own `_call_impl` has many): it does not run
    on the calls a model makes, and is not reported (None)."""
    fn = an.function
    needs = set()
    for b in an.if_branches[getattr(fn, "if_depth", 0):]:
        given = _given_param(b.node.test, fn) if b.in_body else None
        if given is not None:
            needs.add(given)
        elif not _tests_tensor_meta(b.node.test):
            return None
    return needs


def _given_param(test, fn) -> Optional[str]:
    """`if p is not None:` on a parameter of the function."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
            and isinstance(test.comparisons[0].operator, cst.IsNot) \
            and isinstance(test.comparisons[0].comparator, cst.Name) \
            and test.comparisons[0].comparator.value == "None" and test.left.value in fn.params:
        return test.left.value
    return None


def _tests_tensor_meta(test) -> bool:
    stack = [test]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Attribute) and n.attr.value in TENSOR_META:
            return True
        stack += list(n.children)
    return False


def disabled_callee(an, fid: str, node: cst.Call) -> Optional[str]:
    """The name of the `torch.compiler.disable`d project function this call (made by ``fid``)
    runs, if it does (after the project is linked)."""
    site = an.call_sites.get(id(node))
    if site is None or site.index < 0:
        return None
    for kind, target, _ in an.facts.ask(("call", fid, site.index)):
        if kind == "fn" and target:
            info = an.facts.ask(("callee", target))
            if info and info.get("disabled"):
                return info["name"]
    return None


def requires_grad_store(an, target: cst.BaseExpression) -> Optional[tuple]:
    """`t.requires_grad = ...` (measured: a break whatever the value, even when it does not change)."""
    if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
        recv = an.value(target.value)
        return ("setting `.requires_grad`", RG_SET_WHY, FIX_RG,
                lambda: an.kind(recv) not in ("model", "optimizer", "other", "scalar", "seq", "none"))
    return None


def _requires_grad_call(an, node: cst.Call, recv_node: cst.BaseExpression) -> Optional[tuple]:
    arg = node.args[0].value if node.args else None
    on = True if arg is None else _literal(arg)
    if on is None:
        return None  # requires_grad_(flag): whether it changes anything is not known here
    recv = an.value(recv_node)
    said = f"`.requires_grad_({'' if arg is None else on})`"
    if _is_parameter(recv):
        if on:
            return None  # parameters already require grad: no change, no break (measured)
        return said + " on parameters", RG_CHANGE_WHY, FIX_RG, lambda: True
    if on:
        # a tensor that is not a parameter: an input or an intermediate, turned on here
        return said, RG_CHANGE_WHY, FIX_RG, lambda: an.kind(recv) in ("tensor", "host", "mask", "unknown") \
            and an.kind(recv) != "model"
    # requires_grad_(False): a break on a module (its parameters require grad), not on an
    # intermediate that does not
    return said + " on a module", RG_CHANGE_WHY, FIX_RG, lambda: an.kind(recv) == "model"


def _is_parameter(v) -> bool:
    """An item of `module.parameters()` / `named_parameters()` (a loop over them)."""
    while isinstance(v, Elem):
        v = v.base
    return isinstance(v, Meth) and v.name in ("parameters", "named_parameters")


def _generator_arg(an, node: cst.Call, generators=None) -> Optional[tuple]:
    arg = _kw(node, "generator")
    if arg is None or (isinstance(arg, cst.Name) and arg.value == "None"):
        return None
    name = node.func.attr.value if isinstance(node.func, cst.Attribute) else getattr(node.func, "value", "")
    if isinstance(arg, cst.Name) and arg.value in an.function.params:
        # a parameter: a pass-through (`generator=None` by default) unless a call of the compiled
        # function gives it a generator (compile_passed_generators)
        if generators is None:
            return None
        fn, param = an.function, arg.value
        return (f"`{name}(..., generator={param})` (a `torch.Generator` the caller passes)", GENERATOR_ARG_WHY,
                FIX_GENERATOR, lambda: generators.given(an, fn, param) is not None)
    return f"`{name}(..., generator=...)`", GENERATOR_ARG_WHY, FIX_GENERATOR, lambda: True


def _kw(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None


def _literal(node) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None
