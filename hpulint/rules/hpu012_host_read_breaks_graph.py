"""HPU012 host-read-breaks-graph: reading a tensor's value on the host inside code that
torch.compile compiles.

Sources: PyTorch docs, "torch.compile Troubleshooting" and "Working with Graph Breaks": Dynamo
cannot put a data-dependent host read (``Tensor.item()`` without ``capture_scalar_outputs``,
``tolist()``, ``print`` of a tensor) in a graph, so it ends the graph there, runs the read in
Python and compiles the rest as a resume function. Measured on torch 2.13 (docs/compile-target.md):
``.item()``/``float()``/``int()``, ``.tolist()``, ``print`` and logging of a tensor are graph
breaks; ``.cpu()`` is not (it is traced as a device copy). Two more calls Dynamo 2.13 does not
trace ("Common Graph Breaks"; "Compiled Autograd" for the backward): ``Tensor.backward()``,
``torch.autograd.grad``/``backward`` (``trace_autograd_ops`` is off by default), and NumPy random
draws that return a Python number (``np.random.uniform(a, b)`` without a size: Dynamo runs NumPy
as torch, and the scalar is a host read) or that torch's NumPy does not have
(``np.random.permutation``, ``default_rng``...). Three kinds of call that Dynamo 2.13 skips
("Working with Graph Breaks"; measured in docs/compile-target.md): a clock read (``time.time()``,
``perf_counter``, ``monotonic``, ``process_time``: C builtins it does not know), Python
``random`` draws other than ``randint``/``randrange``/``uniform`` (``random.random()``,
``gauss``, ``choice``, ``shuffle``...: "marked as skipped"), and ``copy.deepcopy`` of a tensor or
of a module (which holds tensors; a list of numbers is copied in the graph). More calls and
statements Dynamo does not trace (the global RNG state, ``torch.Generator`` arguments, changes of
``requires_grad``, ``warnings.warn``, calls of ``torch.compiler.disable``d functions) are in
compile_untraced; objects Dynamo does not trace (RNN and ``torch.ao.quantization`` modules,
``threading`` locks, a ``GradScaler``'s and an optimizer's skipped methods, ``gc`` calls, sparse
tensors, attr-dicts) in compile_unsupported; gradient hooks with side effects in compile_hooks;
``eval``/``str``/``cmath``/``globals()`` calls in compile_builtin_calls, tensor subclasses in
compile_tensor_subclasses, a ``raise`` caught outside in compile_raises (compile_operators) and
standard-library calls (``socket``, ``resource``, ``os``, ``datetime``...: a measured table) in compile_stdlib_calls.
None of them is reported under ``if not torch.compiler.is_compiling():``
(Dynamo takes the other branch).
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis.syntax import code
from hpulint.rules.compile_calls import (FIX_SLICE, SLICE_WHY, is_logger, narrow_bounds, region_call, slice_bounds,
                                         under_logger_test)
from hpulint.rules.compile_builtin_calls import builtin_call
from hpulint.rules.compile_custom_ops import CustomOps
from hpulint.rules.compile_data_reads import CONTAINS_WHY, FIX_CONTAINS, contains_operand, read_call
from hpulint.rules.compile_host_calls import host_call
from hpulint.rules.compile_library_calls import flags_with, library_call
from hpulint.rules.compile_local_classes import class_statement
from hpulint.rules.compile_move_read import move_read_fix
from hpulint.rules.compile_table_calls import table_call
from hpulint.rules.compile_untraced_ops import (ASYNC_WHY, FIX_ASYNC, FIX_NUMBER, FIX_RANDOM_, METHOD_BREAKS, NUMBER_ARGS,
                                                RANDOM_WHY, async_collective, method_break,
                                                number_argument)
from hpulint.rules.compile_operators import RegionOperators
from hpulint.rules.compile_printing import CONVERSIONS, LOG_METHODS, has_read, is_log_statement, printed
from hpulint.rules.compile_passed_generators import FIX_LAZY, LAZY_WHY, PassedGenerators
from hpulint.rules.compile_size_specializers import FIX_TEXT as FIX_SIZE_TEXT, TEXT_WHY as SIZE_TEXT_WHY, \
    comp_size_targets, size_text, sizes_change
from hpulint.rules.compile_skipped import scheduler_call, serialize_call, unentered_with
from hpulint.rules.compile_tensor_internals import internals_call, internals_read
from hpulint.rules.compile_hooks import FIX_HOOK, HOOK_WHY, hook_effects
from hpulint.rules.compile_int_strings import FIX as FIX_INT_STRING, WHY as INT_STRING_WHY, changing_int, formatted_names
from hpulint.rules.compile_iterators import FIX_NEXT, FIX_SORT, SORT_WHY, Iterators
from hpulint.rules.compile_unsupported import (ATTRDICT_WHY, FIX_ATTRDICT, FIX_FORK, FIX_LOCK, FORK_WHY, Built,
                                               fork_rng_with, lock_with, module_call, unsupported_call)
from hpulint.rules.compile_untraced import (DISABLED_WHY, FIX_DISABLED, disabled_callee,
                                            is_context_generator, requires_grad_store, untraced)
from hpulint.rules.compiled_region import (LoopCalls, captures_scalars, compiled_why, is_compile_call, is_tensor,
                                           maybe_tensor, not_traced, where)
from hpulint.rules.compile_read_messages import (
    MESSAGE, CONTEXT_MESSAGE, READ, UNTRACED, FIX_RETURN, FIX_SCALAR, FIX_PRINT, AUTOGRAD, FIX_BACKWARD, RNN_WORDS,
)

FUNCTIONAL_NS = ("torch.nn.functional.",)
LIBRARIES = ("torch.", "numpy.", "math.", "random.", "time.", "os.", "logging.", "warnings.", "copy.", "builtins.")


class HostReadBreaksGraph(RegionOperators, LoopCalls):
    code = "HPU012"
    name = "host-read-breaks-graph"
    summary = (".item()/.tolist()/float() of a tensor, print, logging, warnings.warn, .backward(), a NumPy or "
               "Python random scalar, a clock read, deepcopy of a tensor, the RNG state, a Generator argument, a "
               "requires_grad change, a torch.compiler.disable'd call, a GradScaler or optimizer.zero_grad call, "
               "gc.collect, a lock, fork_rng, a packed sequence, an RNN or fake-quantize module, a sparse tensor, an "
               "attr-dict read, a side-effect hook, next() on an iterator made outside, a for over a DataLoader or a "
               "sort of numbers read from a tensor, a logger's isEnabledFor, torch.autograd.functional, nn.Parameter(), a "
               "tensor slice bound, a save_on_cpu or FlopCounterMode context manager, torch.save or pickle, or an LR "
               "scheduler's step(), a membership test (x in t) on a tensor, math.isfinite()/sqrt()... of a tensor, torch._assert on a tensor, retain_grad(), bisect or "
               "heapq, DLPack, checkpoint_sequential, a strided nested tensor, cudnn.flags as a context manager, a "
               "torch.library op with no fake implementation, Tensor.apply_/map_, the builtin open(), torch.jit.fork/wait, "
               "ContextVar.get/set, Tensor.resize_, a string built from an int argument the calls change, send() on "
               "an outside generator, iterating a generator object passed in, dir(), sys._getframe, warnings.simplefilter, eval/exec with a namespace, str()/repr() of a tensor or str() of a size that changes, a cmath call, an operator on "
               "a non-traceable wrapper subclass or a number minus a Tensor subclass, a raise caught outside, a "
               "standard-library C call (socket, resource, os.getpid, time.sleep, datetime.now...: a measured table), "
               "globals(), default_collate, a class statement, or a hook removing its own handle inside a "
               "torch.compile'd function (graph break)")
    fix_safety = "unsafe"
    triggers = (".item(", ".tolist(", ".numpy(", "print(", "float(", "int(", "bool(", "info(", "debug(",
                "warning(", "error(", "log(", "backward(", "autograd", "random", "time", "deepcopy", "seed",
                "enerator", "requires_grad", "warn(", "disable", "rng_state", "GRU", "LSTM", "RNN", "quantiz",
                "Lock", "GradScaler", "zero_grad", "state_dict", "add_param_group", "gc.", "sparse", "__getattr__",
                "register_hook", "fork_rng", "pack_", "next(", "DataLoader", "sort", "isEnabledFor", "getEffectiveLevel",
                "Parameter", "narrow", "compile", " in ", "retain_grad", "math.", "_assert")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scalars = captures_scalars(ctx.source)
        self.module = None
        self.in_except = 0  # depth of `except` handlers around the node (an error path)
        self.built = Built()  # what names and attributes were built as (compile_unsupported)
        self.attr_reads: dict = {}  # id(function scope) -> Attribute nodes read there (attr-dicts)
        self.passed: set = set()  # keywords given (not None) to calls of compiled callables
        self.compiled_names: set = set()
        self.forked = 0  # depth of `with torch.random.fork_rng():` blocks around the node
        self.fork_withs: set = set()
        self.iters = Iterators()  # iterators made outside functions, host lists (compile_iterators)
        self.broken: set = set()  # ids of @contextmanager generators with a finding already
        self.handles: dict = {}  # id(function) -> names bound to an async collective's handle
        self.bounded: set = set()  # ids of statements with a slice-bound finding
        self.generators = PassedGenerators()  # generators given to compiled functions (compile_passed_generators)
        self.iterated: set = set()  # (id of a function, parameter) it iterates (a generator object given)
        self.comp_sizes: set = set()  # (id of a function, name) a comprehension binds to a size (compile_size_specializers)
        self.custom_ops = CustomOps()  # operators the file defines with torch.library (compile_custom_ops)
        self.internals: set = set()  # ids of functions (statements) with a storage or autograd read (data_ptr)
        self._operators_init()  # tensor subclasses, raises caught outside, `"..." % t` (compile_operators)
        if not any(word in ctx.source for word in RNN_WORDS):
            self.visit_Name = None  # no Name can spell an RNN class here: not called (dispatch)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.module = node

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._int_string(node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.in_except += 1
        self.raises.handler(self.an, node)

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.in_except -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.built.class_def(node)
        self.subclasses.class_def(self.an, node)
        if self.an.function.kind == "function" and not not_traced(self.an):  # (compile_local_classes)
            said, why, fix, check = class_statement(node)
            self._report(node.name, said, fix, check, subject=lambda: (said, why))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.iters.function_def(self.an, node)
        for d in node.decorators:
            call = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
            if (self.an.qualname(call) or "") == "torch.compile":
                self.compiled_names.add(node.name.value)
                self.generators.compiled_def(node.name.value)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in RNN_WORDS:
            self.built.mention(self.an, node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        an = self.an
        if node.attr.value in RNN_WORDS:
            self.built.mention(an, node)
        fn = an.function
        hit = internals_read(an, node, maybe_tensor) if fn.kind == "function" else None
        if hit is not None and not not_traced(an) and id(fn) not in self.internals:
            self.internals.add(id(fn))  # the first storage or autograd read of the function (compile_tensor_internals)
            self._report(node, hit[0], hit[2], hit[3], subject=lambda: hit[:2])
        if not self.built.attrdicts or fn.kind != "function" or id(node) in an._called_attrs or not_traced(an):
            return
        earlier = self.attr_reads.setdefault(id(fn), [])
        earlier.append(node)
        prior = list(earlier[:-1])
        built = self.built

        def check():
            cls = built.attrdict_of(fn, node.value)
            if cls is None or any(built.attrdict_of(fn, e.value) is not None for e in prior):
                return False  # Dynamo gives up at the first read of the function
            return True

        def subject():
            cls = built.attrdict_of(fn, node.value)
            return f"reading `{code(node)}`", ATTRDICT_WHY.format(cls=cls)
        self._report(node, None, FIX_ATTRDICT, check, subject=subject)

    def visit_With(self, node: cst.With) -> None:
        an = self.an
        if an.function.kind != "function" or not_traced(an):
            return
        fn = an.function
        blocks = [(item.item, (f"`with {code(item.item)}:`", FORK_WHY, FIX_FORK) if fork_rng_with(an, item.item)
                   else unentered_with(an, item.item) or flags_with(an, item.item))
                  for item in node.items]  # (compile_skipped, compile_library_calls)
        blocks = [(at, hit) for at, hit in blocks if hit is not None]
        if blocks:
            if not self.forked:
                at, (said, why, fix) = blocks[0]
                self._report(at, None, fix, lambda: True, subject=lambda: (said, why))
            self.forked += 1
            self.fork_withs.add(id(node))
            return
        for item in node.items:
            expr = item.item
            self._report(expr, None, FIX_LOCK, lambda expr=expr: lock_with(fn, self.built, expr) is not None,
                         subject=lambda expr=expr: lock_with(fn, self.built, expr)[:2])

    def visit_For(self, node: cst.For) -> None:
        """`for ... in loader` on a module-level DataLoader; names bound to `.tolist()` values."""
        an = self.an
        self.iters.for_loop(an, node)
        if an.function.kind != "function" or not_traced(an):
            return
        self._iterated(node.iter)
        fn, iters = an.function, self.iters
        self._report(node.iter, None, FIX_NEXT, lambda: iters.loader_loop(fn, node) is not None,
                     subject=lambda: iters.loader_loop(fn, node))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self.an.function.kind == "function" and not not_traced(self.an):
            self._iterated(node.iter)
            self.comp_sizes |= comp_size_targets(self.an, node)

    def _iterated(self, it: cst.BaseExpression) -> None:
        """A parameter iterated, that a call of the compiled function fills with a Python generator
        object (`model.parameters()`): the first iteration in the function (compile_passed_generators)."""
        fn = self.an.function
        if type(it) is not cst.Name or it.value not in (fn.params or ()) or (id(fn), it.value) in self.iterated:
            return
        self.iterated.add((id(fn), it.value))
        gens = self.generators
        said = f"iterating `{it.value}`, a generator object its caller passes,"
        self._report(it, said, FIX_LAZY, lambda: gens.lazy_given(fn, it.value) is not None,
                     subject=lambda: (said, LAZY_WHY))

    def leave_With(self, node: cst.With) -> None:
        if id(node) in self.fork_withs:
            self.forked -= 1

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        an = self.an
        fn = an.function
        self.built.call(an, node)
        func = node.func
        if type(func) is cst.Name and func.value == "str" and not func.lpar \
                or type(func) is cst.Attribute and func.attr.value == "format":  # (`str(...)`: no code generated)
            self._int_string(node)
        hit = size_text(an, node, self.comp_sizes) if type(func) is cst.Name else None
        if hit is not None and not not_traced(an):  # `str(n)` of a size that changes (compile_size_specializers)
            said, check = hit
            self._report(node, said, FIX_SIZE_TEXT, lambda: check() and any(sizes_change(self, n)
                                                                            for n in self.compiled_names),
                         subject=lambda: (said, SIZE_TEXT_WHY))
        self.generators.call(an, node)
        self.subclasses.call(node)
        if type(node.func) is cst.Name and node.func.value in self.compiled_names:
            self.passed |= {a.keyword.value for a in node.args if a.keyword is not None
                            and not (type(a.value) is cst.Name and a.value.value == "None")}
        if fn.kind != "function" or not_traced(an):
            return
        self._subclass_use(node)
        if type(func) is cst.Attribute:
            method = func.attr.value
            recv = an.value(func.value)
            qn = an.qualname(func) or ""
            if method == "item" and not node.args and not self.scalars:
                self._report(node, "`.item()`", FIX_SCALAR, lambda: maybe_tensor(an, recv))
            elif method == "tolist" and not node.args:
                # (`.numpy()` is not a break: Dynamo traces NumPy code on tensors, torch._numpy)
                self._report(node, "`.tolist()`", FIX_RETURN, lambda: maybe_tensor(an, recv))
            elif method in LOG_METHODS and is_logger(an, func.value):
                self._print(node, "logging")
            elif method == "register_hook" and node.args:
                self._hook(node)
            elif method == "sort" and self.iters.sort_call(fn, node):
                said = f"`{code(func)}()` of numbers read from a tensor"
                self._report(node, said, FIX_SORT, lambda: True, subject=lambda: (said, SORT_WHY))
            elif method == "random_" and not qn.startswith("torch."):
                said = "`.random_()`"
                self._report(node, said, FIX_RANDOM_, lambda: maybe_tensor(an, recv), subject=lambda: (said, RANDOM_WHY))
            elif method in NUMBER_ARGS and (not qn.startswith("torch.") or qn.startswith(FUNCTIONAL_NS)):
                hit = number_argument(an, node, method)  # a tensor where torch takes a number
                if hit is not None:
                    self._report(node, hit[0], FIX_NUMBER, hit[2], subject=lambda hit=hit: hit[:2])
            elif method in METHOD_BREAKS and (hit := method_break(an, fn, node, method, self.handles.get(id(fn), ()))):
                said, why, fix = hit  # (measured: a break)
                self._report(node, said, fix, lambda: method == "wait" or maybe_tensor(an, recv), subject=lambda: (said, why))
            elif method == "backward":
                self._report(node, "`.backward()`", FIX_BACKWARD, lambda: maybe_tensor(an, recv),
                             subject=lambda: ("`.backward()`", AUTOGRAD))
            elif method == "narrow":
                self._bounds(node, narrow_bounds(node))
            else:
                self._calls(node)
            return
        if type(func) is cst.Name:
            if func.value in CONVERSIONS and len(node.args) == 1 and not self.scalars:
                v = an.value(node.args[0].value)
                self._report(node, f"`{func.value}()` of a tensor", FIX_SCALAR, lambda: is_tensor(an, v))
            elif func.value == "print" and "print" not in an.bound_names():
                self._print(node, "printing")
            elif func.value == "next":
                iters = self.iters
                self._report(node, None, FIX_NEXT, lambda: iters.next_call(fn, node) is not None,
                             subject=lambda: iters.next_call(fn, node))
            elif self.iters.sort_call(fn, node):
                said = f"`{func.value}(...)` of numbers read from a tensor"
                self._report(node, said, FIX_SORT, lambda: True, subject=lambda: (said, SORT_WHY))
            else:
                self._calls(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        """`t.requires_grad = ...` in a compiled region (compile_untraced)."""
        super().visit_Assign(node)
        an = self.an
        self.built.assign(an, node)
        self.iters.assign(an, node)
        self.generators.assign(an, node)
        self.subclasses.assign(an, node, is_compile_call(an, node.value) and bool(node.value.args))
        if is_compile_call(an, node.value):
            self.compiled_names |= {t.target.value for t in node.targets if type(t.target) is cst.Name}
            self.generators.compiled_assign(node, node.value)
        if an.function.kind != "function" or not_traced(an):
            return
        for t in node.targets:
            hit = requires_grad_store(an, t.target)
            if hit is not None:
                said, why, fix, check = hit
                self._report(t.target, said, fix, check, subject=lambda said=said, why=why: (said, why))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """`a in t` with a tensor `t` (compile_data_reads)."""
        an = self.an
        operand = contains_operand(node)
        if operand is None or self.scalars or an.function.kind != "function" or not_traced(an):
            return
        v = an.value(operand)
        said = "`in` on a tensor"
        self._report(node, said, FIX_CONTAINS, lambda: is_tensor(an, v), subject=lambda: (said, CONTAINS_WHY))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`x[:, :n]` with a tensor `n` (compile_calls)."""
        self._bounds(node, slice_bounds(node))

    def _bounds(self, node: cst.CSTNode, bounds: list) -> None:
        an = self.an
        if not bounds or self.scalars or an.function.kind != "function" or not_traced(an):
            return
        stmt = id(an.statement)
        if stmt in self.bounded:
            return  # one finding for the line (`ids[:, :n], mask[:, :n]`: the first one breaks)
        self.bounded.add(stmt)
        values = [an.value(b) for b in bounds]
        self._report(node, None, FIX_SLICE, lambda: any(is_tensor(an, v) for v in values),
                     subject=lambda: ("a tensor as a slice bound", SLICE_WHY))

    def _calls(self, node: cst.Call) -> None:
        """`torch.autograd.grad`/`backward`, `np.random.<draw>`, clock reads, Python random draws Dynamo skips,
        `copy.deepcopy` of a tensor or module; the calls of the helper modules (`hit`, first)."""
        an = self.an
        sched = scheduler_call(an, self.built, an.function, node)  # (its check is exclusive of a GradScaler's)
        if sched is not None:
            self._report(node, None, None, sched[0], subject=sched[1])
        hit = untraced(an, node, self.in_except > 0, self.passed, self.generators) or unsupported_call(an, self.built, node) \
            or region_call(an, node) or serialize_call(an, node) or read_call(an, node, self.scalars, is_tensor) \
            or library_call(an, node) or host_call(an, node, self.scalars, is_tensor) or self.custom_ops.op_call(
                an, self.module, node) or internals_call(an, node, maybe_tensor, self.internals) \
            or self.iters.send_call(an.function, node) or builtin_call(an, node, is_tensor)
        if hit is not None:
            said, why, fix, check = hit
            self._report(node, said, fix, check, subject=lambda: (said, why))
            return
        qn = an.qualname(node.func) or ""
        table = table_call(an, node, qn) if qn.startswith(LIBRARIES + ("types.",)) else None
        if table is not None:
            said, why, fix, check = table
            self._report(node, said, fix, check, subject=lambda: (said, why))
        elif async_collective(qn, node):
            self._async(node)
        elif not qn.startswith(LIBRARIES):  # a project function: is it `torch.compiler.disable`d?
            fn = an.function
            fid = fn.fid
            built = self.built
            self._report(node, None, None, lambda: disabled_callee(an, fid, node) is not None
                         or module_call(fn, built, node.func) is not None,
                         subject=lambda: _callee(an, built, fn, node))

    def _after_first_break(self, fn) -> bool:
        """A `@contextmanager` generator that already has a finding: Dynamo does not resume
        inside it after its first break (the later ones are reported in source order)."""
        if not is_context_generator(fn):
            return False
        if id(fn) in self.broken:
            return True
        self.broken.add(id(fn))
        return False

    def _async(self, node: cst.Call) -> None:
        """`h = dist.all_reduce(t, async_op=True)`: a break, and so is `h.wait()` later."""
        stmt = self.an.statement
        small = stmt.body[0] if type(stmt) is cst.SimpleStatementLine and stmt.body else stmt
        if type(small) is cst.Assign and small.value is node and type(small.targets[0].target) is cst.Name:
            self.handles.setdefault(id(self.an.function), set()).add(small.targets[0].target.value)
        said = f"`{code(node.func)}(..., async_op=True)`"
        self._report(node, said, FIX_ASYNC, lambda: True, subject=lambda: (said, ASYNC_WHY))

    def _hook(self, node: cst.Call) -> None:
        """`t.register_hook(f)` where `f` writes state outside it (compile_hooks)."""
        an = self.an
        fn = an.function
        effects = hook_effects(self.module, fn.node if type(fn.node) is cst.FunctionDef else None,
                               node.args[0].value)
        for at, target in effects:
            def when(target=target):
                reason = compiled_why(an, fn)
                if reason is None:
                    return None
                return HOOK_WHY.format(where=where(fn, reason), target=target)
            self.report(at if at is not None else node, MESSAGE.format(why="{why}", fix=FIX_HOOK), when=when)

    def _print(self, node: cst.Call, verb: str) -> None:
        """print() and logging calls break the graph whatever they print (measured on 2.13)."""
        an = self.an
        if any(has_read(a.value) for a in node.args):
            return  # print(loss.item()): the read inside is reported, one finding for the line
        vals = printed(an, node)
        call = "print(...)" if verb == "printing" else "a logging call"

        def subject():
            if any(is_tensor(an, v) for v in vals):
                return f"{verb} a tensor", READ
            return f"`{call}`" if verb == "printing" else call, UNTRACED

        self._report(node, None, FIX_PRINT, lambda: True, subject=subject)

    def _int_string(self, node: cst.CSTNode) -> None:
        """A string built from an int argument the calls change (compile_int_strings)."""
        an = self.an
        fn = an.function
        if fn.kind != "function" or not_traced(an):
            return
        for name in formatted_names(node):
            if name not in (fn.params or ()):
                continue
            said = f"`{code(node)}`, a string built from the int `{name}`,"
            how = lambda fn=fn, name=name: changing_int(self, fn, name, self.compiled_names)  # noqa: E731
            self._report(node, said, FIX_INT_STRING, lambda how=how: how() is not None,
                         subject=lambda said=said, how=how: (said, INT_STRING_WHY.format(arg=name, how=how())))
            return

    def _report(self, node: cst.CSTNode, what, fix: str, check, subject=None) -> None:
        an = self.an
        if self.forked:
            return  # inside a fork_rng block the function runs eagerly: only the `with` is a break
        if under_logger_test(self.an):
            return  # `if logger.isEnabledFor(...):` breaks at the test; the body runs at that level only
        fn = an.function
        stmt = an.statement
        logged = is_log_statement(an, stmt)
        template = CONTEXT_MESSAGE if is_context_generator(fn) else MESSAGE
        here = an.here()

        def when():
            reason = compiled_why(an, fn)
            if reason is None or not check() or an.never_given_branch(here):
                return None  # (`if verbose: print(...)` in a helper no caller asks to be verbose)
            if self._after_first_break(fn):
                return None  # a context manager's later lines: not traced (compile_untraced)
            said, why, *rest = subject() if subject is not None else (what, READ)
            text = f"{said} {where(fn, reason)}: {why}"
            return text if fix is not None else template.format(why=text, fix=rest[0] if rest else FIX_DISABLED)

        def autofix():
            if not logged:
                return None
            return move_read_fix(self.module, stmt, fn.node,
                                 lambda d: is_compile_call(an, d.decorator) or an.qualname(d.decorator) == "torch.compile")

        message = template.format(why="{why}", fix=fix) if fix is not None else "{why}"
        self.report(node, message, when=when, fix=autofix)


def _callee(an, built, fn, node: cst.Call) -> tuple:
    """What a call of a disabled function or of a module Dynamo does not trace is said to be."""
    hit = module_call(fn, built, node.func)
    if hit is not None:
        return hit
    return f"a call of `{disabled_callee(an, fn.fid, node)}()`", DISABLED_WHY, FIX_DISABLED
