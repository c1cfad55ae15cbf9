"""The nineteenth held-out set's kinds, statically (no torch): a `hashlib` digest, `max(..., key=...)`
over tensors and `tensor_split` at offsets held in a tensor in a compiled region (HPU012); a list
argument whose length a loop over a few listed sizes sets (HPU017); a dict or list attribute of the
compiled module grown between calls while `forward` reads its length (HPU016). Each snippet here, bad
and look-alike, was measured on torch 2.13 (CPU, `eager` backend, TORCH_LOGS=graph_breaks,recompiles):
the counts are in the comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all

DIGEST_IN_HELPER = """\
import hashlib

import torch


def arm(uid):
    return int(hashlib.sha256(uid.encode()).hexdigest()[:8], 16) % 2


@torch.compile
def scale(x, uid):
    return x * (2.0 if arm(uid) else 1.0)


for _ in range(3):
    scale(torch.randn(4), "user-17")
"""
# measured: 1 graph, a break at line 7 (the digest, in the helper), no recompile

DIGEST_OUTSIDE = """\
import hashlib

import torch


def arm(uid):
    return int(hashlib.sha256(uid.encode()).hexdigest()[:8], 16) % 2


@torch.compile
def scale(x, factor):
    return x * factor


for uid in ["a", "b", "c", "d"]:
    scale(torch.randn(4), torch.tensor(2.0 if arm(uid) else 1.0))
"""
# measured: 1 graph, no break

MAX_WITH_KEY = """\
import torch


@torch.compile(backend="eager")
def f(xs):
    c = [x * 2 for x in xs]
    return max(c, key=lambda t: t.sum())


for _ in range(3):
    f([torch.randn(4) for _ in range(3)])
"""
# measured: 2 graphs, a break at line 7

MAX_OF_NUMBERS = """\
import torch


@torch.compile(backend="eager")
def f(x, sizes):
    best = max(sizes, key=lambda s: s[1])
    return x * best[0]


for _ in range(3):
    f(torch.randn(4), [(1, 2), (3, 4)])
"""
# measured: 1 graph, no break (folded: the items are Python numbers)

SPLIT_AT_TENSOR = """\
import torch


@torch.compile(backend="eager")
def f(x, starts):
    parts = x.tensor_split(starts)
    return torch.stack([p.sum() for p in parts])


for i in range(3):
    f(torch.randn(16), torch.tensor([3, 7 + i]))
"""
# measured: 2 graphs, a break at line 6, 1 recompile (the resumed frame)

SPLIT_IN_SECTIONS = """\
import torch


@torch.compile
def pool(x, sections):
    return torch.stack([p.sum() for p in x.tensor_split(sections)])


for i in range(3):
    pool(torch.randn(16), 4)
"""
# measured: 1 graph, no break

LIST_OF_LISTED_LENGTHS = """\
import torch
import torch.nn as nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, images):
        return self.conv(torch.stack(images)).mean((1, 2, 3))


model = torch.compile(Counter())
for n in [2, 3, 2, 4, 5]:
    model([torch.rand(3, 16, 16) for _ in range(n)])
"""
# measured: 4 graphs, 3 recompiles (guard line 11, `len(images)`)

STACKED_BY_CALLER = """\
import torch
import torch.nn as nn


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, batch):
        return self.conv(batch).mean((1, 2, 3))


model = torch.compile(Counter())
for n in [2, 3, 2, 4, 5]:
    model(torch.stack([torch.rand(3, 16, 16) for _ in range(n)]))
"""
# measured: 2 graphs, 1 recompile (the batch size made dynamic)

LABELS_ADDED_BY_METHOD = """\
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.labels = []
        self.out = nn.Linear(8, 16)

    def add_label(self, name):
        if name not in self.labels:
            self.labels.append(name)

    def forward(self, x):
        return self.out(x)[:, : len(self.labels)]


model = Tagger()
compiled = torch.compile(model, backend="eager")
for step in range(6):
    model.add_label(f"tag{step}")
    compiled(torch.randn(4, 8))
"""
# measured: 6 graphs, 5 recompiles (guard line 16, `len(self.labels)`)

LABELS_SET_DIRECTLY = """\
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.labels = {}
        self.out = nn.Linear(8, 16)

    def forward(self, x):
        return self.out(x)[:, : len(self.labels)]


model = Tagger()
compiled = torch.compile(model, backend="eager")
for step in range(6):
    model.labels[f"tag{step}"] = step
    compiled(torch.randn(4, 8))
"""
# measured: 6 graphs, 5 recompiles (guard line 12)

# the same growth, and a forward that does not read the container
LABELS_NOT_READ = LABELS_SET_DIRECTLY.replace("return self.out(x)[:, : len(self.labels)]", "return self.out(x)")
# measured: 1 graph


def test_digest_in_a_helper_of_the_region():
    assert found(DIGEST_IN_HELPER) == [("HPU012", 7)]
    assert "marked as skipped" in messages(DIGEST_IN_HELPER)[0]
    assert quiet(DIGEST_OUTSIDE) == []


def test_max_with_a_key_over_tensors():
    assert found(MAX_WITH_KEY) == [("HPU012", 7)]
    assert "takes no `key=`" in messages(MAX_WITH_KEY)[0]
    assert quiet(MAX_OF_NUMBERS) == []


def test_tensor_split_at_offsets_in_a_tensor():
    assert found(SPLIT_AT_TENSOR) == [("HPU012", 6)]
    assert "_local_scalar_dense" in messages(SPLIT_AT_TENSOR)[0]
    assert quiet(SPLIT_IN_SECTIONS) == []


def test_list_lengths_from_a_listed_loop():
    assert found(LIST_OF_LISTED_LENGTHS) == [("HPU017", 16)]
    assert "4 lengths: 4 graphs, 3 recompiles" in messages(LIST_OF_LISTED_LENGTHS)[0]
    assert quiet(STACKED_BY_CALLER) == []


def test_container_attribute_grown_between_calls():
    assert found(LABELS_ADDED_BY_METHOD) == [("HPU016", 23)]
    assert "len(self.labels)" in messages(LABELS_ADDED_BY_METHOD)[0]
    assert found(LABELS_SET_DIRECTLY) == [("HPU016", 19)]
    assert quiet(LABELS_NOT_READ) == []
