"""The twentieth held-out set's kinds, statically (no torch): storage and autograd reads Dynamo does
not trace (`data_ptr()`, `untyped_storage().nbytes()`, `.grad_fn`, a parameter's `_version`,
`register_multi_grad_hook`), a `__len__`/`__bool__` that reads a tensor run by `len(x)`/`if x:`, and a
callback method with a host read called from the compiled step (HPU012); a mutable default the
compiled function grows, an environment variable set to three values around the calls, and dict
batches with one key set in three orders (HPU017). Each snippet here, bad and look-alike, was measured
on torch 2.13 (CPU, `eager` backend, TORCH_LOGS=graph_breaks,recompiles): the counts are in the
comments."""
from __future__ import annotations

import snippets
from snippets import compile_found as found, compile_messages as messages, fixture_code


def quiet(src: str) -> list:
    return snippets.found(src)  # every code: nothing at all


SAME_STORAGE = """\
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.kv = nn.Linear(8, 16)

    def forward(self, x, context):
        if context.data_ptr() == x.data_ptr():
            context = x
        k, v = self.kv(context).chunk(2, dim=-1)
        return (self.q(x) @ k.transpose(-2, -1)).softmax(-1) @ v


model = torch.compile(Attention())
for _ in range(3):
    model(torch.randn(2, 5, 8), torch.randn(2, 7, 8))
"""
# measured: 1 graph, a break at line 12 (given the same tensor twice Dynamo does not break: aliased inputs)

SAME_OBJECT = SAME_STORAGE.replace("context.data_ptr() == x.data_ptr()", "context is x")
# measured: 1 graph, no break

STORAGE_BYTES = """\
import torch
import torch.nn as nn


class Meter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        h = self.fc(x).relu()
        return h, h.untyped_storage().nbytes()


model = torch.compile(Meter())
for _ in range(3):
    model(torch.randn(4, 16))
"""
# measured: 1 graph, a break at line 12

ELEMENT_BYTES = STORAGE_BYTES.replace("h.untyped_storage().nbytes()", "h.numel() * h.element_size()")
# measured: 1 graph, no break

GRAD_FN_TEST = fixture_code("HPU012/bad_grad_fn_tested_in_helper.py")  # (the fixture, measured on Dynamo in its header)
# measured: 2 graphs, a break at line 6 (in the helper)

REQUIRES_GRAD_TEST = GRAD_FN_TEST.replace("if t.grad_fn is None:", "if not t.requires_grad:")
# measured: 1 graph, no break

VERSION_CACHE = """\
import torch
import torch.nn as nn


class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 8))
        self.seen = -1
        self.register_buffer("norm", torch.ones(()))

    def forward(self, x):
        if self.weight._version != self.seen:
            self.norm = self.weight.detach().norm()
            self.seen = self.weight._version
        return x @ (self.weight / self.norm)


model = Normed()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    compiled(torch.randn(2, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
"""
# measured: 4 graphs, a break at line 13, 2 recompiles (guard line 13: the cached version)

NORM_EVERY_CALL = """\
import torch
import torch.nn as nn


class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        return x @ (self.weight / self.weight.norm())


model = Normed()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    compiled(torch.randn(2, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
"""
# measured: 1 graph

MULTI_HOOK = """\
import torch
import torch.nn as nn
from torch.autograd.graph import register_multi_grad_hook

SEEN = []


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 8), nn.Linear(6, 8)

    def forward(self, x, y):
        ha, hb = self.a(x), self.b(y)
        register_multi_grad_hook((ha, hb), lambda grads: SEEN.append(len(grads)))
        return (ha + hb).sum()


model = torch.compile(Fuse())
for _ in range(3):
    model(torch.randn(2, 4), torch.randn(2, 6)).backward()
"""
# measured: 2 graphs, a break at line 15

HOOK_OUTSIDE = MULTI_HOOK.replace(
    "        register_multi_grad_hook((ha, hb), lambda grads: SEEN.append(len(grads)))\n", "")
# measured: 1 graph

LEN_READS_COUNT = fixture_code("HPU012/bad_len_dunder_reads_count.py")  # (the fixture, measured on Dynamo in its header)
# measured: 2 graphs, a break at line 10 (in __len__), 1 recompile

LEN_OF_CAPACITY = LEN_READS_COUNT.replace("return int(self.filled.clamp(max=self.data.shape[0]))",
                                          "return self.data.shape[0]")
# measured: 1 graph

BOOL_READS_MASK = fixture_code("HPU012/bad_bool_dunder_reads_mask.py")  # (the fixture, measured on Dynamo in its header)
# measured: a break at line 9 (in __bool__)

BOOL_FROM_INIT = BOOL_READS_MASK.replace(
    "        self.pad = torch.arange(width)[None, :] >= lengths[:, None]\n",
    "        self.pad = torch.arange(width)[None, :] >= lengths[:, None]\n"
    "        self.ragged = bool(lengths.min() < width)\n").replace("return bool(self.pad.any())",
                                                               "return self.ragged")
# measured: 1 graph

CALLBACK_READS = """\
import torch
import torch.nn as nn


class BestLoss:
    def __init__(self):
        self.best = float("inf")

    def on_step_end(self, loss):
        self.best = min(self.best, loss.item())


class Runner:
    def __init__(self, model, callbacks):
        self.model, self.callbacks = model, callbacks
        self.step = torch.compile(self.train_step)

    def train_step(self, x):
        loss = self.model(x).pow(2).mean()
        for cb in self.callbacks:
            cb.on_step_end(loss.detach())
        return loss


runner = Runner(nn.Linear(4, 1), [BestLoss()])
for _ in range(3):
    runner.step(torch.randn(8, 4)).backward()
"""
# measured: a break at line 10 (in the callback), 3 breaks over 3 calls

CALLBACK_ON_DEVICE = CALLBACK_READS.replace('self.best = float("inf")', "self.total = torch.zeros(())").replace(
    "self.best = min(self.best, loss.item())", "self.total = self.total + loss")
# measured: 1 graph

DEFAULT_WINDOW = """\
import torch


@torch.compile
def running_mean(loss, _window=[]):
    _window.append(loss.detach())
    if len(_window) > 3:
        _window.pop(0)
    return torch.stack(_window).mean()


for _ in range(6):
    running_mean(torch.randn(()))
"""
# measured: 4 graphs, 3 recompiles (guard line 6)

DEFAULT_READ_ONLY = """\
import torch


@torch.compile
def pyramid(x, strides=[1, 2, 4]):
    return torch.stack([x[..., ::s].mean(-1) for s in strides], -1)


for _ in range(4):
    pyramid(torch.randn(2, 16))
"""
# measured: 1 graph

DEFAULT_NONE = DEFAULT_WINDOW.replace("_window=[]):\n", "_window=None):\n    _window = []\n")
# measured: 1 graph

ENV_SWEEP = fixture_code("HPU017/bad_env_var_swept.py")  # (the fixture, measured on Dynamo in its header)
# measured: 3 graphs, 2 recompiles (block(), line 12)

ENV_AT_INIT = fixture_code("HPU017/good_env_var_read_at_init.py")  # (the fixture, measured on Dynamo in its header)
# measured: 1 graph

KEY_ORDERS = """\
import torch


def from_logs(n):
    return {"a": torch.randn(n), "b": torch.randn(n), "c": torch.randn(n)}


def from_cache(n):
    return {"b": torch.randn(n), "a": torch.randn(n), "c": torch.randn(n)}


def from_stream(n):
    return {"c": torch.randn(n), "b": torch.randn(n), "a": torch.randn(n)}


@torch.compile
def total(batch):
    out = 0
    for name, v in batch.items():
        out = out + v.sum()
    return out


readers = [from_logs, from_cache, from_stream]
for step in range(6):
    total(readers[step % 3](4))
"""
# measured: 3 graphs, 2 recompiles (guard line 19)

KEYS_READ_BY_NAME = KEY_ORDERS.replace("""    out = 0
    for name, v in batch.items():
        out = out + v.sum()
    return out""", """    return batch["a"].sum() + batch["b"].sum() * 2 + batch["c"].mean()""")
# measured: 1 graph



def test_storage_and_autograd_reads():
    assert found(SAME_STORAGE) == [("HPU012", 12)]
    assert "no storage address" in messages(SAME_STORAGE)[0]
    assert quiet(SAME_OBJECT) == []
    assert found(STORAGE_BYTES) == [("HPU012", 12)]
    assert quiet(ELEMENT_BYTES) == []
    assert found(GRAD_FN_TEST) == [("HPU012", 6)]
    assert "`.grad_fn`" in messages(GRAD_FN_TEST)[0]
    assert quiet(REQUIRES_GRAD_TEST) == []
    assert found(VERSION_CACHE) == [("HPU012", 13)]
    assert quiet(NORM_EVERY_CALL) == []
    assert found(MULTI_HOOK) == [("HPU012", 15)]
    assert quiet(HOOK_OUTSIDE) == []


def test_dunders_that_read_a_tensor():
    assert found(LEN_READS_COUNT) == [("HPU012", 10)]
    assert "run by `len(ring)` in draw()" in messages(LEN_READS_COUNT)[0]
    assert quiet(LEN_OF_CAPACITY) == []
    assert found(BOOL_READS_MASK) == [("HPU012", 9)]
    assert "truth test of `padding`" in messages(BOOL_READS_MASK)[0]
    assert quiet(BOOL_FROM_INIT) == []


def test_callback_called_from_the_compiled_step():
    assert found(CALLBACK_READS) == [("HPU012", 10)]
    assert "the only method `on_step_end`" in messages(CALLBACK_READS)[0]
    assert quiet(CALLBACK_ON_DEVICE) == []


def test_mutable_default_grown():
    assert found(DEFAULT_WINDOW) == [("HPU017", 6)]
    assert "mutable default of running_mean()" in messages(DEFAULT_WINDOW)[0]
    assert quiet(DEFAULT_READ_ONLY) == []
    assert quiet(DEFAULT_NONE) == []


def test_environment_variable_swept():
    assert found(ENV_SWEEP) == [("HPU017", 20)]
    assert "`ACT_IMPL` to 3 different values" in messages(ENV_SWEEP)[0]
    assert quiet(ENV_AT_INIT) == []


def test_dict_key_orders():
    assert found(KEY_ORDERS) == [("HPU017", 26)]
    assert "3 different orders" in messages(KEY_ORDERS)[0]
    assert quiet(KEYS_READ_BY_NAME) == []


def test_a_len_of_an_attribute_in_a_class_with_len_does_not_crash_the_rule():
    # (`len(self._modules)` in a container module's methods: the attribute is read after the walk,
    # where no method's bindings are at hand)
    src = '''
import torch


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def __len__(self):
        return len(self.blocks)

    def forward(self, x):
        for i in range(len(self.blocks)):
            x = self.blocks[i](x)
        return x


model = torch.compile(Stack())
'''
    assert quiet(src) == []


def test_torchs_own_call_machinery_compiled_by_module_compile_is_no_region():
    # (measured on 2.13: a Linear with a backward hook compiled through `Module.compile()`, which
    # compiles `self._call_impl`, records no graph and no break: Dynamo does not trace torch's own
    # module machinery as user code)
    src = '''
import torch


class Module:
    def compile(self, *args, **kwargs):
        self._compiled_call_impl = torch.compile(self._call_impl, *args, **kwargs)

    def _call_impl(self, *args):
        result = self.forward(*args)
        if result.grad_fn is not None:
            self._hooks_seen = True
        return result
'''
    assert quiet(src) == []
