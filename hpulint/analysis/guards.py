"""Guards: `if` tests that decide whether the code under them runs every step, or at all.

- A *logging interval* or *run-once* test (`step % log_every == 0`, `not i % k`, `i == 0`,
  `step == start or step == last`, `should_log`) lets its body run on a few steps only: host
  reads there are what users are told to do.
- A *device predicate* (`device.type == "hpu"`, `if not is_xla():`, `self.use_hpu`,
  `torch.cuda.is_available()`) decides on which device the body runs: code that does not run on
  the project's target is not reported.

A test is classified once, when the walk enters the `if`, with the loop counters known there.
Whether an interval test wraps an optimizer step (gradient accumulation: then it is *not* a
logging interval) is known only after its body is walked; :class:`Branch` keeps the `if` so the
question can be asked later.
"""
from __future__ import annotations

import re
from typing import NamedTuple, Optional

import libcst as cst

from hpulint.analysis.loops import assigns_in
from hpulint.analysis.syntax import child_nodes, code, descendants, last_name, names_in, string_value

DEVICES = {"hpu": "hpu", "habana": "hpu", "gaudi": "hpu", "xla": "xla", "tpu": "xla", "cuda": "cuda",
           "gpu": "cuda", "mps": "mps", "cpu": "cpu", "xpu": "xpu", "npu": "npu"}
_LOG_FLAG = re.compile(
    r"^(?:should|do|need|is|time_to|must|will|force)_?(?:to_)?(?:log|print|report|display|eval|evaluate|save|"
    r"checkpoint|sample|validate|visuali[sz]e|summar(?:y|ize))(?:_\w+)?$|"
    r"^(?:log|print|display|report|eval|save|sample)_?(?:now|step|this_step|iter|time)$|"
    r"^(?:log|print|display|report|eval|save|sample|checkpoint)_[a-z]+_now$|"
    r"^(?:is_)?(?:finish(?:ed)?|last_(?:step|iter(?:ation)?|batch)|final_step)$|^timeout_(?:sent|reached|hit)$|"
    r"^check_(?:freq(?:uency)?|interval|every)$",
    re.I,
)
# the bound a step counter reaches at the end of the run, and step counters by name
_END_LIMIT = re.compile(r"(?:^|_)(?:max|total|limit|last|final|end)(?:_|$)|steps_this_run|^num_(?:train_)?(?:steps|iters|iterations)$|^train_iters$", re.I)
_STEP_NAME = re.compile(r"^(?:global_)?(?:step|steps|iteration|iter|it|training_steps|global_step)$|"
                        r"^batch_(?:idx|nb|index|num)$", re.I)
_FLAG_PREFIX = re.compile(r"^(?:use|is|on|with|run_on|using|enable)_(?P<dev>[a-z]+?)(?:_\w+)?$", re.I)
_DEVICE_CALL = re.compile(r"(?:^|_)(hpu|habana|gaudi|xla|tpu|cuda|gpu|mps|xpu|npu)(?:_|$)", re.I)


class Branch(NamedTuple):
    """One `if` branch enclosing the current point."""

    node: cst.If
    in_body: bool  # the body (True) or the else branch (False)
    interval: bool  # the test holds on few steps (logging interval, run once)
    device: Optional[tuple]  # (device, positive) when the test is a device predicate
    once: frozenset = frozenset()  # counters the test pins to one value (`i == 0`): see once_counters
    pin_only: bool = False  # an interval only because it pins a counter: then only the step loop's own
    flag: Optional[str] = None  # `if self.should_print:`: the flag attribute the test reads
    exits: object = None  # the body ends the loop: "return", or the Loop its last `break` leaves


def is_log_flag(name: str) -> bool:
    """`should_log`, `do_print`, `log_now`: a name for a flag that holds on logging steps."""
    return bool(_LOG_FLAG.match(name))


def flag_attribute(test: cst.BaseExpression) -> Optional[str]:
    """`if self.should_print:`: the logging flag a method set elsewhere (see Linked's step flags)."""
    if type(test) is cst.Attribute and type(test.value) is cst.Name and test.value.value == "self" \
            and is_log_flag(test.attr.value):
        return test.attr.value
    return None


def unit_names(module: cst.Module, set_globals: set) -> frozenset:
    """Module-level names bound once, to 1 (`log_interval = 1`), that no function re-binds with
    `global`: `step % log_interval == 0` holds on every step. None of them when the module's top level
    runs `exec(...)` or reads `globals()` (nanoGPT's configurator overrides its defaults)."""
    for st in module.body:
        if type(st) not in (cst.FunctionDef, cst.ClassDef) and any(
                type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in ("exec", "globals")
                for n in descendants(st)):
            return frozenset()
    counts: dict = {}
    for st in assigns_in(module):
        for t in st.targets:
            if type(t.target) is cst.Name:
                name = t.target.value
                one = type(st.value) is cst.Integer and st.value.value == "1"
                counts[name] = (counts.get(name, (0, True))[0] + 1, one)
    return frozenset(n for n, (k, one) in counts.items() if k == 1 and one and n not in set_globals)


FIRST_STEPS = 100  # `step < 5` holds on the first few steps: at most this many


def _first_steps(counter: cst.BaseExpression, bound: cst.BaseExpression, counters: set) -> bool:
    """`counter < 5` (or `<=`): a loop counter, or a step count kept by hand, under a small int
    literal: the test holds on that many steps only (not `step < args.warmup_steps`, which may be
    most of the run)."""
    if type(bound) is not cst.Integer or int(bound.evaluated_value) > FIRST_STEPS:
        return False
    if type(counter) is cst.Name and counter.value in counters:
        return True
    return type(counter) in (cst.Name, cst.Attribute) and bool(_STEP_NAME.match(last_name(counter) or ""))


def is_interval_test(test: cst.BaseExpression, counters: set, flags=frozenset(), units=frozenset()) -> bool:
    """True for tests that hold on few steps: `x % k == 0`, `not x % k`, `i == 0`, `step == last`,
    `should_log`, `finished`, a name in ``flags``, and `and`/`or` of those (an `and` needs one, an
    `or` both). ``units``: names bound to 1 (see unit_names): `% log_interval` is no interval."""
    if type(test) is cst.Comparison:
        if len(test.comparisons) != 1:
            return False
        op = test.comparisons[0].operator
        sides = (test.left, test.comparisons[0].comparator)
        if type(op) is cst.Equal:
            if units and any(_modulo_by(x, units) for x in sides):
                return False  # `iter_num % log_interval == 0` with `log_interval = 1`: every step
            if any(_has_modulo(x, units) for x in sides) or counters & set(names_in(test)):
                return True
            # `global_step == args.max_train_steps`, `step == args.warmup`: one step, with a step
            # counter kept by hand (`global_step += 1`)
            # (`self.global_step == 0` in a Lightning hook, `batch_idx == 0`)
            return any(type(a) in (cst.Name, cst.Attribute) and _STEP_NAME.match(last_name(a))
                       and last_name(a) not in names_in(b) for a, b in (sides, sides[::-1]))
        if type(op) is cst.In:
            # `it in metric_lg.log_iters`, `step in save_steps`: the steps a logger picked
            return bool(_LOG_STEPS.search(last_name(sides[1]) or ""))
        if type(op) in (cst.LessThan,) and _has_modulo(sides[0], units) and not _has_modulo(sides[1], units):
            # `(step * n_cores) % log_step < n_cores`: the first few steps of each period, a
            # window as wide as the step's stride (once a period, counted per core)
            return True
        if type(op) in (cst.LessThan, cst.LessThanEqual) and _first_steps(sides[0], sides[1], counters):
            return True  # `data_iter_step < 5`: the first few steps only
        if type(op) in (cst.GreaterThanEqual, cst.GreaterThan):
            if _first_steps(sides[1], sides[0], counters):
                return True  # `5 > step`
            if _reads_clock(sides[0]):
                return True  # `time.time() - last_save >= every`: once in a while, by the clock
            # `global_step >= args.max_steps`: holds once the run is over (then it stops)
            limit = last_name(sides[1]) or ""
            return bool(_END_LIMIT.search(limit)) and bool(counters & set(names_in(sides[0]))
                                                            or _STEP_NAME.match(last_name(sides[0]) or ""))
        return False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _has_modulo(test.expression, units)
    if type(test) is cst.BooleanOperation:
        left = is_interval_test(test.left, counters, flags, units)
        right = is_interval_test(test.right, counters, flags, units)
        if type(test.operator) is cst.And:
            return left or right
        # `g_it == 0 or (g_it + 1) % 500 == 0`: one value of a number besides an interval
        return (left or _pins_literal(test.left)) and (right or _pins_literal(test.right)) and (left or right)
    if type(test) is cst.Name and test.value in flags:
        return True
    if type(test) in (cst.Name, cst.Attribute):
        name = last_name(test)
        return bool(name and _LOG_FLAG.match(name))
    if type(test) is cst.Call:
        name = last_name(test.func)
        return bool(name and _LOG_FLAG.match(name))
    return False


def _reads_clock(node: cst.BaseExpression) -> bool:
    """`time.time() - last_log`, `(time.monotonic() - t0) / 60`: time elapsed on the host clock."""
    return any(type(n) is cst.Call and last_name(n.func) in ("time", "monotonic", "perf_counter")
               for n in descendants(node))


_LOG_STEPS = re.compile(r"^(?:log|print|eval|save|report|checkpoint|display|sample|vis)_?"
                        r"(?:iters?|iterations|steps?|epochs?|points|at)$", re.I)


def _pins_literal(test: cst.BaseExpression) -> bool:
    """`g_it == 0`: a name (or attribute) equal to one integer."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(type(a) in (cst.Name, cst.Attribute) and type(b) is cst.Integer for a, b in (sides, sides[::-1]))


def once_counters(test: cst.BaseExpression, counters) -> frozenset:
    """The loop counters ``test`` pins to a single value (`i == 0`, `counter == 0`,
    `step == args.start`): its body runs on one pass of that counter's loop. An `and` needs one
    such part, an `or` needs them all. Not a modulo (`i % k == 0` holds every k passes), nor a
    comparison of two counters."""
    if type(test) is cst.Comparison:
        if len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
            return frozenset()
        left, right = test.left, test.comparisons[0].comparator
        if _has_modulo(left) or _has_modulo(right):
            return frozenset()
        a, b = counters & set(names_in(left)), counters & set(names_in(right))
        return frozenset(a or b) if bool(a) != bool(b) else frozenset()
    if type(test) is cst.BooleanOperation:
        left, right = once_counters(test.left, counters), once_counters(test.right, counters)
        if type(test.operator) is cst.And:
            return left | right
        return left | right if left and right else frozenset()
    return frozenset()


_TENSOR_TYPES = re.compile(r"^(?:torch\.)?(?:Tensor|\w+Tensor|nn\.Parameter|Parameter)$")
# types that are certainly not tensors: `isinstance(image[0], PIL.Image.Image)` holds for host data
_HOST_TYPES = re.compile(r"^(?:list|tuple|dict|set|frozenset|str|int|float|bool|bytes|complex|"
                         r"(?:np|numpy)\.(?:ndarray|generic|number)|(?:PIL\.)?Image\.Image)$")


def not_tensor_exprs(test: cst.BaseExpression, in_body: bool) -> frozenset:
    """The expressions (as source text) a branch of ``test`` knows are not tensors: the `else` of
    `isinstance(x, torch.Tensor)` (or `torch.is_tensor(x)`), the body of `not isinstance(...)`,
    also as one part of an `and` (`reuse_cache and not isinstance(past[0], torch.Tensor)`); the
    body of `isinstance(x, (list, np.ndarray, PIL.Image.Image...))`; with ``x`` for an ``x[0]``."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return not_tensor_exprs(test.expression, not in_body)
    if type(test) is cst.BooleanOperation:
        if type(test.operator) is cst.And and in_body:  # every part holds in the body
            return not_tensor_exprs(test.left, True) | not_tensor_exprs(test.right, True)
        if type(test.operator) is cst.Or and not in_body:  # every part fails in the else
            return not_tensor_exprs(test.left, False) | not_tensor_exprs(test.right, False)
        return frozenset()
    if type(test) is not cst.Call or not test.args:
        return frozenset()
    name = last_name(test.func)
    if name == "is_tensor" and len(test.args) == 1:
        return _with_container(test.args[0].value) if not in_body else frozenset()
    if name != "isinstance" or len(test.args) != 2:
        return frozenset()
    kinds = test.args[1].value
    types = [code(el.value) for el in kinds.elements] if type(kinds) is cst.Tuple else [code(kinds)]
    if not in_body and any(_TENSOR_TYPES.match(t) for t in types):
        return _with_container(test.args[0].value)
    if in_body and types and all(_HOST_TYPES.match(t) for t in types):
        return _with_container(test.args[0].value)  # `isinstance(image[0], PIL.Image.Image)`
    return frozenset()


def _with_container(node: cst.BaseExpression) -> frozenset:
    """``x[0]`` and ``x``: what holds an item that is not a tensor is not a tensor either (a
    tensor's items are tensors)."""
    out = {code(node)}
    if type(node) is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        out.add(code(node.value))
    return frozenset(out)


_ACCUMULATION = re.compile(r"accum", re.I)


def _modulo_by(node: cst.CSTNode, units: frozenset) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo \
        and type(node.right) is cst.Name and node.right.value in units


def _has_modulo(node: cst.CSTNode, units=frozenset()) -> bool:
    """A `% k` in the test; not `% accum_grad` (`(batch_idx + 1) % accum_grad == 0` holds on every
    optimizer update: a training step, not a logging interval), nor `% k` with ``k`` in ``units``."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.BinaryOperation:
            if type(n.operator) is cst.Modulo:
                if type(n.right) is cst.Name and n.right.value in units:
                    stack.append(n.left)  # (`% 1` holds every step: look on for another modulus)
                    continue
                return not _ACCUMULATION.search(code(n.right))
            stack += (n.left, n.right)
        elif type(n) is cst.BooleanOperation:  # `(k > 0 and step % k) == 0`
            stack += (n.left, n.right)
    return False


def device_predicate(test: cst.BaseExpression, flags: Optional[dict] = None) -> Optional[tuple]:
    """(device, positive) when ``test`` says which device the code is on, else None. ``flags``:
    local names bound to such a test (`checks = enabled and not use_tpu`)."""
    if flags and type(test) is cst.Name and test.value in flags:
        return flags[test.value]
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = device_predicate(test.expression, flags)
        return (inner[0], not inner[1]) if inner else None
    if type(test) is cst.BooleanOperation:
        left, right = device_predicate(test.left, flags), device_predicate(test.right, flags)
        if type(test.operator) is cst.And:
            # `use_hpu and x`: the body runs only on that device; `not is_xla_tensor(x) and not
            # is_hpu_tensor(x)`: on neither
            for p in (left, right):
                if p is not None and p[1]:
                    return p
            if left is not None and right is not None:
                return _union(left[0], right[0]), False
            return left or right
        if left is not None and right is not None and left[1] and right[1]:
            return _union(left[0], right[0]), True  # `self.tpu or self.hpu`: on either
        return left if left is not None and left == right else None
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        a, b = test.left, test.comparisons[0].comparator
        positive = type(op) in (cst.Equal, cst.In, cst.Is)
        if not positive and type(op) not in (cst.NotEqual, cst.NotIn, cst.IsNot):
            return None
        for lit, other in ((a, b), (b, a)):
            dev = device_literal(lit)
            if dev is not None and _mentions_device(other, lit is a):
                return dev, positive
            if (string_value(lit) or "").startswith("flash_attention"):
                # `config._attn_implementation == "flash_attention_2"`: the FlashAttention
                # kernels' path, which runs on CUDA only
                return DEVICES["cuda"], positive
        if type(op) in (cst.In, cst.NotIn) and type(b) in (cst.Tuple, cst.List, cst.Set):
            devs = {device_literal(el.value) for el in b.elements}
            if len(devs) == 1 and None not in devs:
                return devs.pop(), positive
        return None
    if type(test) is cst.Call:
        name = last_name(test.func) or ""
        if name.startswith(("is_", "has_")) or name in ("is_available", "device_count"):
            full = _dotted_text(test.func)
            m = _DEVICE_CALL.search(full)
            if m:
                return DEVICES[m.group(1).lower()], True
        return None
    if type(test) in (cst.Name, cst.Attribute):
        name = last_name(test) or ""
        low = name.lower()
        if low in DEVICES and low not in ("cpu",):
            return DEVICES[low], True
        if low.lstrip("_").startswith("use_flash_attention"):
            return DEVICES["cuda"], True  # `self._use_flash_attention_2`: CUDA's kernels
        m = _FLAG_PREFIX.match(low)
        if m and m.group("dev") in DEVICES:
            return DEVICES[m.group("dev")], True
    return None


def device_literal(node: cst.BaseExpression) -> Optional[str]:
    """"hpu", "xla:0", and `torch.device("cpu")`: the device it names."""
    if type(node) is cst.Call and _dotted_text(node.func) in ("torch.device", "device") and node.args:
        node = node.args[0].value
    s = string_value(node)
    if s is None:
        return None
    head = s.split(":", 1)[0].lower()
    return DEVICES.get(head) if head in ("hpu", "xla", "cuda", "cpu", "mps", "tpu", "xpu", "npu") else None


def _mentions_device(node: cst.BaseExpression, literal_first: bool) -> bool:
    """`device.type`, `args.device`, `str(x.device)`, `accelerator`: an expression about a device
    (a string literal compared with anything else is not a device test: `mode == "cpu"` is)."""
    text = _dotted_text(node.func if type(node) is cst.Call else node).lower()
    if type(node) is cst.Call and node.args:
        text += " " + _dotted_text(node.args[0].value).lower()
    return any(w in text for w in ("device", "type", "accelerator", "backend", "platform", "hw", "dev"))


def _dotted_text(node) -> str:
    parts = []
    while type(node) in (cst.Attribute, cst.Call):
        if type(node) is cst.Call:
            node = node.func
            continue
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
    return ".".join(reversed(parts))


def _union(a: str, b: str) -> str:
    """Devices joined as "xla|hpu" (one test names both)."""
    return "|".join(sorted(set(a.split("|")) | set(b.split("|"))))


# the "device" of a branch that never runs (`dead.never_holds`, `dead.device_object_test`): off every target
NEVER = ("never", True)


def lazy_branch(device: Optional[tuple]) -> Optional[bool]:
    """Which branch of an `if` on a device predicate a lazy device takes: True the body (`if
    self.use_hpu:`), False the other (`if not is_xla():`, a branch that never runs); None when the
    test names no lazy device. A test that names one lazy device is read as that device's (a
    project that tests for hpu runs on hpu)."""
    if device is None:
        return None
    names, positive = device
    if any(d in ("hpu", "xla") for d in names.split("|")):
        return positive
    if device == NEVER:
        return False
    # (a test for another device says less: `cuda = device.type != "cpu"` then `if cuda:` holds
    # on a Gaudi too; the values stay joined)
    return None


def runs_on(device: str, positive: bool, target: str) -> bool:
    """Whether a branch guarded by (device, positive) runs on ``target`` (``device`` may name
    several, "xla|hpu")."""
    return (target in device.split("|")) == positive


def skips_the_pass(node: cst.If) -> bool:
    """`if ...: continue` (the body's last statement skips the rest of the pass)."""
    body = node.body.body
    if not body:
        return False
    last = body[-1]
    return type(last) is cst.SimpleStatementLine and len(last.body) == 1 and type(last.body[0]) is cst.Continue


def returns_early(node: cst.If, raises: bool = True) -> bool:
    """`if ...: return`, `if ...: raise ...` (the body's last statement leaves the function;
    ``raises``: by raising too). What follows a `raise` runs on every valid call: a test that
    raises is a check (`if n % beam != 0: raise ...`), never a logging interval."""
    body = node.body.body
    if not body:
        return False
    last = body[-1]
    return type(last) is cst.SimpleStatementLine and len(last.body) == 1 \
        and type(last.body[0]) in ((cst.Return, cst.Raise) if raises else (cst.Return,))


_NEGATED_OPS = {cst.NotEqual: cst.Equal, cst.Equal: cst.NotEqual}


def negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """The test that holds when ``test`` does not: `a != b` -> `a == b`, `not x` -> `x`,
    `a or b` -> `(not a) and (not b)`; anything else -> `not test`."""
    tp = type(test)
    if tp is cst.UnaryOperation and type(test.operator) is cst.Not:
        return test.expression
    if tp is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) in _NEGATED_OPS:
        op = _NEGATED_OPS[type(test.comparisons[0].operator)]()
        return test.with_changes(comparisons=[test.comparisons[0].with_changes(operator=op)], lpar=(), rpar=())
    if tp is cst.BooleanOperation and type(test.operator) is cst.Or:
        return cst.BooleanOperation(negated(test.left), cst.And(), negated(test.right))
    return cst.UnaryOperation(cst.Not(), test)


def has_modulo(test: cst.BaseExpression) -> bool:
    """The test computes a remainder (`counter % print_every != 0`): a skip on every pass but the
    k-th, not on a flag (`if self.interrupt: continue` skips nothing on the usual pass)."""
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.BinaryOperation and type(n.operator) is cst.Modulo:
            return True
        stack.extend(child_nodes(n))
    return False


def given_param(test: cst.BaseExpression, params: set) -> Optional[str]:
    """The parameter (of ``params``: default `None` or `False`) the test holds only when it is
    given: `top_k is not None`, `top_k`, `callback is not None and i % k == 0`."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return given_param(test.left, params) or given_param(test.right, params)
    if type(test) is cst.Name and test.value in params:
        return test.value
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.left) is cst.Name \
            and test.left.value in params and type(test.comparisons[0].operator) is cst.IsNot:
        comp = test.comparisons[0].comparator
        if type(comp) is cst.Name and comp.value == "None":
            return test.left.value
    return None
