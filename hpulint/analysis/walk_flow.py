"""The walk's handlers for statements, branches and loops (a mixin of :class:`Walker`)."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import dead, guards, once as few
from hpulint.analysis.calls import calls_in
from hpulint.analysis.int_arith import clamped, is_int_arith
from hpulint.analysis.loops import (
    _LIBRARY_PREFIXES, single_pass, assigns_in, bind_for_target, counters_of_for, counters_of_while, iterates_collection, iterates_marking_loader,
)
from hpulint.analysis.names import STEP_CONTEXTS
from hpulint.analysis.syntax import names_in, target_names
from hpulint.analysis.state import IfFrame, Loop
from hpulint.analysis.values import Carried, Named, V_NONE, V_OTHER, V_UNKNOWN, by_name, join
from hpulint.analysis.walker_base import MISSING, _maybe_tensor


class Flow:
    # --- statements and branches ------------------------------------------------------------

    def _enter_statement(self, node: cst.CSTNode) -> None:
        self.statements.append(node)

    def _leave_statement(self, node: cst.CSTNode) -> None:
        self.statements.pop()

    def _enter_with(self, node: cst.With) -> None:
        self.statements.append(node)
        self._branch_of[id(node.body)] = ("with", None)
        fn = self.function
        loop = self.loop
        facts = loop.facts if loop is not None else fn.facts
        for item in node.items:
            it = item.item
            if type(it) is cst.Call and self.qualname(it.func) in STEP_CONTEXTS:
                facts.markers.append(it)
                self.call_statement[id(it)] = node
            if item.asname is not None:
                given = self._entered(it)
                for n in target_names(item.asname.name):
                    # `with unwrap_model_for_generation(model, acc) as unwrapped_model:`: the
                    # name says what the context gives when it names a model (or an optimizer,
                    # a loader); files, locks and profilers stay plain objects
                    v = Named(V_UNKNOWN, n) if by_name(n).kind != "unknown" else V_OTHER
                    # `with self.temporary_cuda(self.clvp) as clvp:`: a project `@contextmanager`
                    # gives what it yields (the summary's return of such a generator), when known
                    self._bind(n, join([given, v]) if given is not None else v)

    def _entered(self, item: cst.BaseExpression):
        """The value of a context manager's call when the project may define it (not a library's:
        `torch.profiler.profile(...)` is not a tensor), for `with f(...) as x` to bind."""
        if type(item) is not cst.Call:
            return None
        qn = self.qualname(item.func) or ""
        if qn.startswith(_LIBRARY_PREFIXES) or qn in ("open", "contextlib.suppress"):
            return None
        return self.value(item)

    def _enter_try(self, node: cst.Try) -> None:
        self.statements.append(node)
        self._branch_of[id(node.body)] = ("try", None)
        if node.orelse is not None:
            self._branch_of[id(node.orelse)] = ("try-else", None)
        if node.finalbody is not None:
            self._branch_of[id(node.finalbody)] = ("with", None)

    def _enter_handler(self, node: cst.ExceptHandler) -> None:
        self._push_block("handler")
        if node.name is not None:
            for n in target_names(node.name.name):
                self._bind(n, V_OTHER)

    def _leave_handler(self, node: cst.ExceptHandler) -> None:
        self._pop_block()

    def _enter_if(self, node: cst.If) -> None:
        self._enter_branch(node)  # an elif is the else branch of the if before it
        self.statements.append(node)
        frame = IfFrame(node)
        self.if_frames.append(frame)
        given = guards.given_param(node.test, self.function.none_params)
        if given is not None:
            self.function.optional_ifs[id(node)] = given
        interval, device = self.is_interval(node.test), guards.device_predicate(node.test, self.function.device_flags)
        if device is None and self.function.const_bools and dead.never_holds(node.test, self.function.const_bools):
            device = guards.NEVER  # `if ignore_cache_position is False:` after `ignore_cache_position = True`
        if self.function.device_objects and dead.device_object_test(node.test, self.function.device_objects):
            device = guards.NEVER  # `if args.device == "hpu":` after `args.device = torch.device("hpu")`
        if not interval:
            loop = self.loop.node if self.loop is not None else None
            interval = few.fills_once(node, loop, self.function.node) or few.ends_the_run(node.body) \
                or few.bounded_by_count(node) or few.anomaly_branch(node)
        once = guards.once_counters(node.test, self._counters_here())
        # `if i == 0:` holds on one pass of i's loop: one step only if that loop is the step loop
        pin_only = bool(interval and once and not guards.is_interval_test(node.test, set(), self.function.interval_flags,
                                                                                 self.unit_names))
        exits = few.exits_loop(node.body) if self.loop is not None else None
        frame.guard = (interval, device, once, pin_only, self.loop if exits == "break" else exits)
        if interval and type(node.test) is cst.Name and node.test.value in self.function.interval_flags:
            self.function.flag_ifs.append((id(node), node.test.value))
        self._branch_of[id(node.body)] = ("if-body", frame)
        if node.orelse is not None:
            self._branch_of[id(node.orelse)] = ("else", frame)

    def _leave_if(self, node: cst.If) -> None:
        frame = self.if_frames.pop()
        self.statements.pop()
        self._merge_if(frame)
        self._leave_branch(node)
        loop = self.loop
        if loop is not None and self.blocks and self.blocks[-1] is loop.block and node.orelse is None \
                and guards.skips_the_pass(node) and guards.has_modulo(node.test) \
                and self.is_interval(guards.negated(node.test)):
            # `if counter % print_every != 0: continue`: the rest of the pass runs on a logging
            # interval, as if it were the body of `if counter % print_every == 0:`
            self.if_branches.append(guards.Branch(node, True, True, None))
            loop.skip_guards += 1
        elif loop is None and node.orelse is None and self.blocks and self.blocks[-1].kind == "body" \
                and self.blocks[-1].scope is self.function and guards.returns_early(node):
            # `if is_xla(): return True` at a function's top: the rest of it runs only off that
            # device, as if it were the else branch of the test
            device = guards.device_predicate(node.test)
            if device is not None:
                self.if_branches.append(guards.Branch(node, False, False, device))
                self.function.early_guards += 1
            elif guards.returns_early(node, raises=False) and self.is_interval(guards.negated(node.test)):
                # `if not should_log: return` at a function's top: the rest of it runs on
                # logging steps only, as if it were the body of `if should_log:`
                self.if_branches.append(guards.Branch(node, True, True, None))
                self.function.early_guards += 1

    def _counters_here(self) -> set:
        """The counters of the loops around the current point."""
        counters = set()
        for lp in self.loop.chain() if self.loop is not None else ():
            counters |= lp.counters
        return counters

    def is_interval(self, test: cst.BaseExpression) -> bool:
        """Does ``test`` hold on few steps here (a logging interval or run-once test), with the
        loop counters around the point and the names the function bound to such tests?"""
        return guards.is_interval_test(test, self._counters_here(), self.function.interval_flags, self.unit_names)

    def compile_key(self) -> str:
        """Evidence key of a torch.compile here: "compile" when the file always runs it,
        "compile-optional" under an `if` (`if args.torchcompile:`), where the same code also runs
        uncompiled, in lazy mode (`if __name__ == "__main__":` does not count)."""
        for b in self.if_branches:
            test = b.node.test
            if not (type(test) is cst.Comparison and type(test.left) is cst.Name
                    and test.left.value == "__name__"):
                return "compile-optional"
        return "compile"

    def note_compile(self, what: str) -> None:
        """File evidence of a torch.compile call here. A helper that compiles (a function with no
        loop of its own, not `main`: `def _get_compiled_train_step(...)`) runs when its callers
        choose to: its file also runs uncompiled ("compile-optional"); decided when it ends."""
        key, fn = self.compile_key(), self.function
        if key == "compile" and fn is not None and fn.kind == "function":
            if fn.pending_compile is None:
                fn.pending_compile = what
        else:
            self.evidence.setdefault(key, what)

    def _enter_branch(self, node: cst.CSTNode) -> None:
        info = self._branch_of.get(id(node))
        if info is None:
            return
        kind, frame = info
        self._push_block(kind)
        if frame is not None:
            interval, device, once, pin_only, exits = frame.guard
            flag = guards.flag_attribute(frame.node.test) if kind == "if-body" else None
            self.if_branches.append(guards.Branch(frame.node, kind == "if-body", interval, device, once, pin_only,
                                                  flag, exits if kind == "if-body" else None))
            plain = guards.not_tensor_exprs(frame.node.test, kind == "if-body")
            self.not_tensors.append((self.function, set(plain)) if plain else None)
            if plain:
                self.value_cache.clear()

    def _leave_branch(self, node: cst.CSTNode) -> None:
        info = self._branch_of.pop(id(node), None)
        if info is None:
            return
        kind, frame = info
        block = self._pop_block()
        if frame is None:
            return
        self.if_branches.pop()
        if self.not_tensors.pop() is not None:
            self.value_cache.clear()
        bindings = block.scope.bindings
        end = {name: bindings.get(name, MISSING) for name in block.prior}
        for name, prior in block.prior.items():
            frame.before.setdefault(name, prior)
        if kind == "if-body":
            frame.body_end, frame.body_defs = end, block.defs
        else:
            frame.else_end, frame.else_defs = end, block.defs
        self._restore(block)

    def _merge_if(self, frame: IfFrame) -> None:
        block = self.blocks[-1] if self.blocks else None
        defs_before = set(block.defs) if block is not None else set()
        taken = guards.lazy_branch(frame.guard[1])
        for name in set(frame.body_end) | set(frame.else_end):
            before = frame.before.get(name, MISSING)
            parts = [frame.body_end.get(name, before), frame.else_end.get(name, before) if frame.has_else else before]
            if taken is not None:
                # `if self.use_hpu: boxes = boxes.cpu()`: on the lazy device the code after the
                # `if` sees the branch the device takes, not a join with the other one
                parts = [parts[0] if taken else parts[1]]
            parts = [p for p in parts if p is not MISSING]
            if parts:
                self._bind(name, join(parts), merged=True)
        if block is not None:  # certainly assigned only when both branches assign it
            block.defs = defs_before | (frame.body_defs & frame.else_defs if frame.has_else else set())

    def _enter_ifexp(self, node: cst.IfExp) -> None:
        device = guards.device_predicate(node.test, self.function.device_flags)
        self.ifexps.append((node, device) if device is not None else None)

    def _leave_ifexp(self, node: cst.IfExp) -> None:
        self.ifexps.pop()

    # --- loops ----------------------------------------------------------------------------

    def _enter_for(self, node: cst.For) -> None:
        self.statements.append(node)
        fn = self.function
        loop = Loop(node, fn, self.loop, len(fn.loops))
        loop.once = single_pass(node)
        fn.loops.append(loop)
        self.all_loops.append(loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = counters_of_for(self, node)
        if loop.counters:
            loop.counters |= carried_counters(node.body, loop.counters)
        loop.iter_value = self.value(node.iter)
        loop.collection = iterates_collection(self, node.iter)
        loop.loader_marks = iterates_marking_loader(self, node.iter)
        loop.iterated_params = [p for p in _iterated_names(node.iter) if p in fn.params]
        loop.iter_calls = calls_in(node.iter) if type(node.iter) is not cst.Name else frozenset()
        self.loops.append(loop)
        self._carry_in(node, loop, set(target_names(node.target)))
        loop.block = self._push_block("loop")
        bind_for_target(self, node, loop)
        loop.assigned.update(target_names(node.target))

    def _enter_while(self, node: cst.While) -> None:
        self.statements.append(node)
        fn = self.function
        loop = Loop(node, fn, self.loop, len(fn.loops))
        loop.once = single_pass(node)
        fn.loops.append(loop)
        self.all_loops.append(loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = counters_of_while(node)
        if loop.counters:
            loop.counters |= carried_counters(node.body, loop.counters)
        self.loops.append(loop)
        self._carry_in(node, loop, set())
        loop.block = self._push_block("loop")

    def _carry_in(self, node: cst.CSTNode, loop: Loop, targets: set) -> None:
        """`code = None` before the loop, `code = torch.cat([code, idx], 1)` at the end of its
        body: from the second pass on, a read before that assignment sees what the last pass
        left (a :class:`Carried` value, resolved from what the body binds last), not only None."""
        fn = self.function
        bindings = fn.bindings
        names = {n for a in assigns_in(node.body) for t in a.targets for n in target_names(t.target)}
        for n in sorted(names - targets):
            before = bindings.get(n)
            if before is None or not (before is V_NONE or (type(before) is Named and before.base is V_NONE)):
                continue
            loop.carried_in.append(n)
            bindings[n] = join([before, Carried(fn.fid, loop.index, n)])
        if loop.carried_in:
            self.value_cache.clear()

    def _leave_loop(self, node: cst.CSTNode) -> None:
        if type(node) is cst.While:
            self._rejoin_test_calls(node)
        self.statements.pop()
        loop = self.loops.pop()
        for _ in range(loop.skip_guards):
            self.if_branches.pop()
        self._pop_block()
        # names the loop updates from their value in the last pass (x = f(x)); whether one is a
        # device tensor is decided when the project is linked
        bindings = self.function.bindings
        for n in loop.carried_in:
            if n in bindings:
                self.function.carried_defs[(loop.index, n)] = bindings[n]
        loop.carried_names = [n for n in sorted((loop.assigned | loop.mutated) & loop.read_before_assign)
                              if _maybe_tensor(bindings.get(n))]
        loop.carried_vals = [bindings[n] for n in loop.carried_names]
        loop.facts.carried = bool(loop.carried_vals)


    def _rejoin_test_calls(self, node: cst.While) -> None:
        """`while not should_stop(sequences[-1]):` runs its test again after every pass: the
        arguments of a call there hold what the body left in them too (`sequences` gains the
        sampled tokens), not only what they held before the first pass."""
        self.value_cache.clear()
        for call_id in calls_in(node.test):
            site = self.call_sites.get(call_id)
            if site is None:
                continue
            call = site.node
            if any(a.star for a in call.args):
                continue
            new_args, new_kwargs = list(site.args), dict(site.kwargs)
            positional = 0
            for a in call.args:
                v = self.value(a.value)
                if a.keyword is not None:
                    kw = a.keyword.value
                    new_kwargs[kw] = join((new_kwargs[kw], v)) if kw in new_kwargs else v
                else:
                    if positional < len(new_args) and new_args[positional] is not None:
                        new_args[positional] = join((new_args[positional], v))
                    positional += 1
            site.args, site.kwargs = tuple(new_args), new_kwargs


def carried_counters(body: cst.BaseSuite, counters: set) -> set:
    """Names the loop body sets from its counter (`prev_pos = cur_pos` at the end of a decoding
    pass): read earlier in the next pass they hold the last pass's counter, new every pass."""
    out: set = set()
    stmts = [st for line in getattr(body, "body", ()) if type(line) is cst.SimpleStatementLine
             for st in line.body if type(st) is cst.Assign and len(st.targets) == 1
             and type(st.targets[0].target) is cst.Name]
    for _ in range(2):  # `a = i`, then `b = a`
        for st in stmts:
            name = st.targets[0].target.value
            if name not in out and name not in counters and is_int_arith(st.value) \
                    and any(n in counters or n in out for n in names_in(st.value)) \
                    and not clamped(st.value, lambda e: _loop_counter_in(e, counters | out)):
                out.add(name)
    return out


def _loop_counter_in(expr: cst.BaseExpression, counters: set):
    """(name, True) for a counter of the loop ``expr`` reads, as the walker's counter_in answers
    for a loop's counter (see loops.clamped), else None."""
    return next(((n, True) for n in names_in(expr) if n in counters), None)


def _iterated_names(it: cst.BaseExpression) -> list:
    """The names an iterable is made of, not the options of the calls that wrap it
    (`tqdm(samples, disable=not verbose)`: `samples`, not `verbose`)."""
    if type(it) is cst.Call:
        return [n for a in it.args if a.keyword is None for n in _iterated_names(a.value)] \
            + list(names_in(it.func))
    return list(names_in(it))
