"""Loops: counters and what a loop iterates (the calls each body makes: hpulint.analysis.calls).

A *counter* is a name that takes a new Python int each pass: the target of ``range``/``enumerate``
(also through ``tqdm``, ``reversed``, ``zip``), a name a ``while`` loop steps with ``i += 1``, and
values computed from one with integer arithmetic (``index = total - i - 1``). A parameter may
carry a counter too, when a step loop passes one in (``p_sample(x, index=index)``): the walk
records which arguments carry which counter, and the link step decides.
"""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.host_batches import bind_host_batch, moves_unpacked_batch
from hpulint.analysis.int_arith import int_step
from hpulint.analysis.names import MARKING_LOADERS
from hpulint.analysis.syntax import child_nodes, code, descendants, last_name, names_in, target_names
from hpulint.analysis.values import Elem, Self, Sym, V_OTHER, V_SCALAR, V_UNKNOWN, is_marking

_RANGE_LIKE = frozenset({"range", "trange", "tqdm.trange", "tqdm.auto.trange", "tqdm.tqdm.trange"})
_WRAPPERS = frozenset({"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "reversed", "list", "iter",
                       "tqdm.std.tqdm", "sorted", "itertools.islice"})
_LIBRARY_PREFIXES = ("torch.", "numpy.", "math.", "os.", "sys.", "logging.", "re.", "json.", "time.",
                     "random.", "collections.", "itertools.", "functools.", "typing.", "dataclasses.",
                     "pathlib.", "argparse.", "copy.", "warnings.", "shutil.", "subprocess.", "pickle.",
                     "glob.", "datetime.", "builtins.", "habana_frameworks.", "torch_xla.")
def _builtin_names() -> frozenset:
    import builtins

    return frozenset(dir(builtins))


BUILTIN_NAMES = _builtin_names()


# --- counters ----------------------------------------------------------------------------------


def counters_of_for(an, node: cst.For) -> set:
    """Names in a for target that take a new int value each pass (range/enumerate counters), and
    names the body steps by an int (`global_step += 1`, `input_pos_maxp1 += 1`, `offset += n`)."""
    return set(_counters(an, node.target, node.iter)) | counters_of_while(node, ints_only=True)


def _counters(an, target: cst.BaseExpression, it: cst.BaseExpression) -> list:
    arity = int_seq_arity(an, it)  # a host list of ints (or of tuples of them), `range(...)` too
    if arity == 1 and type(target) is cst.Name:
        return [target.value]
    if arity > 1 and type(target) in (cst.Tuple, cst.List) and len(target.elements) == arity:
        return [e.value.value for e in target.elements if type(e.value) is cst.Name]
    if type(it) is cst.Name and it.value in an.function.enumerated \
            and type(target) in (cst.Tuple, cst.List) and target.elements:
        first = target.elements[0].value  # `iterator = enumerate(loader)`, `for step, batch in iterator:`
        return [first.value] if type(first) is cst.Name else []
    if type(it) is not cst.Call:
        return []
    qn = an.qualname(it.func) or ""
    if qn in _WRAPPERS and it.args:
        return _counters(an, target, it.args[0].value)
    if qn == "enumerate" and type(target) in (cst.Tuple, cst.List) and target.elements:
        first = target.elements[0].value
        return [first.value] if type(first) is cst.Name else []
    if qn == "zip" and type(target) in (cst.Tuple, cst.List) and len(target.elements) == len(it.args):
        out = []
        for el, arg in zip(target.elements, it.args):
            out.extend(_counters(an, el.value, arg.value))
        return out
    return []


_INT_ARRAYS = frozenset({"numpy.arange", "range"})


def int_seq_arity(an, node: cst.BaseExpression) -> int:
    """A host sequence of Python ints (or of tuples of them), as code builds a sampler's schedule:
    ``t.int().tolist()``, ``list(reversed(times))``, ``list(zip(times[:-1], times[1:]))``,
    ``np.arange(n)``: 1 for ints, the tuple size for tuples, 0 if it is not one."""
    tp = type(node)
    if tp is cst.Name:
        return an.function.int_seqs.get(node.value, 0)
    if tp is cst.IfExp:  # tqdm(reversed(range(n))) if verbose else reversed(range(n))
        body = int_seq_arity(an, node.body)
        return body if body == int_seq_arity(an, node.orelse) else 0
    if tp is cst.Subscript:  # times[:-1]
        if all(type(e.slice) is cst.Slice for e in node.slice):
            return int_seq_arity(an, node.value)
        return 0
    if tp is not cst.Call:
        return 0
    func = node.func
    if type(func) is cst.Attribute and func.attr.value == "tolist" and not node.args:
        return 1
    if type(func) is cst.Attribute and func.attr.value == "astype" and type(func.value) is cst.Call:
        return int_seq_arity(an, func.value)
    qn = an.qualname(func) or ""
    if qn in _INT_ARRAYS or qn in _RANGE_LIKE:
        return 1
    if (qn in ("list", "reversed", "sorted", "tuple") and len(node.args) == 1) or (qn in _WRAPPERS and node.args):
        return int_seq_arity(an, node.args[0].value)
    if qn == "zip" and len(node.args) > 1 and not any(a.keyword for a in node.args):
        arities = [int_seq_arity(an, a.value) for a in node.args]
        return len(arities) if all(a == 1 for a in arities) else 0
    return _helper_arity(an, func)


def _helper_arity(an, func: cst.BaseExpression) -> int:
    """A call of a function of this file, walked already, every return of which is a host int
    sequence (`self.get_sigma_gen(n)` returning `range(n - 1)` or a progress bar over it)."""
    fns = an.int_seq_fns
    if not fns:
        return 0
    tp = type(func)
    if tp is cst.Name:
        v = an.value(func)
        return fns.get(v.ref, 0) if type(v) is Sym else 0
    if tp is not cst.Attribute:
        return 0
    owner = an.value(func.value)
    cid = owner.cls if type(owner) is Self else owner.ref if type(owner) is Sym else None
    by_cid = an.classes_by_cid
    seen = set()
    while cid in by_cid and cid not in seen:  # the method through the classes of this file
        seen.add(cid)
        info = by_cid[cid]
        fid = info.methods.get(func.attr.value)
        if fid is not None:
            return fns.get(fid, 0)
        cid = info.bases[0] if info.bases else None
    return 0


def counters_of_while(node, ints_only: bool = False) -> set:
    """Names a while loop changes by a step each pass: ``i += 1``, ``i = i + 1``; with
    ``ints_only``, only by an int (`n += 1`, `n += x.size(0)`; not `total += loss`)."""
    out = set()
    stack = [node.body]
    while stack:
        n = stack.pop()
        if type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(n) is cst.AugAssign and type(n.target) is cst.Name \
                and type(n.operator) in (cst.AddAssign, cst.SubtractAssign) \
                and (not ints_only or int_step(n.value)):
            out.add(n.target.value)
        elif type(n) is cst.Assign and len(n.targets) == 1 and type(n.targets[0].target) is cst.Name \
                and type(n.value) is cst.BinaryOperation \
                and type(n.value.operator) in (cst.Add, cst.Subtract) and (not ints_only or int_step(n.value)):
            name = n.targets[0].target.value
            if name in set(names_in(n.value)):
                out.add(name)
        if type(n) in (cst.IndentedBlock, cst.SimpleStatementLine, cst.If, cst.Else, cst.With,
                       cst.Try, cst.For, cst.While, cst.SimpleStatementSuite):
            for f in ("body", "orelse", "handlers", "finalbody"):
                v = getattr(n, f, None)
                if isinstance(v, cst.CSTNode):
                    stack.append(v)
                elif isinstance(v, (list, tuple)):
                    stack.extend(v)
        elif type(n) is cst.ExceptHandler:
            stack.append(n.body)
    return out


# --- what a for loop iterates --------------------------------------------------------------------


def iter_source(an, it: cst.BaseExpression) -> cst.BaseExpression:
    """The iterable under enumerate()/tqdm()/iter() and the first of zip()."""
    while type(it) is cst.Call and it.args:
        qn = an.qualname(it.func) or ""
        if qn in _WRAPPERS or qn in ("enumerate", "zip"):
            it = it.args[0].value
            continue
        break
    return it


def iterates_collection(an, it: cst.BaseExpression) -> bool:
    """The loop walks the items of a collection (`for image in images`, `zip(latents, refs)`),
    not a count (`range(n)`, `trange(n)`): its passes are as many as the items it is given."""
    while type(it) is cst.Call and it.args:
        qn = an.qualname(it.func) or ""
        if qn in _RANGE_LIKE:
            return False
        if qn in _WRAPPERS or qn in ("enumerate", "zip"):
            it = it.args[0].value
            continue
        break
    if type(it) is cst.Name and it.value in an.function.int_seqs:
        return False  # `iterator = reversed(range(len(taus)))`, a schedule of ints: a count
    return not (type(it) is cst.Call and (an.qualname(it.func) or "") in _RANGE_LIKE)


def iterates_marking_loader(an, it: cst.BaseExpression) -> bool:
    """An MpDeviceLoader/ParallelLoader (which marks a step per batch), possibly inside
    enumerate(), tqdm() or zip(), or a name bound to one."""
    stack = [it]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            if is_marking(an.lookup(n.value)):
                return True
            continue
        if type(n) is cst.Call:
            if an.qualname(n.func) in MARKING_LOADERS:
                return True
            if type(n.func) is cst.Attribute and n.func.attr.value == "per_device_loader":
                return True
            stack.extend(a.value for a in n.args)
    return False


# loops over the parts of one step, not step loops: by what they iterate, its optimizers
# (`for opt in self.optimizers: opt.step()`), schedulers, parameter groups or micro-batches; by
# their counter, `for micro_batch_index in range(n)`; by a range bounded by the micro-batch or
# gradient-accumulation count, `for i in range(num_microbatches - 1)`
_PARTS_ITERATED = re.compile(
    r"^_?(?:optimi[sz]ers|opts|schedulers|lr_schedulers|param_groups|micro_?batch(?:es|_list)?|"
    r"micro_?batches_\w+|microbatch_\w+s)$", re.I)
_MICRO_BATCH_COUNTER = re.compile(r"^_?micro_?batch(?:_?(?:idx|index|id|num|no|i))?$", re.I)
_PARTS_BOUND = re.compile(r"micro_?batch|accum\w*_steps\b|accumulation_steps\b", re.I)
# `range(0, batch_size, mini_batch_size)`: parts of one step unless each pass steps an optimizer itself
_MINI_BOUND = re.compile(r"mini_?batch", re.I)


def bind_for_target(an, node: cst.For, loop) -> None:
    source = iter_source(an, node.iter)
    loop.iter_value = an.value(source)
    loop.iter_name = last_name(source.func if type(source) is cst.Call else source) or ""
    loop.progress = _shows_progress(an, node.iter)
    loop.len_of = _range_len_of(an, source)
    target = node.target.value if type(node.target) is cst.Name else ""
    loop.step_parts = bool(_PARTS_ITERATED.match(loop.iter_name) or _MICRO_BATCH_COUNTER.match(target)) or (
        type(source) is cst.Call and an.qualname(source.func) == "range" and bool(_PARTS_BOUND.search(code(source))))
    loop.mini_parts = type(source) is cst.Call and an.qualname(source.func) == "range" \
        and bool(_MINI_BOUND.search(code(source)))
    _bind_iter(an, node.target, node.iter, loop.counters)
    if type(node.target) is cst.Name and _indexes_itself(node):
        an._bind(node.target.value, V_OTHER)  # `for k in images: ... images[k]`: a dict's keys
    loop.host_batch = bind_host_batch(an, node, loop.iter_value, loop.counters)
    loop.moves_parts = moves_unpacked_batch(node, loop.iter_value, loop.counters)
    if type(node.target) in (cst.Tuple, cst.List):  # `for ids, mask, idx in loader:`
        bindings = an.function.bindings
        loop.batch_parts = {e.value.value: bindings.get(e.value.value) for e in node.target.elements
                            if type(e.value) is cst.Name and e.value.value not in loop.counters}


_PROGRESS = re.compile(r"tqdm|trange|progress|pbar|^track$", re.I)


def _shows_progress(an, it: cst.BaseExpression) -> bool:
    """`tqdm(...)`, `trange(n)`, `self.progress_bar(timesteps)` around the iterable."""
    while type(it) is cst.Call:
        if _PROGRESS.search(last_name(it.func) or ""):
            return True
        if not it.args:
            return False
        it = it.args[0].value
    return False


def _range_len_of(an, source: cst.BaseExpression):
    """`range(len(decoder.unets))`, `range(1, len(models) + 1)`: the value whose items the counter
    numbers (the link step decides whether those are modules), else None."""
    if type(source) is not cst.Call or an.qualname(source.func) != "range":
        return None
    for a in source.args:
        for n in _leaves(a.value):
            if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == "len" and len(n.args) == 1:
                return an.value(n.args[0].value)
            if type(n) is cst.Attribute and n.attr.value.startswith(("num_", "n_")):
                return an.value(n)  # `range(1, trainer.num_unets + 1)`: its name says what it counts
            first = _first_dim_of(n)
            if first is not None:
                return an.value(first)  # `range(img1.shape[0])`: the items of a batch
    return None


def _first_dim_of(n: cst.BaseExpression):
    """`x.shape[0]`, `x.size(0)`, `x.size()[0]`: the name ``x`` whose first dimension it is, else None."""
    if type(n) is cst.Subscript and len(n.slice) == 1 and type(n.slice[0].slice) is cst.Index \
            and type(n.slice[0].slice.value) is cst.Integer and n.slice[0].slice.value.value == "0":
        base = n.value
        if type(base) is cst.Attribute and base.attr.value == "shape" and type(base.value) is cst.Name:
            return base.value
        if type(base) is cst.Call and not base.args and type(base.func) is cst.Attribute \
                and base.func.attr.value == "size" and type(base.func.value) is cst.Name:
            return base.func.value
    if type(n) is cst.Call and len(n.args) == 1 and type(n.func) is cst.Attribute and n.func.attr.value == "size" \
            and type(n.func.value) is cst.Name and type(n.args[0].value) is cst.Integer \
            and n.args[0].value.value == "0":
        return n.func.value
    return None


def _leaves(node: cst.BaseExpression) -> list:
    if type(node) is cst.BinaryOperation:
        return _leaves(node.left) + _leaves(node.right)
    return [node]


def _bind_iter(an, target: cst.BaseExpression, it: cst.BaseExpression, counters: set) -> None:
    if type(target) is cst.Name and _dict_keys(an, it):
        an._bind(target.value, V_OTHER)  # `for name in grads:` a dict's keys
        return
    if type(target) is cst.Name:
        an._bind(target.value, V_SCALAR if target.value in counters else Elem(an.value(iter_source(an, it))))
        return
    if type(target) not in (cst.Tuple, cst.List):
        return
    els = [e.value for e in target.elements]
    if type(it) is cst.Call and it.args:
        qn = an.qualname(it.func) or ""
        if qn in _WRAPPERS:
            _bind_iter(an, target, it.args[0].value, counters)
            return
        if qn == "enumerate" and len(els) == 2:
            _bind_iter(an, els[0], it, counters | set(target_names(els[0])))
            _bind_iter(an, els[1], it.args[0].value, counters)
            return
        if qn == "zip" and len(els) == len(it.args):
            for el, a in zip(els, it.args):
                _bind_iter(an, el, a.value, counters)
            return
        if type(it.func) is cst.Attribute and it.func.attr.value == "items":
            _bind_elements(an, els[:1], V_UNKNOWN)
            if len(els) == 2:
                _bind_elements(an, els[1:], Elem(Elem(an.value(it.func.value))))
            return
    item = Elem(an.value(iter_source(an, it)))
    for k, el in enumerate(els):
        if type(el) is cst.Name and el.value in counters:
            an._bind(el.value, V_SCALAR)
        else:
            _bind_elements(an, [el], Elem(item, k))


def _mapping(it: cst.BaseExpression) -> cst.BaseExpression:
    """What `for k in m` or `for k in m.keys()` walks the keys of."""
    if type(it) is cst.Call and not it.args and type(it.func) is cst.Attribute and it.func.attr.value == "keys":
        return it.func.value
    return it


def _indexes_itself(node: cst.For) -> bool:
    """The body reads what the loop iterates at the target (`for k in images: images[k]`): the
    loop walks the keys of a mapping, not its values."""
    it, name = _mapping(node.iter), node.target.value
    if type(it) not in (cst.Name, cst.Attribute):
        return False
    text = code(it)
    for n in descendants(node.body):
        if type(n) is cst.Subscript and len(n.slice) == 1 and type(n.slice[0].slice) is cst.Index \
                and type(n.slice[0].slice.value) is cst.Name and n.slice[0].slice.value.value == name \
                and code(n.value) == text:
            return True
    return False


def _dict_keys(an, it: cst.BaseExpression) -> bool:
    """`grads`, `grads.keys()` of a dict this function made: iterating it gives its keys."""
    it = _mapping(it)
    return type(it) is cst.Name and it.value in an.function.dict_names


def clause_bindings(an, clause) -> list:
    """(name, value) for the targets of one `for` clause of a comprehension."""
    out = []
    _collect_iter(an, clause.target, clause.iter, out)
    return out


def _collect_iter(an, target, it, out: list) -> None:
    if type(target) is cst.Name:
        out.append((target.value, Elem(an.value(iter_source(an, it)))))
        return
    if type(target) not in (cst.Tuple, cst.List):
        return
    els = [e.value for e in target.elements]
    if type(it) is cst.Call and it.args:
        qn = an.qualname(it.func) or ""
        if qn in _WRAPPERS:
            return _collect_iter(an, target, it.args[0].value, out)
        if qn == "enumerate" and len(els) == 2:
            if type(els[0]) is cst.Name:
                out.append((els[0].value, V_SCALAR))
            return _collect_iter(an, els[1], it.args[0].value, out)
        if qn == "zip" and len(els) == len(it.args):
            for el, a in zip(els, it.args):
                _collect_iter(an, el, a.value, out)
            return
        if type(it.func) is cst.Attribute and it.func.attr.value == "items" and len(els) == 2:
            if type(els[1]) is cst.Name:
                out.append((els[1].value, Elem(Elem(an.value(it.func.value)))))
            return
    item = Elem(an.value(iter_source(an, it)))
    for k, el in enumerate(els):
        if type(el) is cst.Name:
            out.append((el.value, Elem(item, k)))


def _bind_elements(an, targets: list, val) -> None:
    for t in targets:
        if type(t) is cst.Name:
            an._bind(t.value, val)
        elif type(t) in (cst.Tuple, cst.List):
            for k, el in enumerate(t.elements):
                _bind_elements(an, [el.value], Elem(val, k))


def reset_later(loop_node: cst.CSTNode, stmt: cst.CSTNode, name: str) -> bool:
    """Whether the pass of ``loop_node`` that runs ``stmt`` binds ``name`` afresh at its top level
    after it, from values that do not come from the ``name`` ``stmt`` made
    (`tokens = cat([tokens, tokens])` for guidance, then `tokens = cur_tokens.clone()`): what
    the next pass reads is not what ``stmt`` grew. Names bound later from ``name`` carry it on
    (`x = f(tokens)`, then `tokens = x`)."""
    body = getattr(getattr(loop_node, "body", None), "body", ())
    lines = list(body)
    at = next((k for k, line in enumerate(lines) if _holds(line, stmt)), None)
    if at is None:
        return False
    carried = {name}
    for line in lines[at + 1:]:
        if type(line) is not cst.SimpleStatementLine:
            for sub in assigns_in(line):  # bound under a branch or a nested loop: may carry it
                if carried & set(names_in(sub.value)):
                    carried.update(n for t in sub.targets for n in target_names(t.target))
            continue
        for st in line.body:
            if type(st) is not cst.Assign or len(st.targets) != 1 or type(st.targets[0].target) is not cst.Name:
                continue
            target = st.targets[0].target.value
            if carried & set(names_in(st.value)):
                carried.add(target)
            elif target == name:
                return True
            else:
                carried.discard(target)
    return False


def _holds(node: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(n is inner for n in descendants(node))


def assigns_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Assign:
            yield n
        elif type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(child_nodes(n))


def single_pass(node) -> bool:
    """`for batch in loader: ...; break`: the body's last statement leaves the loop whatever
    happened before it, so its body runs at most once (a look at one batch, a smoke test)."""
    body = node.body
    stmts = body.body if isinstance(body, cst.IndentedBlock) else ()
    if not stmts or type(stmts[-1]) is not cst.SimpleStatementLine:
        return False
    if type(stmts[-1].body[-1]) not in (cst.Break, cst.Return, cst.Raise):
        return False
    return not _continues(body)  # (`if bad: continue` skips the `break`: more passes)


def _continues(node: cst.CSTNode) -> bool:
    for child in node.children:
        if type(child) is cst.Continue:
            return True
        if not isinstance(child, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)) \
                and _continues(child):
            return True
    return False
