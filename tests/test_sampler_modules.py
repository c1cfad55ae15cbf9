"""Sampling modules as libraries write them: a sampler picked from a table of functions by name,
and public samplers nothing in the project calls, whose schedule parameter has the same name as
the one the module's called samplers get as a device tensor. Each case has a look-alike that must
stay quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "sampling.py")]
    return [x for x in out if not select or x[0] in select]


TABLE = """
import torch


def make_schedule(n, device):
    ramp = torch.linspace(0, 1, n)
    return (1.0 + ramp * 79.0).to(device)


def euler(net, x, levels):
    ones = x.new_ones([x.shape[0]])
    for k in range(len(levels) - 1):
        out = net(x, levels[k] * ones)
        x = x + (x - out) / levels[k] * (levels[k + 1] - levels[k])
    return x


def midpoint(net, x, levels):
    ones = x.new_ones([x.shape[0]])
    for k in range(len(levels) - 1):
        if levels[k + 1] == 0:
            x = net(x, levels[k] * ones)
        else:
            x = x + net(x, levels[k] * ones) * 0.5
    return x


def run(net, shape, steps, method="euler", device="cpu"):
    levels = make_schedule(steps, device)
    x = torch.randn(*shape, device=device)
    pick = {TABLE}[method]
    return pick(net, x, levels)
"""


def test_a_sampler_picked_from_a_table_of_functions_gets_the_callers_arguments():
    got = found(TABLE.replace("{TABLE}", '{"euler": euler, "mid": midpoint}'), ("HPU001", "HPU008"))
    # `levels` is the device schedule in both samplers: each counter read is a graph constant,
    # and the branch on an element is a host read
    assert ("HPU001", 13) in got and ("HPU001", 14) in got
    assert ("HPU008", 21) in got and ("HPU001", 21) in got and ("HPU001", 24) in got


def test_a_table_of_data_is_not_a_table_of_functions():
    # a dict of two tensors picked by name is data: nothing it holds is called, so the samplers
    # are not reached from run() and `levels` stays unknown in midpoint (no branch read)
    src = TABLE.replace("{TABLE}[method]", '{"a": levels, "b": x}[method]') \
               .replace("return pick(net, x, levels)", "return pick")
    assert found(src, ("HPU008",)) == []


PUBLIC = """
import torch


def schedule(n, device="cpu"):
    return torch.linspace(10.0, 0.0, n).to(device)


def ancestral(model, x, sigmas):
    for i in range(len(sigmas) - 1):
        x = model(x, sigmas[i])
    return x


def heun(model, x, sigmas, churn=0.0):
    for i in range(len(sigmas) - 1):
        gamma = churn if sigmas[i] > 1.0 else 0.0
        x = model(x, sigmas[i] * (gamma + 1))
    return x


def main(model, x, n):
    return ancestral(model, x, schedule(n))
"""


def test_an_uncalled_sampler_takes_the_kind_its_module_gives_the_same_parameter():
    # nothing calls heun(); ancestral() gets `sigmas` as a device tensor from main(): a reader
    # of the module takes heun's `sigmas` for the same schedule
    got = found(PUBLIC, ("HPU001", "HPU008"))
    assert ("HPU008", 17) in got
    assert ("HPU001", 18) in got


def test_a_sibling_parameter_of_another_kind_keeps_an_uncalled_one_unknown():
    # another function of the module is given `sigmas` as a Python list: the name says nothing
    src = PUBLIC + """

def report(sigmas):
    return [s * 2 for s in sigmas]


def summary(n):
    return report([1.0, 2.0, 3.0])
"""
    assert ("HPU008", 17) not in found(src, ("HPU008",))


WRAPPED = """
import torch
from lightning import Fabric


class Net(torch.nn.Module):
    def forward(self, x):
        return x * 2


def decode(model, x, steps):
    for i in range(steps):
        x = model(x)
        if x.sum() > 0:
            break
    return x


def main(use_fabric, steps):
    model = Net()
    if use_fabric:
        model = Fabric().to_device(model)
    return decode(model, torch.ones(3), steps)
"""


def test_a_model_on_one_path_and_a_wrapper_call_on_another_stays_a_model():
    # `decode`'s loop calls the model on every pass: the branch on the output is a host read
    # per step whichever path built `model`
    assert ("HPU008", 14) in found(WRAPPED, ("HPU008",))


HOST_STEPS = """
import numpy as np
import torch


def refine(net, x, ts, steps=40, lo=0.002, hi=80.0):
    ones = x.new_ones([x.shape[0]])
    for i in range(len(ts) - 1):
        t = (hi + ts[i] / (steps - 1) * (lo - hi)) ** 7.0
        x = net(x, t * ones)
        label = (ts[i + 1] + 1) * 2
        print("step", label)
    return x
"""


def test_an_element_of_a_host_list_in_number_arithmetic_that_reaches_the_model_is_a_constant():
    # `t` is arithmetic on `ts[i]`, multiplied into the model's input: a new scalar every step;
    # `label` is arithmetic on `ts[i + 1]` that is only printed
    assert found(HOST_STEPS, ("HPU001",)) == [("HPU001", 9)]


NOISED = """
import torch


def sample(unet, scheduler, latents, timesteps):
    noised = []
    noise = torch.randn_like(latents)
    for t in timesteps:
        noised.append(scheduler.add_noise(latents, noise, t))
    for i, t in enumerate(timesteps):
        latents = unet(latents, t)
        latents = latents + noised[i]
    return latents
"""


def test_a_tensor_picked_from_a_python_list_by_the_counter_is_no_constant():
    # `noised` is a Python list of the noised latents: `noised[i]` picks one on the host
    assert found(NOISED, ("HPU001",)) == []
