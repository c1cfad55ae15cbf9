"""The calls each loop body (or function body) makes, filed in its facts: markers, backward,
optimizer steps, compile calls, appends, buffers, and a call site for every other call, with the
counters its arguments carry (``p_sample(x, index=total - i - 1)``)."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.cuda import hard_wires_cuda
from hpulint.analysis.dead import why_never
from hpulint.analysis.guards import NEVER
from hpulint.analysis.int_arith import clamped, is_int_arith
from hpulint.analysis.loops import _LIBRARY_PREFIXES, _PROGRESS, BUILTIN_NAMES, iterates_marking_loader
from hpulint.analysis.names import DEFERRED_CALLBACKS, XLA_EAGER_MODE, XLA_OPTIMIZER_STEP, is_optimizer_name
from hpulint.analysis.syntax import child_nodes, is_true, keyword, last_name, string_value
from hpulint.analysis.state import CallSite
from hpulint.analysis.values import Attr, Elem, V_OPTIMIZER, V_TENSOR, V_UNKNOWN


def record_call(an, node: cst.Call) -> None:
    """File the call in the facts of the innermost loop (or function) around it."""
    fn = an.function
    loop = an.loop
    while loop is not None and id(node) in loop.iter_calls:
        loop = loop.parent  # `for x in logger.log_every(loader)`: called once, before the passes
    facts = loop.facts if loop is not None else fn.facts
    func = node.func
    name = last_name(func)
    qn = an.qualname(func)
    if loop is not None and type(func) is cst.Name and func.value == "next" and len(node.args) == 1 \
            and "next" not in an.bound_names() and iterates_marking_loader(an, node.args[0].value):
        # `batch = next(loader_iter)` on an iterator of an MpDeviceLoader: a step marked per batch
        loop.loader_marks = True
    if an.is_marker_call(node):
        dead = next((b.node for b in an.if_branches if b.device == NEVER and b.in_body), None)
        if dead is not None:  # `if args.device == "hpu": htcore.mark_step()` after `args.device = torch.device("hpu")`
            facts.dead_markers.append((node, dead, why_never(dead.test, fn.device_objects)))
            return
        facts.markers.append(node)
        an.call_statement[id(node)] = an.statement
        if qn and qn.startswith("torchcompat."):
            # Mila's torchcompat (`import torchcompat.core as acc; acc.mark_step()`): the step
            # marker is Gaudi's `htcore.mark_step` (a no-op on other devices), so code that marks
            # steps through it is written for hpu's lazy mode
            an.evidence.setdefault("hpu", "marks steps with torchcompat's mark_step (Gaudi's lazy mode)")
        return
    if qn == "setattr" and len(node.args) == 3 and type(node.args[2].value) is cst.Call:
        # `setattr(model, name, QLinear(mod))`: a layer replaced by an instance of a project module
        # (quantization, LoRA injection); a compiled model then runs its forward
        an.swapped.append((an.value(node.args[2].value), fn.name))
    if qn == "types.MethodType" and len(node.args) == 2:
        # `model._sample = types.MethodType(DreamGenerationMixin._sample, model)`: the class's
        # function runs as a method of the receiver (a model: its `self(...)` runs the model)
        an.installed.append((an.value(node.args[0].value), an.value(node.args[1].value)))
    if qn == XLA_OPTIMIZER_STEP:
        facts.opt_step.append(node)
        an.call_statement[id(node)] = an.statement
        _note_step_guard(an)
        if is_true(keyword(node, "barrier")):
            facts.markers.append(node)  # barrier=True marks the step (PyTorch/XLA docs)
            facts.barrier = True
        return
    if qn in XLA_EAGER_MODE and node.args and is_true(node.args[0].value):
        an.evidence.setdefault("eager", "turns on PyTorch/XLA's eager mode")
    if qn == "torch.set_default_device":
        an.default_device_set = True
    if qn == "torch.compile" or (qn or "").endswith("torch_xla.compile"):
        if node.args:
            target = an.qualname(node.args[0].value) or ""
            if target.startswith("torch.") and qn == "torch.compile":
                return  # `torch.compile(flex_attention)`: a kernel of torch's, not the project's code
            an.compiled.append((an.value(node.args[0].value), qn, an.compile_key() != "compile"))
        backend = string_value(keyword(node, "backend")) if keyword(node, "backend") is not None else None
        an.note_compile(f"calls {qn}({'backend=' + repr(backend) if backend else '...'})")
    elif qn in ("functools.partial", "partial") and node.args and an.qualname(node.args[0].value) == "torch.compile":
        # `compile_static = functools.partial(torch.compile, dynamic=False)`: a compile wrapper
        an.note_compile("calls functools.partial(torch.compile, ...)")
    if name in ("cuda", "to") and fn.cuda_wired is None:
        fn.cuda_wired = hard_wires_cuda(an, node)
    if type(func) is cst.Attribute:
        if name == "update" and loop is not None and _PROGRESS.search(last_name(func.value) or ""):
            loop.progress = True  # `progress_bar.update()` once a pass
        if name in ("backward", "manual_backward"):
            if an.current_class is not None:
                an.current_class.trains = True
            facts.backward.append(node)
            an.call_statement[id(node)] = an.statement
            return
        owner = func.value.value if type(func.value) is cst.Subscript else func.value
        # `optimizer.step()`, `self.optimizers["actor"].step()`: one of a dict of optimizers
        if name == "step" and (is_optimizer_name(last_name(owner)) or an.value(func.value) is V_OPTIMIZER):
            facts.opt_step.append(node)
            an.call_statement[id(node)] = an.statement
            _note_step_guard(an)
            if not node.args:
                return
            # `optimizer.step(closure)`: the call site carries the closure, which runs every step
        if name == "compile" and not node.args:
            an.compiled.append((an.value(func.value), ".compile()", an.compile_key() != "compile"))
            an.note_compile("calls .compile() on a module")
        if name in ("append", "extend", "insert") and type(func.value) is cst.Name and node.args:
            v = an.value(node.args[-1].value)
            an.refine_elements(func.value.value, Elem(v) if name == "extend" else v)
        if name == "register_buffer" and len(node.args) >= 2 and type(func.value) is cst.Name \
                and func.value.value == "self" and an.current_class is not None:
            key = string_value(node.args[0].value)
            if key:
                an.current_class.attrs.setdefault(key, []).append(V_TENSOR)
                if _made_on_host(an, node.args[1].value):
                    an.current_class.host_buffers.add(key)
        if type(func.value) is cst.Name and func.value.value == "self" and name in _MOVES \
                and an.current_class is not None:
            an.current_class.moved = True  # `self.to(device)`: its buffers go with it
    elif type(func) is cst.Name and func.value in an.function.buffer_setters and node.args \
            and an.current_class is not None:
        # `register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))`
        key = string_value(node.args[0].value)
        if key:
            an.current_class.attrs.setdefault(key, []).append(V_TENSOR)
    if qn is not None and qn.startswith(_LIBRARY_PREFIXES):
        return
    if type(func) is cst.Name:
        callee = an.lookup(func.value)
        if callee is V_UNKNOWN:
            if func.value in BUILTIN_NAMES:
                return
            callee = Attr(V_UNKNOWN, func.value)  # a global defined later: its name still says "model"
    else:
        callee = an.value(func)
    if an.current_class is not None and any(type(a.value) is cst.Name and a.value.value == "self"
                                            for a in node.args):
        an.current_class.moved = True  # `accelerator.prepare(self)`: it may move the module
    args, kwargs, tainted = [], {}, {}
    for i, a in enumerate(node.args):
        if a.star:
            if a.star == "*":
                args.append(None)
            else:
                fn.spreads.add(len(fn.calls))  # `f(**kwargs)`: any keyword may be given
            continue
        v = an.value(a.value)
        key = a.keyword.value if a.keyword is not None else len(args)
        if a.keyword is not None:
            kwargs[key] = v
        else:
            args.append(v)
        if is_int_arith(a.value) and not clamped(a.value, an.counter_in):
            hit = an.counter_in(a.value)
            if hit is not None:
                origin = hit[1]
                tainted[key] = f"param:{origin}" if isinstance(origin, str) else f"loop:{origin.index}"
    deferred = name in DEFERRED_CALLBACKS or (qn or "") in DEFERRED_CALLBACKS
    site = CallSite(node, callee, loop.index if loop is not None else -1, tuple(args), kwargs, tainted,
                    deferred, name or "")
    site.index = len(fn.calls)
    site.before = len(fn.loops)  # loops of its function that start before it
    site.guards = interval_guards(an)
    if fn.optional_ifs:
        site.optional = tuple(fn.optional_ifs[id(b.node)] for b in an.if_branches[fn.if_depth:]
                              if b.in_body and id(b.node) in fn.optional_ifs)
    fn.calls.append(site)
    an.call_sites[id(node)] = site
    facts.calls.append(site)
    an.call_sites[id(node)] = site


def interval_guards(an) -> tuple:
    """ids of the logging-interval / run-once `if`s of the current function around the point."""
    return tuple(id(b.node) for b in an.if_branches[an.function.if_depth:] if b.in_body and b.interval)


PROPERTY_READ = "<property>"


def record_property_read(an, node: cst.Attribute) -> None:
    """`self.temperature` read in a method: when the class (or a base, in any file) makes it a
    property, its getter runs there, as a call. Filed as a call with no arguments, once per name
    and loop, after the function's calls; the link keeps it only when the name resolves to a
    property."""
    fn = an.function
    me = an.lookup("self")
    if me.tag != "self" or fn.kind == "module":
        return
    loop = an.loop
    key = (node.attr.value, loop.index if loop is not None else -1)
    if key in fn.property_reads:
        return
    site = CallSite(node, Attr(me, node.attr.value), key[1], (), {}, {}, False, PROPERTY_READ)
    site.before = len(fn.loops)
    site.guards = interval_guards(an)
    fn.property_reads[key] = site  # (not among its calls: the summary files them after those)


def _note_step_guard(an) -> None:
    """The `if`s around an optimizer step are gradient-accumulation guards, not logging ones."""
    fn = an.function
    for branch in an.if_branches:
        an.wraps_step.add(id(branch.node))
        test = branch.node.test
        if type(test) is cst.Name and test.value in fn.interval_flags:
            # `if is_update_step:` around the step: that flag is the accumulation test wherever
            # the function tests it (`if is_update_step: log(dist_mean(loss))`): see flag_ifs
            fn.accumulation_flags.add(test.value)



def calls_in(expr: cst.CSTNode) -> set:
    """ids of the calls inside an expression (a loop's iterable: they run once, before the loop)."""
    out, todo = set(), [expr]
    while todo:
        n = todo.pop()
        if type(n) is cst.Call:
            out.add(id(n))
        if not isinstance(n, (cst.Lambda, cst.BaseComp)):
            todo.extend(child_nodes(n))  # (a Call is never in the whitespace or punctuation it skips)
    return out


_MOVES = frozenset({"to", "cuda", "hpu", "xpu", "to_empty"})
_CREATIONS = frozenset({"torch.tensor", "torch.Tensor", "torch.zeros", "torch.ones", "torch.full",
                        "torch.arange", "torch.LongTensor", "torch.FloatTensor", "torch.empty"})


def _made_on_host(an, value: cst.BaseExpression) -> bool:
    """`torch.tensor(0)`, `torch.Tensor([0])`: a tensor made without a device, in host memory."""
    return type(value) is cst.Call and an.qualname(value.func) in _CREATIONS \
        and keyword(value, "device") is None
