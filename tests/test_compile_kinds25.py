"""Compile kinds left missed by the twenty-fourth held-out compile set (c476-c495) and found by
the twenty-fifth, each measured on Dynamo (torch 2.13, eager backend) before the rule was changed;
a look-alike or the hazard it must keep beside each. The cases are written for these tests, not
copied from the sets.
"""
from __future__ import annotations

from snippets import compile_found

# an int the compiled function passes on to a module of the file whose forward needs it as a
# number (measured: 3 values, 3 graphs; the same int used in tensor arithmetic: 2 graphs)
DEEPER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4 * 25, 1)

    def forward(self, x, factor):
        y = self.conv(x)[:, : 4 * factor * factor]
        return {op}


net = Up()


def loss(x, factor):
    return net(x, factor).mean()


loss_fn = torch.compile(loss)
for step in range(6):
    factor = (2, 3, 4)[step % 3]
    loss_fn(torch.randn(2, 4, 5, 5), factor)
"""


def test_an_int_passed_on_to_a_module_that_pixel_shuffles_by_it_recompiles():
    assert compile_found(DEEPER.format(op="F.pixel_shuffle(y, factor)")) == [("HPU017", 27)]


def test_the_same_int_used_in_tensor_arithmetic_one_call_deeper_is_made_dynamic():
    assert compile_found(DEEPER.format(op="y * factor")) == []


HELPER = """
import torch
import torch.nn.functional as F


def coords(h, steps):
    return torch.linspace(-1, 1, steps) * h.mean()


@torch.compile
def head(x, steps):
    return x.sum() + coords(x, steps).sum()


for step in range(6):
    head(torch.randn(4), (5, 7, 9)[step % 3])
"""


def test_an_int_passed_on_to_a_helper_function_that_gives_it_to_linspace_recompiles():
    assert compile_found(HELPER) == [("HPU017", 16)]


# functions Dynamo does not trace (measured on 2.13: a compiled function calling each, called
# twice: one break at the call), against the traced ones beside them
UNTRACED = """
import numpy as np
import torch
import torch.nn.functional as F


@torch.compile
def loss_fn(x, var):
    y = {op}
    return y.sum()


for step in range(3):
    loss_fn(torch.randn(4, 4), torch.rand(4, 4) + 0.5)
"""


def test_numpy_functions_torch_numpy_lacks_break_the_graph():
    for op in ("x * np.interp(3, [0, 10], [0.0, 1.0])", "torch.from_numpy(np.argpartition(x.numpy(), 2, axis=1))",
               ):
        assert compile_found(UNTRACED.format(op=op)) == [("HPU012", 9)], op
    # two breaks (measured): the NumPy call, and `float()` of what it returns
    assert compile_found(UNTRACED.format(op="x * float(np.nanmean(x.numpy()))")) == [("HPU012", 9), ("HPU012", 9)]


def test_numpy_functions_torch_numpy_has_are_traced():
    for op in ("torch.from_numpy(np.clip(x.numpy(), 0, 1))", "torch.from_numpy(np.cumsum(x.numpy()))"):
        assert compile_found(UNTRACED.format(op=op)) == [], op


def test_torch_functions_measured_to_break_the_graph():
    for op in ("torch.combinations(x[0], 2)", "torch.linalg.lstsq(x, x[:, :1]).solution", "torch.cov(x)",
               "torch.corrcoef(x)", "F.gaussian_nll_loss(x, x * 0.5, var)"):
        assert compile_found(UNTRACED.format(op=op)) == [("HPU012", 9)], op


def test_their_traced_neighbours_are_not_reported():
    for op in ("x[torch.triu_indices(4, 4, 1)[0]]", "torch.linalg.solve(x @ x.T + torch.eye(4), x)",
               "F.poisson_nll_loss(x, var)", "torch.cdist(x, x)"):
        assert compile_found(UNTRACED.format(op=op)) == [], op


PINNED = """
import torch


@torch.compile
def to_device(x):
    if x.is_pinned():
        return x * 2
    return x


for step in range(3):
    to_device(torch.randn(4))
"""


def test_is_pinned_breaks_the_graph_once_as_a_python_bool():
    assert compile_found(PINNED) == [("HPU012", 7)]


# `torch_xla.compile` bound with another name in a tuple assignment
TUPLE_ALIAS = """
import torch

try:
    import torch_xla
    xla_compile, device = torch_xla.compile, torch_xla.device()
except ImportError:
    torch_xla, xla_compile, device = None, torch.compile, torch.device("cpu")


def probe(x):
    return torch.linalg.lstsq(x, x[:, :1]).solution.sum()


step = xla_compile(probe)
for it in range(3):
    step(torch.randn(8, 4, device=device))
"""


def test_a_compile_function_bound_in_a_tuple_assignment_compiles():
    assert compile_found(TUPLE_ALIAS) == [("HPU012", 12)]


# a tensor given where torch takes a Python number (measured: buffers as `uniform_`'s bounds, a
# 0-d tensor as `F.dropout`'s p: a break a call; the same tensors given to `clamp` or `fill_`:
# traced), and `Tensor.random_`, which breaks whatever its arguments
BOUNDS = """
import torch
import torch.nn.functional as F
from torch import nn


class Jitter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("low", torch.tensor(0.8))
        self.register_buffer("high", torch.tensor(1.25))

    def forward(self, x):
        return x * {op}


model = torch.compile(Jitter())
for step in range(3):
    model(torch.randn(4, 4))
"""


def test_a_tensor_given_where_torch_takes_a_number_breaks_the_graph():
    for op in ("torch.empty(4, 1).uniform_(self.low, self.high)", "torch.empty(4, 1).normal_(self.low, self.high)",
               "F.dropout(torch.ones(4, 1), self.low)", "torch.empty(4, 1).random_(0, 10)"):
        assert compile_found(BOUNDS.format(op=op)) == [("HPU012", 14)], op


def test_the_same_tensor_given_where_torch_takes_a_tensor_is_traced():
    for op in ("torch.rand(4, 1).clamp(self.low, self.high)", "torch.empty(4, 1).fill_(self.low)",
               "torch.empty(4, 1).uniform_(0.8, 1.25)", "torch.randint(0, 10, (4, 1))"):
        assert compile_found(BOUNDS.format(op=op)) == [], op


# BatchNorms frozen stage by stage: each epoch puts one more block of the compiled model into
# `eval()` mode (measured: 4 epochs, 4 graphs; all blocks frozen at once, or `model.train()`
# every epoch: 1 graph)
FREEZE = """
import torch
from torch import nn

model = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8)) for _ in range(4)])
cmodel = torch.compile(model)


def freeze_upto(net, last):
    for block in net[:last + 1]:
        block.eval()


for epoch in range(4):
    {toggle}
    for step in range(2):
        cmodel(torch.randn(16, 8)).sum().backward()
"""


def test_modules_put_into_eval_stage_by_stage_recompile_per_stage():
    assert compile_found(FREEZE.format(toggle="freeze_upto(model, epoch)")) == [("HPU016", 17)]
    assert compile_found(FREEZE.format(toggle="model[epoch].eval()")) == [("HPU016", 17)]


def test_modules_switched_the_same_way_every_epoch_compile_once():
    assert compile_found(FREEZE.format(toggle="freeze_upto(model, 3)")) == []
    assert compile_found(FREEZE.format(toggle="model.train()")) == []


# from the twenty-sixth set: calls that return a Python value or that Dynamo skips (measured on
# 2.13: one break each, two for `torch.frombuffer`), beside the traced ones
def test_calls_that_return_python_values_or_are_skipped_break_the_graph():
    for op in ("x * torch.get_num_threads()", "x * max(torch.cuda.device_count(), 1)", "x * x.storage_offset()",
               "x * (1 if torch.utils.data.get_worker_info() is None else 2)",
               "x * len(unicodedata.normalize('NFC', 'abc'))"):
        src = UNTRACED.replace("import numpy as np", "import numpy as np\nimport unicodedata")
        assert compile_found(src.format(op=op)) == [("HPU012", 10)], op


def test_their_traced_neighbours_stay_quiet():
    for op in ("x * (2 if torch.cuda.is_available() else 1)", "x.to(torch.get_default_dtype())",
               "x * x.element_size()", "x * (2 if torch.is_grad_enabled() else 1)"):
        assert compile_found(UNTRACED.format(op=op)) == [], op
