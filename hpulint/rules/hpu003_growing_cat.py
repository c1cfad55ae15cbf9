"""HPU003 growing-cat-accumulator: a tensor re-assigned from ``torch.cat`` of itself every pass.

Source: PyTorch/XLA performance debugging, part II: mmf's evaluation ran
``self[key] = torch.cat((self[key], report[key]), dim=0)`` every step; the accumulator's shape
grew each step, so every step compiled a new graph ("CompileTime too frequent: 16 counts during
17 steps"). Append to a Python list and concatenate once after the loop.
"""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import names
from hpulint.analysis.loops import reset_later
from hpulint.analysis.syntax import child_nodes, code, descendants, names_in
from hpulint.model import SAFE, Fix
from hpulint.rules.base import Rule
from hpulint.rules.cache_growth import VIEWS, cache_source, fed_back, static_write, window

CATS = frozenset(("torch.cat", "torch.concat", "torch.concatenate"))
JOINS = frozenset(f"torch.{n}" for n in ("cat", "concat", "concatenate", "stack", "vstack", "hstack",
                                          "column_stack", "row_stack", "dstack")) | {"einops.pack"}
PADS = frozenset({"torch.nn.functional.pad"})
# methods whose result has the receiver's shape: `torch.cat([acc.clone(), x])` still grows `acc`
SAME_SHAPE = frozenset({"index_select", "clone", "contiguous", "detach", "to", "float", "half", "bfloat16",
                        "long", "int", "type_as"})
SETUP_METHODS = names.SETUP_METHODS | {"reset"}  # (a state grown there starts over)

MESSAGE = (
    "`{target}` is re-assigned from `{join}` of itself {why}: its shape grows every pass, so "
    "every pass records a graph with new shapes and the device compiles again. Append the "
    "pieces to a list and concatenate once after the loop"
)

PAD_MESSAGE = (
    "`{target}` is re-assigned from `{join}` of itself {why}: it grows every pass, so every pass "
    "records a graph with new shapes and the device compiles again. Allocate it at its final size "
    "before the loop and fill one position each pass (`mask.index_fill_(1, pos, 1)`)"
)

CACHE_MESSAGE = (
    "`{target}` is `{join}` of the cache passed back in (`{cache}`) and the new positions {why}: "
    "the cache grows on every decoding step, so every step records a graph with new shapes and "
    "the device compiles again. Allocate the cache at its final length once and write each "
    "step's keys and values at a device position (`cache.index_copy_(dim, pos, k)`), reading it "
    "through a mask"
)


class GrowingCatAccumulator(Rule):
    code = "HPU003"
    name = "growing-cat-accumulator"
    summary = "an accumulator re-assigned from torch.cat/stack of itself every step, or a key/value cache extended every call"
    triggers = ("cat", "stack", "pad", "pack")
    lazy_mode_only = True
    fix_safety = "safe"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.aliases: dict = {}  # (function, name) -> the state it was read from (`m = kwargs["mask"]`)
        self.static: set = set()  # ids of functions that write a preallocated cache in place
        self.fed_back = False  # the file keeps a grown cache for the next call (see cache_growth.fed_back)
        # (function, name) -> (the loop, the value) of the name's last plain assignment
        self.last: dict = {}
        # (function, attribute) -> kept whole (True) or only as a window of its last positions
        # (False) by the function's assignments to `self.<attribute>` (see cache_growth._window)
        self.kept: dict = {}
        # (function, attribute target's text) -> the value of its first assignment outside loops
        # (`block_state.x = scheduler.scale_model_input(...)` before `block_state.x = cat([block_state.x, m])`)
        self.first_attr: dict = {}

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Attribute and static_write(self.an, self.aliases, node):
            self.static.add(id(self.an.function))

    def visit_Assign(self, node: cst.Assign) -> None:
        an = self.an
        if not self.fed_back and an.function.name not in SETUP_METHODS and fed_back(an, node):
            self.fed_back = True
        before = {}
        for t in node.targets:  # (`latents = latents = step(...)` binds it too)
            if type(t.target) is cst.Attribute and not (type(node.value) is cst.Name and node.value.value == "None"):
                k = (id(an.function), t.target.attr.value)
                self.kept[k] = self.kept.get(k, False) or not window(node.value)
                if an.loop is None:
                    self.first_attr.setdefault((id(an.function), code(t.target)), (node.value, _branches(an)))
            if type(t.target) is cst.Name:
                k = (id(an.function), t.target.value)
                before[k] = self.last.get(k)
                self.last[k] = (an.loop, node.value)
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        value = node.value
        trimmed = None
        if type(target) is cst.Name:
            key = (id(an.function), target.value)
            trimmed = before.get(key)
            if type(value) in (cst.Subscript, cst.Attribute) or (
                    type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in VIEWS):
                # (`prev_key = saved["prev_key"].view(b, -1, d)`: a view of the state read)
                self.aliases[key] = value
            else:
                self.aliases.pop(key, None)
        either = type(value) is cst.IfExp
        if either:
            # `code = idx if code is None else torch.cat([code, idx], axis=1)`: the first pass
            # starts the accumulator, every later one grows it
            value = next((b for b in (value.orelse, value.body) if type(b) is cst.Call), None)
        if type(value) is not cst.Call or not value.args:
            return
        join = an.qualname(value.func)
        seq = value.args[0].value
        if join == "einops.pack" and type(target) is cst.Tuple and target.elements:
            target = target.elements[0].value  # `codes, _ = pack([codes, sample], "b *")`: a cat
        if join in PADS:
            # `mask = F.pad(mask, (0, 1), value=1)`: one more column every pass
            if not (self._of_itself(seq, target) and _grows(value)):
                return
            every, fresh = [an.value(seq)], []
        elif join not in JOINS or type(seq) not in (cst.List, cst.Tuple):
            return
        elif self._cache_extended(node, target, join, seq):
            return
        elif not any(self._of_itself(el.value, target) for el in seq.elements):
            return
        else:
            every = [an.value(el.value) for el in seq.elements]
            # the new rows: where they are made says where the accumulator is (its first value
            # may be an empty host tensor, `preds = torch.tensor([])`, which torch.cat skips)
            fresh = [v for el, v in zip(seq.elements, every) if not self._of_itself(el.value, target)]
        text = code(target)
        message = (PAD_MESSAGE if join in PADS else MESSAGE).format(target=text, join=join, why="{why}")
        fn = an.function
        here = an.here()
        if _param_state(target, fn) and not _persistent(target) and _still_the_argument(an, target.value.value, fn) \
                and not (fn.name == "forward" and fn.cls is not None):
            # (a module's `forward(features)` gets each step's batch: a fresh dict every call)
            # `model_kwargs["attention_mask"] = torch.cat([mask, ...])`: the caller's state,
            # extended on every call of a function that runs every step (a decoding helper)
            def when_param():
                if _on_host(an, every, fresh):
                    return None
                why = an.every_step(here)
                return why  # "in update() (called from the step loop in ...)"

            self.report(node, message, when=when_param)
            return
        if type(target) is cst.Name and an.loop is None and fn.kind == "function" \
                and _still_the_argument(an, target.value, fn) and _returns_name(fn.node, target.value):
            # `input_ids = torch.cat([input_ids, accepted], -1)` in a decoding helper that returns
            # it, called from a step loop that assigns the result back to what it passed
            name = target.value

            def when_fed():
                reason = (getattr(fn, "fed_reasons", None) or {}).get(name)
                if reason is None or _on_host(an, every, fresh) or an.device_excluded(here):
                    return None
                return f"in {fn.name}(), which returns it ({reason})"

            self.report(node, message, when=when_fed)
            return
        if _persistent(target) and fn.kind == "function":
            # lives across calls: grows on every call of the method that extends it
            if fn.name in SETUP_METHODS:
                return
            loop = an.loop
            first, where = self.first_attr.get((id(fn), text), (None, ())) if loop is None else (None, ())
            if first is not None and first is not value and _branches(an)[:len(where)] == where and not any(
                    self._of_itself(n, target) for n in descendants(first) if isinstance(n, cst.BaseExpression)):
                # set afresh earlier in the same call, from something else (the scheduler's scaled
                # latents, then the mask channels joined to them): the same size on every call
                return

            local = _local_object(target, fn)

            def when_persistent():
                if _on_host(an, every, fresh) or an.device_excluded(here):
                    return None
                if local and an.every_step(here) is None:
                    # `block_state = self.get_block_state(state)`: an object the call fetched, whose
                    # field grows once per call of a function that runs once per run
                    return None
                return f"in {fn.name}()" + (f", once per pass of a loop that {loop.step_reason}"
                                           if loop is not None and loop.is_step_loop else ", on every call")

            self.report(node, message, when=when_persistent)
            return
        loop = an.loop  # a local name, or module-level state: grows once per pass of a loop
        if loop is None:
            return
        root = target.value if type(target) is cst.Subscript and type(target.value) is cst.Name else target
        if type(target) is cst.Name and trimmed is not None and trimmed[0] is loop \
                and _reads_trimmed(trimmed[1], target.value):
            # `latents = scheduler.step(noise[:, :, 1:], t, latents[:, :, 1:])` then `latents =
            # cat([image_latents, latents], 2)`: the pass stepped all but the first frame and puts
            # the first back; the length is the same every pass
            return
        if type(root) is cst.Name and an.defined_in_pass(root.value, loop):
            # rebuilt earlier in the same pass: `inp = scale(x); inp = cat([inp, extra])`, and a
            # key of a dict copied afresh each pass (`kw = copy.copy(model_kwargs)`, then
            # `kw["cache_position"] = cat((kw["cache_position"], new))`)
            return
        if type(root) is cst.Name and reset_later(loop.node, node, root.value):
            return  # bound afresh later in the pass: the next pass does not read the grown value
        is_while = type(loop.node) is cst.While
        fix = self._list_fix(node, target, value, seq, join) if join in CATS and not either else None
        # the loops around this one whose passes carry the accumulator over (not bound afresh in
        # their pass): `for t in range(lookahead): seq = cat([seq, tok])` inside a speculative
        # round grows the sequence the next round feeds to the models
        # (a plain name: `embs[k] = cat([embs[k], pad])` over an inner loop's `k` pads each of a
        # list's tensors once, not one accumulator every pass)
        carried_by = [lp for lp in list(loop.chain())[1:] if type(target) is cst.Name
                      and not an.defined_in_pass(root.value, lp) and not reset_later(lp.node, node, root.value)]

        def when():
            if _on_host(an, every, fresh) or an.device_excluded(here):
                return None  # a host-side accumulator records nothing on the device
            if loop.is_step_loop:
                return f"in a loop that {loop.step_reason}"
            outer = next((lp for lp in loop.chain() if lp.is_step_loop), None)
            if outer is not None and outer in carried_by:
                return f"in an inner loop of a step loop that {outer.step_reason}; the step loop carries it to its next pass"
            # a while loop grows without a fixed bound; in code run every step that is a new
            # shape every step (a `for` over a fixed range inside forward() is one graph)
            why = an.hot_reason(here) if is_while else None
            return f"in a while loop {why}" if why else None

        self.report(node, message, fix=fix, when=when)

    def _cache_extended(self, node: cst.Assign, target, join: str, seq) -> bool:
        """`k = torch.cat((past_key, k), dim=-2)` in code run every step: the cache the caller
        passes back grows by the new positions on every call. True when the join is one."""
        an = self.an
        if join not in CATS or len(seq.elements) < 2 or type(target) is not cst.Name:
            return False
        cache = cache_source(an, self.aliases, seq.elements[0].value)
        if cache is None or any(cache_source(an, self.aliases, el.value) for el in seq.elements[1:]):
            return False
        every = [an.value(el.value) for el in seq.elements]
        here = an.here()
        fn = id(an.function)

        def when():
            if _on_host(an, every, every[1:]) or fn in self.static or not self.fed_back \
                    or self.kept.get((fn, cache)) is False:
                # (a static cache written in place is the default path; a file that never keeps
                # the cache for the next call is an encoder whose cache argument stays None; a
                # causal video layer keeps only the last frames of what it joined: a fixed length)
                return None
            return an.every_step(here)

        message = CACHE_MESSAGE.format(target=code(target), cache=cache, join=join, why="{why}")
        self.report(node, message, when=when)
        return True

    def _of_itself(self, expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
        """The piece is the accumulator: itself, a name read from it in this function, its rows
        picked by an index (`input_ids[beam_idx, :]`, beam search) or a same-shape copy of it."""
        if expr.deep_equals(target):
            return True
        tp = type(expr)
        if tp is cst.Name:
            alias = self.aliases.get((id(self.an.function), expr.value))
            return alias is not None and alias.deep_equals(target)
        if tp is cst.Subscript and type(expr.value) is not cst.Subscript:
            return all(type(e.slice) is cst.Index or (e.slice.lower is None and e.slice.upper is None
                                                       and e.slice.step is None)
                       for e in expr.slice) and self._of_itself(expr.value, target)
        if tp is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in SAME_SHAPE:
            return self._of_itself(expr.func.value, target)
        return False

    def _list_fix(self, node: cst.Assign, target, value: cst.Call, seq, join: str):
        """Collect the pieces in a list in the loop and concatenate once after it.

        Offered only when the accumulator is read nowhere else in the loop, so nothing can see
        the difference (it is safe then); an accumulator the loop reads keeps no fix: the list
        would no longer hold the running total there.
        """
        an = self.an
        stmt, loop = an.statement, an.loop
        if type(target) is not cst.Name or type(stmt) is not cst.SimpleStatementLine \
                or len(stmt.body) != 1 or stmt.body[0] is not node:
            return None
        if not seq.elements[0].value.deep_equals(target) or len(seq.elements) < 2 \
                or any(type(el) is cst.StarredElement for el in seq.elements):
            return None  # only appending (acc first) keeps the order with a list
        acc = target.value
        uses = sum(1 for n in names_in(loop.node.body) if n == acc)
        if uses != 2 or _has_escape(loop.node.body, acc) or _read_by_closure(an.function.node, acc):
            return None
        applicability = SAFE
        parts = _fresh_name(self.ctx.source, f"{acc}_parts")
        others = [el.value for el in seq.elements[1:]]
        if len(others) == 1:
            collect = f"{parts}.append({code(others[0])})"
        else:
            collect = f"{parts}.extend(({', '.join(code(o) for o in others)}))"
        rest = "".join(", " + code(a).rstrip(", ") for a in value.args[1:])
        func = code(value.func)
        init = cst.parse_statement(f"{parts} = [{acc}]\n")
        final = cst.parse_statement(f"{acc} = {func}({parts}{rest})\n")

        def around(updated):
            init_stmt = init.with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([init_stmt, updated.with_changes(leading_lines=()), final])

        new_stmt = cst.parse_statement(collect + "\n")
        changes = {
            stmt: lambda updated: updated.with_changes(body=new_stmt.body),
            loop.node: around,
        }
        return Fix(applicability, f"collect into `{parts}` and concatenate once after the loop", changes)


def _read_by_closure(scope: cst.CSTNode, name: str) -> bool:
    """A function or lambda nested in ``scope`` (the module, for module-level code) reads
    ``name``: a call in the loop may read the running value (`def step_history(): return
    history[:, -w:]` called every pass), which a list of parts would no longer give it."""
    stack = list(child_nodes(scope))
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.Lambda):
            if name in names_in(n.body):
                return True
            continue
        stack.extend(child_nodes(n))
    return False


def _on_host(an, every: list, fresh: list) -> bool:
    """The joined tensors are on the host: all of them, or a new row made there (torch.cat needs
    its pieces on one device, so `torch.tensor([1])` with no device says where the others are; the
    first value of the accumulator may be an empty host tensor, `preds = torch.tensor([])`, which
    says nothing)."""
    return all(an.is_host(p) for p in every) or any(an.is_host(p) for p in fresh)


def _grows(call: cst.Call) -> bool:
    """A pad by literal widths, none negative and some positive (`(0, 1)`): the result is larger."""
    pad = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
    if type(pad) not in (cst.Tuple, cst.List) or not pad.elements:
        return False
    widths = [e.value for e in pad.elements]
    if not all(type(w) is cst.Integer for w in widths):
        return False
    return any(int(w.value) > 0 for w in widths)


def _has_escape(body: cst.CSTNode, name: str) -> bool:
    """A nested function or lambda in the loop that could read ``name`` later, or a ``del``."""
    stack = [body]
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Del, cst.Global, cst.Nonlocal):
            if name in set(names_in(n)) or type(n) in (cst.FunctionDef, cst.ClassDef):
                return True
        stack.extend(n.children)
    return False


def _returns_name(fn_node: cst.CSTNode, name: str) -> bool:
    """A `return` of the function gives the name back, alone or in a tuple (`return ids, n`)."""
    stack = list(fn_node.body.children) if hasattr(fn_node, "body") else []
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) is cst.Return and n.value is not None:
            v = n.value
            parts = [e.value for e in v.elements] if type(v) in (cst.Tuple, cst.List) else [v]
            if any(type(x) is cst.Name and x.value == name for x in parts):
                return True
        stack.extend(n.children)
    return False


def _still_the_argument(an, name: str, fn) -> bool:
    """The name still holds what the caller passed (not `emb = list(emb)`, a fresh copy)."""
    v = an.lookup(name)
    return getattr(v, "tag", "") == "param" and v.fid == fn.fid


def _param_state(target: cst.BaseExpression, fn) -> bool:
    """`kwargs["mask"]`, `cache.keys`: state held by an argument of the function (not `self`)."""
    if type(target) not in (cst.Subscript, cst.Attribute):
        return False
    base = target.value
    return type(base) is cst.Name and base.value in fn.params and base.value not in ("self", "cls")


def _local_object(target: cst.BaseExpression, fn) -> bool:
    """`block_state.ids`: a field of an object a local name holds (not `self`, not an argument)."""
    base = target.value
    while type(base) in (cst.Attribute, cst.Subscript):
        base = base.value
    return type(base) is cst.Name and base.value not in ("self", "cls") and base.value not in fn.params


def _persistent(target: cst.BaseExpression) -> bool:
    """self.buf, self[key], state.buf: state that outlives the call."""
    if type(target) is cst.Attribute:
        return True
    if type(target) is cst.Subscript:
        base = target.value
        return type(base) is cst.Name and base.value == "self" or type(base) is cst.Attribute
    return False


def _fresh_name(source: str, base: str) -> str:
    name, n = base, 1
    while name in source:
        n += 1
        name = f"{base}{n}"
    return name


def _reads_trimmed(value: cst.BaseExpression, name: str) -> bool:
    """``value`` reads ``name`` only through slices with a constant bound (`x[:, :, 1:]`,
    `x[..., :-1]`): a fixed number of rows dropped, not the whole accumulator."""
    uses = [n for n in descendants(value) if type(n) is cst.Name and n.value == name]
    if not uses:
        return False
    trimmed = {id(s.value) for s in descendants(value) if type(s) is cst.Subscript and type(s.value) is cst.Name
               and s.value.value == name and any(type(e.slice) is cst.Slice and _constant_bound(e.slice)
                                                 for e in s.slice)}
    return all(id(u) in trimmed for u in uses)


def _constant_bound(s: cst.Slice) -> bool:
    bounds = [b for b in (s.lower, s.upper) if b is not None]
    return bool(bounds) and all(type(b) is cst.Integer or (type(b) is cst.UnaryOperation
                                                          and type(b.expression) is cst.Integer) for b in bounds)


def _branches(an) -> tuple:
    """The `if` branches around the point (an assignment under them runs before a later point only
    when that point is under the same ones)."""
    return tuple((id(b.node), b.in_body) for b in an.if_branches)
