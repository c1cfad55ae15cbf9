"""Host batches: a loop over a data loader whose body moves parts of the batch to the device
(`ids = d["ids"].to(device)`, `inputs, labels = data[1]; inputs = inputs.to(device)`) iterates a
loader that yields host tensors. The parts it leaves where they are (`d["offsets"].cpu()`, the
labels turned into a NumPy array) are on the host, and reading them is no device read.

The body is scanned before it is walked, so a part read above the move is seen as the host
tensor it is. A loop over a marking loader (`MpDeviceLoader`) yields device tensors whatever its
body does: one built in the function is seen here; one its callers pass in (`loader` a parameter)
when the project is linked (a :class:`~hpulint.analysis.values.HostBatch` value)."""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.syntax import descendants, last_name, root_name, target_names
from hpulint.analysis.values import HostBatch, Join, Meth, Named, RetOf, is_marking

_DEVICE_ARG = re.compile(r"device|^dev$|cuda|hpu|xla|tpu|gpu", re.I)


def _moves(call: cst.Call) -> bool:
    """`.to(device)`, `.to(device, dtype=...)`, `.to(xm.xla_device())`, `.cuda()`."""
    if type(call.func) is not cst.Attribute:
        return False
    method = call.func.attr.value
    if method in ("cuda", "hpu"):
        return True
    if method != "to":
        return False
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value == "device":
                return True
            continue
        v = a.value
        if type(v) is cst.SimpleString:
            return bool(_DEVICE_ARG.search(v.value))
        name = last_name(v.func if type(v) is cst.Call else v) or ""
        return bool(_DEVICE_ARG.search(name))
    return False


def moves_its_batch(body: cst.CSTNode, batch: set) -> bool:
    """Does the loop body move a part of the batch (names in ``batch``, or names bound from
    them) to the device?"""
    parts = set(batch)
    for node in descendants(body):
        if type(node) is cst.Assign and root_name(node.value) in parts:
            for t in node.targets:
                parts.update(target_names(t.target))
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and \
                root_name(node.func.value) in parts and _moves(node):
            return True
    return False


def bind_host_batch(an, node: cst.For, iterated, counters: set) -> bool:
    """Rebind the loop's batch names to host tensors when its body moves them (see above), and
    say whether it did; ``iterated``: the value of what the loop iterates, inside `enumerate()`
    or `tqdm()`."""
    if is_marking(iterated):
        return False
    batch = {n for n in target_names(node.target) if n not in counters}
    if len(batch) != 1 or not moves_its_batch(node.body, batch):
        # (a batch the target unpacks, `for x, y in loader:`, is followed part by part: a part
        # sliced before its move is still the device's input, see walk_bind._moved_batch_part;
        # whether the loop moves it is `moves_unpacked_batch`)
        return False
    bindings = an.function.bindings
    for n in batch:
        v = bindings.get(n)
        if v is not None:
            bindings[n] = HostBatch(v)
    an.value_cache.clear()
    return True


def moves_unpacked_batch(node: cst.For, iterated, counters: set) -> bool:
    """The target unpacks the batch (`for b, (x, y) in enumerate(loader):`) and the body moves its
    parts to the device, and what it iterates is not (in any branch) a marking loader: when the
    project resolves that loader to a plain one, its batches are host tensors."""
    batch = {n for n in target_names(node.target) if n not in counters}
    return len(batch) > 1 and not _may_mark(iterated) and moves_its_batch(node.body, batch)


def _may_mark(v) -> bool:
    """A value that is, or may be (one branch of a join), a marking loader."""
    todo = [v]
    while todo:
        v = todo.pop()
        if v is None:
            continue
        if is_marking(v):
            return True
        if type(v) is Join:
            todo += list(v.parts)
        elif type(v) is Named:
            todo.append(v.base)
        elif type(v) is Meth:
            if v.name == "per_device_loader":
                return True
            todo.append(v.base)
        elif type(v) is RetOf and v.ref.rsplit(".", 1)[-1] in ("tqdm", "enumerate", "islice"):
            todo += [a for _, a in v.args]  # (`tbar = tqdm(loader)`)
    return False
