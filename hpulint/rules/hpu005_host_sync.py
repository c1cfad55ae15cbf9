"""HPU005 host-sync-every-step: reading a tensor's value on the host in every step.

Source: Gaudi docs, "Reducing the Printing Quantities Frequency": reporting the loss
with ``loss.item()`` or a progress bar each step pulls device tensors to the host, so the device
must finish first, which breaks the overlap of host and device; set a high print frequency.
The PyTorch/XLA debugging guide shows the XLA side ("TransferFromServerTime too frequent").
"""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.build import is_cpu, method_hint
from hpulint.analysis.host_readers import host_read
from hpulint.analysis.outputs import run_output
from hpulint.analysis.names import is_host_name, is_model_name, is_tokenizer_name
from hpulint.analysis.syntax import keyword, last_name
from hpulint.rules.base import Rule

MESSAGE = (
    "{what} copies a device value to the host {why}: the device must finish the pending graph "
    "before every step goes on. Read it once per logging interval (`if step % log_every == 0:`), "
    "or accumulate on the device and read after the loop"
)
CONVERSIONS = frozenset({"float", "int", "bool"})
_BULK = frozenset({"`.cpu()`", "`.numpy()`", "`.tolist()`", '`.to("cpu")`'})
_NOT_TENSOR = ("scalar", "other", "seq", "none", "model", "optimizer", "loader", "sym", "inst")
RENDEZVOUS = frozenset(f"torch_xla.core.xla_model.{n}" for n in ("mesh_reduce", "rendezvous", "xla_rendezvous"))
_SCALER = re.compile(r"(?:^|_)scaler$", re.I)


class HostSyncEveryStep(Rule):
    code = "HPU005"
    name = "host-sync-every-step"
    summary = ".item()/.tolist()/.cpu()/print of a tensor in every step, not under a logging interval"
    triggers = (".item(", ".tolist(", "cpu(", "numpy(", "float(", "int(", "bool(", "print(",
                "set_postfix", "add_scalar", "f\"", "f'", ".to(", "device=", "array(", "decode(", "mesh_reduce(", "rendezvous(", "] =",
                "get_scale(", "+=", "-=", "*=", "/=", "tensor(", "math", "wandb", "' %", "\" %", "'%", "\"%")
    lazy_mode_only = True

    def visit_Raise(self, node: cst.Raise) -> None:
        self._failing += 1  # an error path runs once, not every step

    def leave_Raise(self, node: cst.Raise) -> None:
        self._failing -= 1

    def visit_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            self._failing += 1

    def leave_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            self._failing -= 1

    _failing = 0

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._chained: set[int] = set()  # `.cpu()` calls already reported through `.cpu().item()`

    _empty: frozenset = frozenset()  # `torch.tensor(b)` calls where the list `b` is empty

    def visit_IfExp(self, node: cst.IfExp) -> None:
        """`torch.stack(b) if len(b) > 0 else torch.tensor(b, device=d)`: the else side runs with
        `b` empty, and reads nothing."""
        name = _nonempty_test(node.test)
        e = node.orelse
        if name is not None and type(e) is cst.Call and e.args and type(e.args[0].value) is cst.Name \
                and e.args[0].value.value == name:
            self._empty = self._empty | {id(e)}

    def visit_Expr(self, node: cst.Expr) -> None:
        if type(node.value) is cst.Call:
            self._discarded = id(node.value)

    _discarded = 0  # the call a statement makes and drops the result of (`model.cpu()`: a module moved)

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        if (an.function.kind == "module" and an.loop is None) or self._failing:
            return
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            recv = func.value
            if _is_cpu_call(recv):
                if method in ("item", "tolist", "numpy") and not node.args and recv.func.attr.value == "cpu":
                    # x.cpu().item(): only a tensor has both, so x need not be known as one; the
                    # .cpu() is the sync and is reported there (once)
                    self._chained.add(id(recv))
                    self._report(recv, "`.cpu()`", an.value(recv.func.value), strict=False)
                return
            v = an.value(recv)
            if method == "item" and not node.args:
                if not is_host_name(_root_name(recv)):  # (`positions_cpu[0].item()`: named for the host)
                    self._report(node, "`.item()`", v, strict=False)
            elif id(node) == self._discarded and method in ("cpu", "to") \
                    and not (type(recv) is cst.Name and not is_model_name(recv.value)):
                # a module's move (`self.vae.cpu()`); a local tensor's dropped copy (`output.to("cpu")`
                # to wait for the device) still copies and waits
                return
            elif method == "cpu" and not node.args and id(node) not in self._chained:
                self._report(node, "`.cpu()`", v)
            elif method == "to" and node.args and _to_cpu(an, node):
                self._report(node, "`.to(\"cpu\")`", v)
            elif method in ("tolist", "numpy") and not node.args:
                self._report(node, f"`.{method}()`", v)
            elif method in ("add_scalar", "add_scalars") and len(node.args) >= 2 and node.args[1].keyword is None:
                # TensorBoard's SummaryWriter converts the value with `.cpu().numpy()`
                arg = node.args[1].value
                vals = [an.value(arg)] + ([an.value(el.value) for el in arg.elements
                                           if type(el) is cst.DictElement] if type(arg) is cst.Dict else [])
                self._report_any(node, f"`{method}()` of a tensor (TensorBoard reads it with `.cpu().numpy()`)", vals)
            elif method in ("decode", "batch_decode") and node.args and is_tokenizer_name(last_name(recv)):
                # a tokenizer turns the ids into a Python list (`.tolist()`) before decoding them
                self._report(node, f"`{method}()` of device token ids (the tokenizer reads them with "
                             "`.tolist()`)", an.value(node.args[0].value))
            elif method == "get_scale" and not node.args and _SCALER.search(last_name(recv) or ""):
                # torch's GradScaler returns its scale with `.item()` (a host read every call)
                self._defer(node, "`GradScaler.get_scale()` (it reads the scale with `.item()`)", lambda: True)
            elif method == "format" and _is_text(recv) and node.args:
                # `"loss:{}".format(loss)`: str.format reads each tensor argument with `format()`
                vals = [an.value(a.value) for a in node.args if not a.star]
                self._report_any(node, "formatting a tensor into a string (`str.format`)", vals)
            elif method == "set_postfix":
                vals = [an.value(a.value) for a in node.args] + [
                    an.value(el.value) for a in node.args if type(a.value) is cst.Dict
                    for el in a.value.elements if type(el) is cst.DictElement]
                self._report_any(node, "a progress-bar postfix with a tensor", vals)
        qn = an.qualname(func) or ""
        if not qn.startswith(("torch.", "numpy.")) and type(func) in (cst.Name, cst.Attribute):
            self._host_reader_call(node)
        if qn in ("torch.tensor", "torch.as_tensor") and node.args and node.args[0].keyword is None:
            device = keyword(node, "device")
            if device is not None and method_hint_cpu(an, device):
                self._report(node, f"`{qn}(..., device=\"cpu\")` of a device tensor", an.value(node.args[0].value))
            elif type(node.args[0].value) in (cst.List, cst.Tuple):
                # `torch.tensor([t])`: torch reads each tensor in a list as a Python number (one
                # `.item()` each), then builds a CPU tensor; `torch.tensor(t)` copies on the device
                vals = [an.value(e.value) for e in node.args[0].value.elements if type(e) is cst.Element]
                self._report_any(node, f"`{qn}()` of a list holding a device tensor (it reads each "
                                 "element with `.item()`)", vals)
            elif type(node.args[0].value) is cst.Name and id(node) not in self._empty:
                # `actions += [sampled_action]`, then `torch.tensor(actions)`: the same, by name
                held = an.value(node.args[0].value)
                self._defer(node, f"`{qn}()` of a list holding a device tensor (it reads each element "
                            "with `.item()`)", lambda: _holds_device_tensor(an, held))
            return
        if qn in RENDEZVOUS:
            # PyTorch/XLA's mesh_reduce and rendezvous run the pending graph (`torch_xla.sync()`),
            # then exchange the payload through the device and read its size with `.item()`,
            # whatever the data (a host float too); mesh_reduce copies tensors to the host first
            self._defer(node, f"`xm.{qn.rsplit('.', 1)[1]}()` (it runs the pending graph and waits "
                        "for every replica)", lambda: True)
            return
        if qn in ("numpy.array", "numpy.asarray") and node.args:
            self._report(node, f"`{qn.replace('numpy', 'np')}()` of a device tensor", an.value(node.args[0].value))
            return
        if qn == "wandb.log" and node.args and type(node.args[0].value) is cst.Dict:
            # Weights & Biases converts each tensor it is given to a Python number or an array
            for el in node.args[0].value.elements:  # reported at the tensor's entry
                if type(el) is cst.DictElement:
                    self._report(el.value, "`wandb.log()` of a tensor (it converts it on the host)",
                                 an.value(el.value))
            return
        if qn.startswith("math.") and qn not in ("math.trunc", "math.pi", "math.e") and node.args:
            # `math.atan(pixels / (2 * focal))`: the math module takes floats, and reads a tensor
            # with `float()` (a copy to the host and a wait, as `float(t)`)
            vals = [an.value(a.value) for a in node.args if a.keyword is None]
            self._report_any(node, f"`{qn}()` of a tensor (it reads the tensor with `float()`)", vals)
            return
        if type(func) is cst.Name:
            if func.value in CONVERSIONS and len(node.args) == 1:
                self._report(node, f"`{func.value}()` of a tensor", an.value(node.args[0].value))
            elif func.value == "print":
                vals = [an.value(a.value) for a in node.args if a.keyword is None]
                self._report_any(node, "printing a tensor", vals)

    def visit_Assign(self, node: cst.Assign) -> None:
        """`boxes[i, pos] = out.bbox_preds[j][0]`: a device value stored into a host tensor is
        copied to the host, and waits for the device."""
        if len(node.targets) == 1:
            self._store(node.targets[0].target, node.value, "storing a device tensor into a host tensor")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """`self.tp_arr[b] += tp`, `hist += counts`: a NumPy array (or CPU tensor) updated in place
        with a device value converts it on the host, and waits for the device. (A Python number
        `total += loss` becomes a tensor: no copy.)"""
        target = node.target
        what = "updating a host array in place with a device tensor"
        if type(target) is cst.Subscript:
            self._store(target, node.value, what)
            return
        an = self.an
        if (an.function.kind == "module" and an.loop is None) or self._failing or type(target) is not cst.Name:
            return  # (`self.hist += t` joins its value into what the attribute holds: not followed)
        base, value = an.value(target), an.value(node.value)
        self._defer(node.value, what, lambda: an.is_host(base) and an.is_device_tensor(value)
                    and not run_output(an, value))

    def _store(self, target, value_node, what: str) -> None:
        an = self.an
        if (an.function.kind == "module" and an.loop is None) or self._failing:
            return
        if type(target) is not cst.Subscript:
            return
        key = an.value(target.slice[0].slice.value) if len(target.slice) == 1 \
            and type(target.slice[0].slice) is cst.Index else None
        base, value = an.value(target.value), an.value(value_node)

        def is_copy():
            if key is not None and an.kind(key) not in ("scalar", "data", "size", "tensor", "mask"):
                return False  # (`inputs[key] = t.to(device)`: a dict's entry, not a tensor's position)
            return an.is_host(base) and an.is_device_tensor(value) and not run_output(an, value)

        self._defer(value_node, what, is_copy)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        an = self.an
        if (an.function.kind == "module" and an.loop is None) or self._failing:
            return
        self._report(node, "formatting a tensor into a string", an.value(node.expression))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`'loss=%5.3f' % loss`, `"%d/%d" % (i, n)`: %-formatting reads each tensor operand."""
        an = self.an
        if type(node.operator) is not cst.Modulo or not _is_text(node.left):
            return
        if (an.function.kind == "module" and an.loop is None) or self._failing:
            return
        right = node.right
        # (`% (epoch, *mloss)`: a tensor unpacked into the tuple is read element by element)
        parts = [e.value for e in right.elements] if type(right) is cst.Tuple else [right]
        self._report_any(node, "formatting a tensor into a string", [an.value(p) for p in parts])

    def _host_reader_call(self, node: cst.Call) -> None:
        """`to_cpu(loss)`: a project function that only returns a host copy of its argument
        (see analysis.host_readers) copies here, where the device value is passed."""
        an = self.an
        site = an.call_sites.get(id(node))
        if site is None or site.index < 0:
            return
        fid = an.function.fid
        positional = [an.value(a.value) for a in node.args if a.keyword is None and not a.star]
        named = {a.keyword.value: an.value(a.value) for a in node.args if a.keyword is not None}
        reads: list = []
        here = an.here()

        def is_sync():
            for how, target, shift in an.facts.ask(("call", fid, site.index)):
                info = an.facts.ask(("callee", target)) if how == "fn" and target else None
                read = info.get("host_read") if info else None
                if not read or read[0] not in info["params"]:
                    continue
                pos = info["params"].index(read[0]) - shift
                arg = named.get(read[0]) or (positional[pos] if 0 <= pos < len(positional) else None)
                if arg is None or an.is_host(arg) or run_output(an, arg):
                    continue
                # (`.item()`: only a tensor has it, so a value not known as something else is one;
                # a value not known at all is what the project's callers pass the helper, joined:
                # `to_numpy(drift)` of a helper other callers give device tensors)
                kind = an.kind(arg)
                if an.is_device_tensor(arg) or (read[1] == "`.item()`" and kind not in _NOT_TENSOR) or (
                        kind == "unknown" and an.facts.ask(("param", target, read[0]))[0] in ("tensor", "mask")):
                    reads[:] = [info["name"], read[1]]
                    return not (read[1] in _BULK and self._inference(here, fid))
            return False

        self._defer(node, lambda: f"`{reads[0]}()` of a device tensor (it copies it with {reads[1]})", is_sync)

    def _inference(self, here, fid: str) -> bool:
        """The call is in code no training step runs (the innermost step loop around it neither
        runs backward() nor steps an optimizer; or no step loop, and no training step reaches the
        function): a converter's whole array there is the loop's product, as in the helper
        itself (see analysis.outputs)."""
        an = self.an
        step = next((lp for lp in here.loop.chain() if lp.is_step_loop), None) if here.loop is not None else None
        if step is not None:
            training = an.loop_training(step)
            return not (training["backward"] or training["opt_step"])
        return not an.facts.ask(("trains", fid))

    def _report(self, node: cst.CSTNode, what: str, val, strict: bool = True) -> None:
        """``strict``: the value must be known to be a device tensor (else: not known to be on
        the host, as for `.item()`, which only tensors and NumPy scalars have)."""
        an = self.an

        def is_sync(val=val):
            if an.is_host(val) or run_output(an, val):
                return False
            return an.is_device_tensor(val) if strict else an.kind(val) not in ("scalar", "other", "seq", "none")

        self._defer(node, what, lambda: is_sync())

    def _report_any(self, node: cst.CSTNode, what: str, vals: list) -> None:
        an = self.an
        self._defer(node, what, lambda: any(an.is_device_tensor(v) for v in vals))

    def _defer(self, node: cst.CSTNode, what, is_sync) -> None:
        """``what``: the read's description, or a function giving it once ``is_sync`` said yes."""
        an = self.an
        here = an.here(node)
        fn = here.function
        if fn.kind == "function" and host_read(fn.node, fn.params) is not None:
            return  # a helper that only returns the copy: reported where it is called
        loops = list(here.loop.chain()) if here.loop is not None else []

        def when():
            if not is_sync():
                return None
            if an.log_guarded(here) or an.device_excluded(here):
                return None
            why = an.hot_reason(here)
            if why is not None and an.loop_output(here, node):
                return None  # the copy is what an inference loop produces (written, shown, streamed)
            if why is None and an.target_of(here.function) is not None:
                # an iterative loop on a lazy device (x = f(x) each pass) without a model call
                carried = next((lp for lp in loops if any(an.is_device_tensor(v) for v in lp.carried_vals)
                                and not _holds_steps(here.function, lp)), None)
                if carried is not None:
                    why = "in a loop that updates a tensor it carries to the next pass"
                    if an.loop_output(here, node):
                        return None  # (each pass's product copied out, as in a step loop)
            if why is None:
                return None
            return MESSAGE.format(what=what if isinstance(what, str) else what(), why=why)

        self.report(node, "{why}", when=when)


def _nonempty_test(test: cst.BaseExpression):
    """The list name a test holds non-empty: `b`, `len(b)`, `len(b) > 0`, `len(b) != 0`, else None."""
    if type(test) is cst.Name:
        return test.value
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if type(comp.operator) in (cst.GreaterThan, cst.NotEqual) and type(comp.comparator) is cst.Integer \
                and comp.comparator.value == "0":
            test = test.left
    if type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "len" and len(test.args) == 1 \
            and type(test.args[0].value) is cst.Name:
        return test.args[0].value.value
    return None


def _holds_device_tensor(an, v) -> bool:
    """A Python list or tuple (not a tensor) of which an element is a device tensor."""
    got = an.resolve(v)
    return got.kind == "tuple" and any(p.kind in ("tensor", "mask") for p in got.parts)


def _holds_steps(fn, loop) -> bool:
    """A step loop is nested in ``loop``: each of its passes is a whole run (a chunk denoised
    step by step), so what a pass does once is not a per-step cost."""
    return any(other is not loop and other.is_step_loop and loop in other.chain() for other in fn.loops)


def method_hint_cpu(an, device: cst.BaseExpression) -> bool:
    return is_cpu(an, device)


def _to_cpu(an, call: cst.Call) -> bool:
    return method_hint(an, call, "to") == "cpu"


def _is_cpu_call(node: cst.BaseExpression) -> bool:
    """x.cpu() or x.detach().cpu(): already on the host (the .cpu() call is the sync)."""
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("cpu", "numpy")


def _root_name(node: cst.BaseExpression):
    """The name a subscripted value is read from (`lens_cpu` in `lens_cpu[0]`, `self.x_np[i]`)."""
    while type(node) is cst.Subscript:
        node = node.value
    return last_name(node)


def _is_text(node: cst.BaseExpression) -> bool:
    """A string, or one built of strings (`("%11s" * 2 + "%11.4g" * 5)`)."""
    if type(node) in (cst.SimpleString, cst.ConcatenatedString):
        return True
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Multiply):
        return _is_text(node.left) or (type(node.operator) is cst.Add and _is_text(node.right))
    return False
