"""Decoding and sampling code as generation libraries write it: a generator module whose forward()
runs the decoding loop, a decoder object built from one of several classes, a list of logit
filters of different classes, a step function passed as a class (or left to its default), a
config class whose field declares the network's config, and device tests that short-circuit a
read. Each case has a look-alike that must stay quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = (), path: str = "gen.py") -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), path)]
    return [x for x in out if not select or x[0] in select]


GENERATOR_MODULE = """
import torch
from torch import nn


class {CLS}(nn.Module):
    def __init__(self, decoder, max_len):
        super().__init__()
        self.decoder = decoder
        self.max_len = max_len

    def forward(self, src):
        return self._{NAME}(src)

    def _{NAME}(self, src):
        tokens = src.new_zeros(src.size(0), self.max_len + 1)
        for step in range(self.max_len):
            logits = self.decoder(tokens[:, : step + 1])
            tokens[:, step + 1] = logits[:, -1].argmax(-1)
        return tokens
"""


def test_a_decoding_loop_run_by_a_generator_modules_forward_is_a_step_loop():
    got = found(GENERATOR_MODULE.replace("{NAME}", "generate").replace("{CLS}", "Seq2Seq"), ("HPU001",))
    # each pass is one decoding step: the counter is a new slice bound and index every step
    assert ("HPU001", 18) in got and ("HPU001", 19) in got


def test_a_generator_class_names_its_forward_loop_a_decoding_loop():
    src = GENERATOR_MODULE.replace("{NAME}", "unroll").replace("{CLS}", "SequenceGenerator")
    assert ("HPU001", 18) in found(src, ("HPU001",))


def test_a_loop_in_a_function_forward_runs_is_still_unrolled_when_nothing_says_it_samples():
    # the same loop in a helper named for nothing: its passes are unrolled into forward()'s graph
    # (a recurrent cell stepped over time, say), the same constants every step
    assert found(GENERATOR_MODULE.replace("{NAME}", "unroll").replace("{CLS}", "Recurrent"), ("HPU001",)) == []


PROGRESS = """
import torch
from torch import nn
from tqdm import tqdm


class Pipeline(nn.Module):
    def __init__(self, unet, alphas):
        super().__init__()
        self.unet = unet
        self.register_buffer("alphas", alphas)

    def forward(self, shape):
        return self.run(shape)

    def run(self, shape):
        x = torch.randn(shape, device=self.alphas.device)
        times = list(reversed(range(0, 1000, 50)))
        for t in {ITER}:
            a = self.alphas[t]
            x = x - (1 - a) * self.unet(x, t)
        return x
"""


def test_a_loop_that_shows_progress_in_code_forward_runs_is_a_sampling_loop():
    got = found(PROGRESS.replace("{ITER}", "tqdm(times)"), ("HPU001",))
    assert ("HPU001", 20) in got


def test_the_same_loop_without_progress_stays_unrolled():
    assert found(PROGRESS.replace("{ITER}", "times"), ("HPU001",)) == []


CHOSEN_DECODER = """
import torch


class Greedy:
    def update(self, tokens, logits):
        nxt = logits.argmax(-1)
        done = bool((nxt == 0).all().item())
        return torch.cat([tokens, nxt[:, None]], dim=-1), done


class Beam:
    def update(self, tokens, logits):
        return tokens, False


class Unused:
    def update(self, tokens, logits):
        return tokens, bool(logits.sum().item())


class Task:
    def __init__(self, model, beam):
        self.model = model
        if beam:
            self.decoder = Beam()
        else:
            self.decoder = Greedy()

    def run(self, tokens):
        for i in range(32):
            logits = self.model(tokens)
            tokens, done = self.decoder.update(tokens, logits)
            if done:
                break
        return tokens
"""


def test_a_method_of_each_class_an_attribute_may_hold_runs_in_the_loop():
    got = found(CHOSEN_DECODER, ("HPU005",))
    # Greedy is assigned second: before, only Beam's update was followed
    assert ("HPU005", 8) in got
    # a class nothing assigns there is not called
    assert ("HPU005", 19) not in got


FILTERS = """
import torch


class SuppressBlank:
    def apply(self, logits, tokens):
        logits[:, 0] = -1e9


class Timestamps:
    def apply(self, logits, tokens):
        for k in range(tokens.shape[0]):
            seq = tokens[k, 1:].tolist()
            if len(seq) > 2 and seq[-1] == seq[-2]:
                logits[k, :] = -1e9


class Task:
    def __init__(self, model, timestamps):
        self.model = model
        self.filters = []
        self.filters.append(SuppressBlank())
        if timestamps:
            self.filters.append(Timestamps())

    def run(self, tokens: torch.Tensor):
        for i in range(32):
            logits = self.model(tokens)
            for f in self.filters:
                f.apply(logits, tokens)
            tokens = torch.cat([tokens, logits.argmax(-1)[:, None]], dim=-1)
        return tokens
"""


def test_each_class_appended_to_a_list_of_filters_is_called_in_the_loop():
    got = found(FILTERS, ("HPU005",))
    assert ("HPU005", 13) in got


STEP_CLASS = """
import torch


class ForwardStep:
    def __init__(self, model):
        self.model = model

    def __call__(self, tokens):
        return self.model(tokens)


def generate(model, tokens, lengths, {PARAM}):
    step = step_fn(model)
    prev = 0
    for n in range(int(lengths.min()), tokens.size(1)):
        logits = step(tokens[:, prev:n])
        tokens[:, n] = logits[:, -1].argmax(-1)
        prev = n
    return tokens
"""


def test_a_step_function_class_left_to_its_default_calls_the_model_every_pass():
    got = found(STEP_CLASS.replace("{PARAM}", "step_fn=ForwardStep"), ("HPU001",))
    # `tokens[:, a:b]` says tokens is an array; the default class's __call__ calls the model
    assert ("HPU001", 17) in got and ("HPU001", 18) in got


def test_a_step_function_the_caller_passes_is_followed_too():
    src = STEP_CLASS.replace("{PARAM}", "step_fn=None") + """

def main(model, tokens, lengths):
    return generate(model, tokens, lengths, step_fn=ForwardStep)
"""
    got = found(src, ("HPU001",))
    assert ("HPU001", 17) in got


def test_a_step_function_that_calls_no_model_is_no_step():
    src = STEP_CLASS.replace("{PARAM}", "step_fn=ForwardStep").replace(
        "return self.model(tokens)", "return tokens.float()")
    assert found(src, ("HPU001",)) == []


FIELDS = """
import torch
from torch import nn
from pydantic import BaseModel


class Net(nn.Module):
    def forward(self, x, t):
        return x


class NetConfig(BaseModel):
    dim: int = 8

    def create(self):
        return Net()


class SamplerConfig(BaseModel):
    net: NetConfig
    steps: int = 10

    def create(self):
        return Sampler(self.net.create(), self.steps)


class Sampler:
    def __init__(self, net, steps):
        self.net = net
        self.steps = steps
        self.sigmas = torch.linspace(1, 0, steps + 1).to("hpu")

    def sample(self, x):
        for i in range(self.steps):
            x = self.net(x, self.sigmas[i])
        return x
"""


def test_a_config_field_declares_the_class_whose_create_builds_the_network():
    got = found(FIELDS, ("HPU001",))
    # `self.net` is the Net that NetConfig.create() returns: the loop calls a model
    assert ("HPU001", 35) in got


def test_a_declared_field_that_a_method_assigns_keeps_the_assigned_value():
    # `decoder: Base` declared, a subclass assigned in __init__: the subclass's method runs
    src = CHOSEN_DECODER.replace("class Task:\n", "class Task:\n    decoder: Unused\n\n")
    got = found(src, ("HPU005",))
    assert ("HPU005", 8) in got and ("HPU005", 19) not in got


DEVICE_TESTS = """
import torch
import habana_frameworks.torch.core as htcore


def is_hpu_tensor(t):
    return t.device.type == "hpu"


def is_xla_tensor(t):
    return t.device.type == "xla"


def train(model, loader, opt):
    for batch in loader:
        out = model(batch)
        mask = out["mask"]
        if {TEST} mask.any():
            out["loss"] = out["loss"] * 2
        value = out["loss"]
        if not (is_xla_tensor(value) or is_hpu_tensor(value)):
            value = float(value)
        value.backward()
        opt.step()
        htcore.mark_step()
"""


def test_a_read_after_a_device_test_in_an_and_is_never_made_on_that_device():
    got = found(DEVICE_TESTS.replace("{TEST}", "not is_hpu_tensor(mask) and"), ("HPU005", "HPU008"))
    assert got == []


def test_the_read_without_the_device_test_is_reported():
    got = found(DEVICE_TESTS.replace("{TEST}", "mask is not None and"), ("HPU005", "HPU008"))
    # the float() under `not (xla or hpu)` stays quiet either way
    assert got == [("HPU008", 18)]


def test_a_branch_for_neither_lazy_device_is_off_target_in_device_neutral_code():
    src = DEVICE_TESTS.replace("import habana_frameworks.torch.core as htcore\n", "").replace(
        "        htcore.mark_step()\n", "").replace("{TEST}", "mask is not None and")
    got = found(src, ("HPU005",))
    assert got == []


SAMPLER_CLASS = """
import torch
from torch import nn
from tqdm import tqdm


class EulerSampler:
    def __init__(self, steps, verbose=False):
        self.steps = steps
        self.verbose = verbose

    def get_sigma_gen(self, n):
        sigma_generator = range(n - 1)
        if self.verbose:
            sigma_generator = tqdm(sigma_generator, total=n)
        return sigma_generator

    def __call__(self, denoiser, x, sigmas):
        for i in self.get_sigma_gen(len(sigmas)):
            x = x + (sigmas[i + 1] - sigmas[i]) * denoiser(x, sigmas[i])
        return x


class Engine(nn.Module):
    def __init__(self, denoiser, sampler):
        super().__init__()
        self.denoiser = denoiser
        self.sampler = sampler

    def forward(self, x, sigmas: torch.Tensor):
        return self.sampler(self.denoiser, x, sigmas)


def main(denoiser):
    engine = Engine(denoiser, EulerSampler(10))
    return engine(torch.randn(1, 4, device="hpu"), torch.linspace(1, 0, 11, device="hpu"))
"""


def test_a_samplers_call_reached_from_forward_keeps_its_step_loop():
    # `EulerSampler.__call__` runs under Engine.forward(): its class says it samples, and a
    # `sigma_generator` is a generator of numbers, not a generator network
    got = found(SAMPLER_CLASS, ("HPU001",))
    assert got == [("HPU001", 20)]
