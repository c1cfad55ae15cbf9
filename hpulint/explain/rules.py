"""Which hpulint rule explains an event, and the fix to say with it.

The log says *what* happened (a guard failed on ``i == 3``, a graph broke on ``Tensor.item()``,
a tensor was read before the step marker); the source line, when the log names one, says on
what. Each test below names the rule whose pattern produces exactly that event.
"""
from __future__ import annotations

import re
from typing import Optional

FIXES = {
    "HPU001": "keep the loop counter out of the graph: index with a device tensor, or read a fixed "
              "position and torch.roll the buffer each step (`hpulint --fix --unsafe-fixes` rewrites steps[i])",
    "HPU002": "compare identity (`a is b`) or decide once outside the step instead of torch.equal",
    "HPU003": "append the pieces to a list and torch.cat them once after the loop",
    "HPU004": "mark a step: htcore.mark_step() or xm.mark_step() after backward() and after optimizer.step()",
    "HPU005": "read the value once per logging interval, or keep it on the device and read it after the loop",
    "HPU006": "keep shapes static: torch.where(mask, x, 0) or a fixed-size pad instead of a boolean mask, "
              "nonzero or unique",
    "HPU007": "drop_last=True on the DataLoader (or pad the last batch to the full size)",
    "HPU008": "branch on the device with torch.where (or torch.cond), or decide once outside the step",
    "HPU009": "pass only tensors, as positional arguments, to a graph-wrapped module",
    "HPU010": "set the mode with FusedSDPA.apply's arguments, not the sdp_kernel context manager",
    "HPU011": "pass the number as a device tensor (torch.tensor(v, device=...)) so the graph does not bake it in",
    "HPU012": "move the read (or the backward() call) out of the compiled function: return the tensor "
              "and read it in the eager code, on logging steps only",
    "HPU013": "keep the choice in the graph: torch.where(cond, a, b) or torch.cond",
    "HPU014": "keep shapes static (torch.where(mask, x, 0), weight by the mask), or set "
              "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
    "HPU015": "remove dynamic=False / mark_static, or torch._dynamo.mark_dynamic(x, dim) before the call",
    "HPU016": "compile the parent module once, or keep the attribute in a tensor buffer",
    "HPU017": "pass the value as an int argument or a tensor, not a string, a growing list or a global",
}

_SIZE = re.compile(r"size mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_INT_GUARD = re.compile(r"^(?:L\[')?([A-Za-z_]\w*)(?:'\])? == (-?\d+)$")
_FLOAT_GUARD = re.compile(r"^(?:L\[')?([A-Za-z_]\w*)(?:'\])? == (-?\d+\.\d*(?:e-?\d+)?)$")


def _guard(text: str) -> str:
    m = re.search(r"guard failed: (.*?)(?:;|$)", text)
    return m.group(1).strip() if m else ""


def classify(event, source: str) -> tuple:
    """(rule or None, why) for an event, given its source line's text (may be empty)."""
    src = source.strip()
    if event.engine == "dynamo" and event.kind in ("recompilation", "recompile limit"):
        guard = _guard(event.text)
        m = _SIZE.search(guard)
        if m:
            dim, old, new = (int(x) for x in m.groups())
            if dim == 0 and new < old:
                return "HPU007", f"a shorter batch (dim 0: {old} -> {new}), like a DataLoader's last batch"
            if new > old:
                return "HPU003", f"a tensor that grows between calls (dim {dim}: {old} -> {new})"
            return "HPU006", f"a shape that depends on the data (dim {dim}: {old} -> {new})"
        m = _FLOAT_GUARD.match(guard)
        if m:
            if m.group(1).startswith("___stack") or ".item()" in src:
                return "HPU012", "a value read from the tensor (.item()) became a constant of the graph after the break"
            return "HPU011", f"the Python number `{m.group(1)}` is baked into the graph as a constant"
        m = _INT_GUARD.match(guard)
        if m:
            name = m.group(1)
            if re.search(rf"\[[^\]]*\b{name}\b", src):
                return "HPU001", f"the loop counter `{name}` indexes a tensor: each value is another graph"
            return "HPU011", f"the Python number `{name}` is baked into the graph as a constant"
        return None, ""
    text = event.text.lower()
    if event.kind == "graph break":
        if "item()" in text or "_local_scalar_dense" in text:
            return "HPU012", "reading a tensor's value on the host (.item()) ends the graph"
        if "backward()" in text or "trace_autograd_ops" in text or "autograd.grad" in text:
            return "HPU012", "a backward pass inside the compiled function is not traced: the graph ends there"
        if "numpy function unsupported" in text:
            return "HPU012", "a NumPy call torch's NumPy does not have ends the graph"
        if "data-dependent branching" in text or "generic_jump" in text or "jump with tensorvariable" in text:
            return "HPU013", "a branch on a tensor's value ends the graph"
        if "dynamic shape operator" in text or "nonzero" in text or "unique" in text or "masked_select" in text:
            return "HPU014", "an op whose output shape depends on the data ends the graph"
        if "equal" in text:
            return "HPU014", "torch.equal returns a Python bool: the graph ends there"
        if "context manager" in text or "sdp_kernel" in text:
            return "HPU010", "a context manager the compiler cannot trace breaks the graph in two"
        if "builtin operator `print`" in text or "print" in src.split("(")[0]:
            return "HPU012", "printing a value read from a tensor ends the graph"
        return None, ""
    if event.kind == "host sync":
        return _host_read(src)
    if event.kind == "too frequent":
        if event.metric.startswith("TransferFrom"):
            return "HPU005", "values copied to the host more than once every two steps"
        return None, ""
    if event.kind == "cpu fallback":
        if re.search(r"nonzero|unique|masked_select", event.metric):
            return "HPU006", "an op whose output shape depends on the data runs on the CPU"
        if "_local_scalar_dense" in event.metric or "item" == event.metric:
            return "HPU005", "a tensor read on the host"
        return None, ""
    return None, ""


def _host_read(src: str) -> tuple:
    if "torch.equal" in src:
        return "HPU002", "torch.equal copies both tensors to the host"
    if re.match(r"^(if|elif|while|assert)\b", src):
        return "HPU008", "a branch on a tensor's value reads it on the host"
    if re.search(r"nonzero|unique|masked_select|\[[^\]]*(>|<|==|!=)[^\]]*\]", src):
        return "HPU006", "an op whose output shape depends on the data reads the data on the host"
    return "HPU005", "a tensor's value read on the host before the step marker"


# rules whose pattern makes a step graph compile again: candidates for a recompilation that the
# log places at a step marker, not at its cause
RECOMPILE_RULES = ("HPU001", "HPU003", "HPU006", "HPU007", "HPU011", "HPU008")


def fix_for(rule: Optional[str]) -> str:
    return FIXES.get(rule or "", "")
