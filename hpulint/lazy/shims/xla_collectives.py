"""PyTorch/XLA's collectives and host exchanges on the one device of a replay.

With one replica a collective returns its input, but on PyTorch/XLA 2.9 it is still device work
(torch_xla/core/xla_model.py), and these stand-ins do the same work so that it is counted:

* ``all_reduce`` / ``all_gather``: an op of the pending graph (a copy of the input here; the
  ``scale`` of ``all_reduce`` is applied as the real op applies it).
* ``xla_rendezvous`` (what ``xm.rendezvous`` is on PJRT): a ``torch_xla.sync()``, the payload's
  size uploaded and all-gathered, its ``max`` read (two ``.item()``s and the size's own), the
  padded payload uploaded, all-gathered, split by the max size (an ``int()`` read) and sliced
  by the sizes (a ``.cpu()`` read), a sync, and each payload copied back: 3 step markers, 2
  graphs and 6 host transfers per call with a payload (2 markers, 1 graph and 1 transfer with
  none). Measured on torch_xla 2.9 (PJRT_DEVICE=CPU): the first call compiles both graphs, a
  second call with a payload of the same length runs them cached, one of another length
  compiles the second graph again; the first sync also cuts whatever graph is pending.
* ``mesh_reduce``: device tensors in ``data`` copied to the host as one batch (a graph of
  them, one transfer: ``_maybe_convert_to_cpu``), ``torch.save``d, exchanged through the
  rendezvous, loaded and passed to ``reduce_fn``. ``xm.save`` copies to the host the same way.
"""
from __future__ import annotations

import io

import torch

from ..frames import user_frame


def _tensors(data, out):
    if isinstance(data, torch.Tensor):
        out.append(data)
    elif isinstance(data, (list, tuple, set)):
        for x in data:
            _tensors(x, out)
    elif isinstance(data, dict):
        for x in data.values():
            _tensors(x, out)
    return out


def _rebuild(data, copies):
    if isinstance(data, torch.Tensor):
        return copies.get(id(data), data)
    if isinstance(data, (list, tuple)):
        items = [_rebuild(x, copies) for x in data]
        return type(data)(*items) if hasattr(data, "_fields") else type(data)(items)
    if isinstance(data, dict):
        return type(data)((k, _rebuild(v, copies)) for k, v in data.items())
    return data


def to_host(backend, data, what):
    """``data`` with its device tensors copied to the host in one batch, as PyTorch/XLA's
    ``_maybe_convert_to_cpu``: one graph computes them all, one transfer reads them."""
    tensors = [t for t in _tensors(data, []) if t.device.type != "cpu"]
    if not tensors:
        return data
    if getattr(backend, "engine", None) == "sim":
        backend.read(tensors, what, user_frame())
        backend.suspended += 1
        try:
            copies = {id(t): t.clone() for t in tensors}
        finally:
            backend.suspended -= 1
    else:
        copies = {id(t): t.cpu() for t in tensors}
    return _rebuild(data, copies)


def build_collectives(xm, state, backend) -> None:
    def all_reduce(reduce_type, inputs, scale=1.0, groups=None, pin_layout=True):
        # one replica: the reduction is the identity; the scale is applied like the real op does
        if isinstance(inputs, torch.Tensor):
            return inputs * scale if scale != 1.0 else inputs.clone()
        if scale != 1.0:
            with torch.no_grad():
                for t in inputs:
                    t.mul_(scale)
        return inputs

    def all_gather(value, dim=0, groups=None, output=None, pin_layout=True):
        # one replica: the gathered tensor is the input, computed by an op of the graph
        if output is not None:
            with torch.no_grad():
                output.copy_(value)
            return output
        if isinstance(value, torch.Tensor):
            return value.clone()
        return [v.clone() for v in value]

    def xla_rendezvous(payload=b"", ordinals=None, tag=None):
        if not isinstance(payload, bytes):
            raise TypeError(f"`payload` must be bytes, not {type(payload)}")
        state.sync("xla_rendezvous")  # finish what is pending before the exchange
        device = backend.torch_device(0)
        data = torch.tensor(list(payload), dtype=torch.uint8)
        size = torch.tensor([data.shape[0]], dtype=torch.int, device=device)
        sizes = all_gather(size)
        max_size = torch.max(sizes)
        state.sync("xla_rendezvous")
        if max_size.item() < 1:
            return [b"" for _ in range(sizes.size()[0])]
        padded = torch.nn.functional.pad(data, (0, max_size.item() - size.item())).to(device)
        gathered = all_gather(padded)
        parts = torch.split(gathered, max_size)
        payloads = [d[:n] for d, n in zip(parts, sizes.cpu())]
        state.sync("xla_rendezvous")
        return [bytes(p.cpu().tolist()) for p in payloads]

    def rendezvous(tag, payload=b"", replicas=[]):  # noqa: B006
        return xla_rendezvous(payload, replicas or None, tag=tag)

    def mesh_reduce(tag, data, reduce_fn):
        cpu_data = to_host(backend, data, "xm.mesh_reduce")
        buf = io.BytesIO()
        torch.save(cpu_data, buf)
        gathered = [torch.load(io.BytesIO(x)) for x in rendezvous(tag, buf.getvalue())]
        return reduce_fn(gathered) if gathered else cpu_data

    def save(data, file_or_path, master_only=True, global_master=False):
        torch.save(to_host(backend, data, "xm.save"), file_or_path)

    xm.all_reduce = all_reduce
    xm.all_gather = all_gather
    xm.xla_rendezvous = xla_rendezvous
    xm.rendezvous = rendezvous
    xm.mesh_reduce = mesh_reduce
    xm.save = save
