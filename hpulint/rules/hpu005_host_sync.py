"""HPU005 host-sync-every-step: reading a tensor's value on the host in every step.

Source: seed 002 (Gaudi docs, "Reducing the Printing Quantities Frequency"): reporting the loss
with ``loss.item()`` or a progress bar each step pulls device tensors to the host, so the device
must finish first, which breaks the overlap of host and device; set a high print frequency.
Seed 003 shows the PyTorch/XLA side ("TransferFromServerTime too frequent").
"""
from __future__ import annotations

import libcst as cst

from hpulint.rules.base import Rule

MESSAGE = (
    "{what} copies a device value to the host {why}: the device must finish the pending graph "
    "before every step goes on. Read it once per logging interval (`if step % log_every == 0:`), "
    "or accumulate on the device and read after the loop"
)
CONVERSIONS = frozenset({"float", "int", "bool"})


class HostSyncEveryStep(Rule):
    code = "HPU005"
    name = "host-sync-every-step"
    summary = ".item()/.tolist()/.cpu()/print of a tensor in every step, not under a logging interval"
    triggers = (".item(", ".tolist(", ".cpu(", ".numpy(", "float(", "int(", "bool(", "print(",
                "set_postfix", "f\"", "f'")

    def visit_Call(self, node: cst.Call) -> None:
        an = self.an
        func = node.func
        what = None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            recv = func.value
            if an.is_host(recv):
                return
            if method == "item" and not node.args and not _is_cpu_call(recv):
                what = "`.item()`"
            elif method == "cpu" and not node.args and not an.is_model_name(recv) and an.is_tensor(recv):
                what = "`.cpu()`"
            elif method in ("tolist", "numpy") and not node.args and an.is_tensor(recv) and not _is_cpu_call(recv):
                what = f"`.{method}()`"
            elif method == "set_postfix" and any(an.is_tensor(a.value) or _dict_has_tensor(an, a.value)
                                                 for a in node.args):
                what = "a progress-bar postfix with a tensor"
        elif isinstance(func, cst.Name):
            if func.value in CONVERSIONS and len(node.args) == 1 and an.is_tensor(node.args[0].value) \
                    and not an.is_host(node.args[0].value):
                what = f"`{func.value}()` of a tensor"
            elif func.value == "print" and any(an.is_tensor(a.value) for a in node.args if a.keyword is None):
                what = "printing a tensor"
        if what is not None:
            self._report(node, what)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if self.an.is_tensor(node.expression):
            self._report(node, "formatting a tensor into a string")

    def _report(self, node: cst.CSTNode, what: str) -> None:
        an = self.an
        if an.loop is None and not any(s.kind == "function" for s in an.scopes):
            return
        if an.under_log_guard():
            return
        hot = an.hot_context()
        loops = list(an.loop.chain()) if an.loop is not None else []

        def when():
            why = hot()
            if why is None:
                carried = next((lp for lp in loops if lp.facts.carried), None)
                if carried is not None:
                    why = "in a loop that updates a tensor it carries to the next pass"
            return why

        self.report(node, MESSAGE.format(what=what, why="{why}"), when=when)


def _is_cpu_call(node: cst.BaseExpression) -> bool:
    """x.cpu() or x.detach().cpu(): already on the host (the .cpu() call is the sync)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("cpu", "numpy")


def _dict_has_tensor(an, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Dict):
        return any(isinstance(el, cst.DictElement) and an.is_tensor(el.value) for el in node.elements)
    return False
