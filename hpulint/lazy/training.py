"""Bookkeeping the simulated device keeps besides the graph: training iterations, DataLoaders.

``TrainingMarks``: a graph that grows with no step marker shows up as more than one training
iteration (optimizer step, or backward pass when the script has no optimizer) recorded since the
last marker. Gradient accumulation (several backward passes, one optimizer step) is not growth.

``LoaderTags``: the tensors a DataLoader yields remember where that DataLoader was made, so that
a graph input uploaded from a batch can name it (a short last batch recompiles: HPU007).
"""
from __future__ import annotations

import weakref

import torch

from .frames import _user_file, user_frame, user_stack


class TrainingMarks:
    # -- training-iteration markers --------------------------------------------------------
    # A graph that grows with no step marker shows up as more than one training iteration
    # (optimizer step, or backward pass when the script has no optimizer) recorded since the
    # last marker. Gradient accumulation (several backward passes, one optimizer step) is not
    # growth.

    def backward_begin(self, frame):
        self.bw_count += 1
        prev = self.bw
        self.bw = self.bw_count
        self.bw_lines[self.bw] = user_stack(frame)
        self.unmarked_bw.append(self.bw)
        self._check_growth()
        return prev

    def optimizer_step_begin(self):
        frame = user_frame()
        self.os_count += 1
        self.os = self.os_count
        self.os_lines[self.os] = user_stack(frame)
        self.unmarked_os.append(self.os)
        self._check_growth()

    def optimizer_step_end(self):
        self.os = 0

    def _check_growth(self):
        if len(self.unmarked_os) < 2 and (self.os_count or len(self.unmarked_bw) < 2):
            return
        ev = self.growth
        if ev is None:
            ev = self.growth = {"kind": "growth", "step": self.mark_steps, "file": None,
                                "line": None, "compiled": False}
            self.events.append(ev)
        stacks = [self.bw_lines[b] for b in self.unmarked_bw] + \
            [self.os_lines[o] for o in self.unmarked_os]
        inner = {st[0] for st in stacks if st}
        ev["backward_passes"] = len(self.unmarked_bw)
        ev["optimizer_steps"] = len(self.unmarked_os)
        ev["lines"] = sorted({line for _, line in inner})
        ev["files"] = sorted({f for f, _ in inner if f})
        ev["stack"] = sorted({fl for st in stacks for fl in st}, key=lambda fl: (fl[0] or "", fl[1]))
        ev["nodes"] = self.seq - self.seq_at_mark

    def _close_growth(self, closed_by):
        ev = self.growth
        if ev is not None:
            ev["nodes"] = self.seq - self.seq_at_mark
            ev["closed_by"] = closed_by
            self.growth = None
            # several backward passes and one optimizer step is gradient accumulation
            nos, nbw = len(self.unmarked_os), len(self.unmarked_bw)
            if not (nos >= 2 or (nos == 0 and nbw >= 2 and self.os_count == 0)):
                self.events.remove(ev)
        self.unmarked_bw = []
        self.unmarked_os = []
        self.seq_at_mark = self.seq


class LoaderTags:
    # -- DataLoader batches ---------------------------------------------------------------------
    # The tensors a DataLoader yields remember where that DataLoader was made, so that a graph
    # input uploaded from a batch can name it (a short last batch recompiles: HPU007).

    def tag_batch(self, batch, site):
        for t in _flat_batch(batch):
            key = id(t)
            self.loader_batches[key] = (site, weakref.ref(t, lambda r, k=key: self._untag(k, r)))

    def _untag(self, key, ref):
        e = self.loader_batches.get(key)
        if e is not None and e[1] is ref:
            del self.loader_batches[key]

    def loader_of(self, t):
        e = self.loader_batches.get(id(t))
        if e is not None and e[1]() is t:
            return e[0]
        return None

    def _patch_loader(self):
        from torch.utils.data import dataloader as dl

        dev = self
        init, get_iter, nxt = dl.DataLoader.__init__, dl.DataLoader._get_iterator, \
            dl._BaseDataLoaderIter.__next__
        self._loader_saved = (init, get_iter, nxt)

        def __init__(self_, *args, **kwargs):
            init(self_, *args, **kwargs)
            frame = user_frame()
            if frame is not None:
                self_._hpulint_site = (_user_file(frame.f_code), frame.f_lineno)

        def _get_iterator(self_):
            it = get_iter(self_)
            it._hpulint_site = getattr(self_, "_hpulint_site", None)
            return it

        def __next__(self_):
            batch = nxt(self_)
            site = getattr(self_, "_hpulint_site", None)
            if site is not None and dev.broken is None:
                try:
                    dev.tag_batch(batch, site)
                except Exception as e:  # noqa: BLE001 - our bookkeeping, not the script
                    dev.fail(e, "tagging a DataLoader batch")
            return batch

        dl.DataLoader.__init__ = __init__
        dl.DataLoader._get_iterator = _get_iterator
        dl._BaseDataLoaderIter.__next__ = __next__

    def _unpatch_loader(self):
        from torch.utils.data import dataloader as dl

        dl.DataLoader.__init__, dl.DataLoader._get_iterator, dl._BaseDataLoaderIter.__next__ = \
            self._loader_saved


def _flat_batch(batch):
    """The tensors in a collated batch: a tensor, or lists, tuples and dicts of them."""
    stack = [batch]
    while stack:
        b = stack.pop()
        if isinstance(b, torch.Tensor):
            yield b
        elif isinstance(b, (list, tuple)):
            stack.extend(b)
        elif isinstance(b, dict):
            stack.extend(b.values())
