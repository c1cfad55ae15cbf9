"""Samplers as class hierarchies write them: the step counter comes from a helper method that
returns a range, the step function is a method only the subclasses define, the noise schedule
comes from a configured object whose type the analysis cannot see (its uses say it is a tensor),
a loop over chunks of a video runs a whole sampling loop per chunk, and helpers move modules to
the CPU. Each case has a look-alike that must stay quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "sampler.py")]
    return [x for x in out if not select or x[0] in select]


SAMPLER = """
import torch


def build(config):
    return config["target"](**config.get("params", {}))


class Base:
    def __init__(self, schedule_config, steps):
        self.schedule = build(schedule_config)
        self.steps = steps

    def prepare(self, x):
        sigmas = self.schedule(self.steps)
        x = x * torch.sqrt(1.0 + sigmas[0] ** 2.0)
        return x, sigmas

    def step_counter(self, n):
        gen = range(n - 1)
        if self.verbose:
            gen = tqdm(gen, total=n)
        return gen

    def denoise(self, denoiser, x, sigma):
        return denoiser(x, sigma)


class Euler(Base):
    def step(self, sigma, next_sigma, denoiser, x):
        d = (x - self.denoise(denoiser, x, sigma)) / sigma
        return x + d * (next_sigma - sigma)

    def __call__(self, denoiser, x):
        x, sigmas = self.prepare(x)
        s_in = x.new_ones([x.shape[0]])
        for i in self.step_counter(len(sigmas)):
            churn = 0.1 if {test} else 0.0
            x = self.step(s_in * sigmas[i], s_in * sigmas[i + 1], denoiser, x)
        return x
"""


def test_a_counter_from_a_helper_that_returns_a_range_indexes_a_schedule_used_as_a_tensor():
    src = SAMPLER.replace("{test}", "sigmas[i] > 1.0")
    assert found(src, ("HPU001", "HPU008")) == [("HPU001", 38), ("HPU008", 38), ("HPU001", 39), ("HPU001", 39)]


def test_a_python_number_read_once_is_left_alone():
    assert found(SAMPLER.replace("{test}", "self.steps > 10"), ("HPU008",)) == []


ABSTRACT = """
import torch


class Base:
    def run(self, model, x, sigmas):
        for i in range(len(sigmas) - 1):
            x = self.sampler_step(model, x, sigmas[i], sigmas[i + 1])
        return x


class Heun(Base):
    def sampler_step(self, model, x, sigma, next_sigma):
        d = model(x, sigma)
        if torch.sum(next_sigma) < 1e-14:
            return x + d
        return x + 0.5 * d


class Plain:
    def sampler_step(self, model, x, sigma, next_sigma):
        if torch.sum(next_sigma) < 1e-14:
            return x
        return x
"""


def test_a_method_only_subclasses_define_runs_in_the_base_class_step_loop():
    # `self.sampler_step` in Base is Heun's; Plain is not a subclass, so its copy is not called
    assert found(ABSTRACT, ("HPU008",)) == [("HPU008", 15)]


CHUNKS = """
import torch


def encode(model, frames):
    return model.encode(frames)


def step_once(model, sampler, latents, step):
    sigmas = sampler.sigmas
    return model(latents, sigmas[step])


def sample(model, sampler, video, num_steps):
    out = []
    for start in range(0, len(video), 4):
        cond = encode(model, video[start:start + 4])
        latents = torch.randn(4, 8)
        for step in range(num_steps):
            latents = step_once(model, sampler, latents, step)
        for _ in range(2):
            latents = model(latents, cond)
        out.append(latents)
    return out
"""


def test_a_loop_of_runs_holds_a_step_loop_that_passes_its_counter_to_the_model_call():
    assert found(CHUNKS, ("HPU001",)) == [("HPU001", 11)]


MOVES = """
import torch


def offload(model):
    model.cpu()
    torch.cuda.empty_cache()


def loop(model, batches):
    for x in batches:
        y = model(x)
        offload(model)
        kept = y.cpu()
        y.to("cpu")
"""


def test_a_module_moved_to_the_cpu_is_not_a_host_read_but_a_kept_copy_is():
    # a dropped copy of a local tensor (`y.to("cpu")`) still copies and waits for the device
    assert found(MOVES, ("HPU005",)) == [("HPU005", 14), ("HPU005", 15)]


ACCEL = """
import torch
from accelerate import Accelerator


def train(model, loader, optimizer):
    accelerator = Accelerator(gradient_accumulation_steps=4)
    for batch in loader:
        loss = model(batch).mean()
        avg = accelerator.gather(loss).mean()
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
"""


def test_an_object_of_a_library_class_is_not_a_tensor_because_of_its_method_names():
    assert found(ACCEL, ("HPU008",)) == []


PIPELINE = """
import torch


class Pipeline:
    def decode(self, latents, chunk):
        frames = []
        for i in range(0, latents.shape[0], chunk):
            frames.append(self.vae.decode(latents[i : i + chunk]))
        return torch.cat(frames)

    def __call__(self, latents, timesteps, embeddings, chunk):
        for t in timesteps:
            preds = []
            for j in range(embeddings.shape[0]):
                preds.append(self.unet(latents, t, embeddings[j : j + 1]))
            latents = self.scheduler.step(torch.cat(preds).mean(0), t, latents)
        {decode}
        return latents
"""


def test_a_decode_loop_after_the_run_and_a_prompt_loop_inside_a_step_are_not_step_loops():
    assert found(PIPELINE.replace("{decode}", "latents = self.decode(latents, chunk)"), ("HPU001",)) == []


def test_the_loop_around_the_prompt_loop_is_the_step_loop():
    src = PIPELINE.replace("for t in timesteps:", "for i, t in enumerate(timesteps):\n"
                           "            latents = latents * sigmas[i]")
    src = src.replace("{decode}", "latents = self.decode(latents, chunk)").replace(
        "def __call__(self, latents,", "def __call__(self, sigmas: torch.Tensor, latents,")
    assert found(src, ("HPU001",)) == [("HPU001", 14)]


PAD = """
import torch
import torch.nn.functional as F


def generate(model, ids, mask, steps):
    args = {"input_ids": ids, "attention_mask": mask}
    for i in range(steps):
        nxt = model(**args)[:, -1:].argmax(-1)
        args["input_ids"] = nxt
        args["attention_mask"] = F.pad(args["attention_mask"], ({widths}), value=1)
"""


def test_a_mask_padded_by_one_column_every_token_grows():
    got = [(f.code, f.line, f.message.split(":")[0]) for f in
           lint_source(textwrap.dedent(PAD.replace("{widths}", "0, 1")), "pad.py") if f.code == "HPU003"]
    assert got == [("HPU003", 11, '`args["attention_mask"]` is re-assigned from `torch.nn.functional.pad` '
                                  'of itself in a loop that calls a model')]


def test_a_pad_that_does_not_grow_is_left_alone():
    assert found(PAD.replace("{widths}", "0, 0"), ("HPU003",)) == []
    assert found(PAD.replace("{widths}", "0, -1"), ("HPU003",)) == []


SERVER = """
import torch


class Warper:
    def __call__(self, logits: torch.Tensor, keep):
        logits[logits < keep] = float("-inf")
        return logits


class Slot:
    def __init__(self, warper):
        self.warper = warper
        self.tokens = torch.zeros(0, dtype=torch.long)

    def select(self, logits, keep):
        token = self.warper(logits, keep).argmax(-1)
        self.tokens = torch.cat([self.tokens, torch.tensor([1], dtype=self.tokens.dtype)])
        return token


class Server:
    def __init__(self, model):
        self.model = model
        self.slots = []

    def add(self):
        self.slots.append(Slot(Warper()))

    def decode(self, ids, keep, steps):
        for _ in range(steps):
            logits = self.model(ids)
            for i, slot in enumerate(self.slots):
                ids[i] = slot.select(logits[i], keep)
"""


def test_the_items_appended_to_a_list_attribute_are_what_a_loop_over_it_gets():
    # the warper runs in each decode step through the slots; the host token list is not a device
    # accumulator: torch.cat needs its pieces on one device, and one of them is made on the host
    assert found(SERVER, ("HPU003", "HPU006")) == [("HPU006", 7)]


TYPE_AS = """
import torch


def greedy(model, src, steps, device):
    ys = torch.ones(1, 1).long().to(device)
    for _ in range(steps):
        nxt = model(src, ys).argmax(-1).item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src).fill_(nxt)], dim=0)
    return ys
"""


def test_a_host_tensor_converted_with_type_as_takes_the_other_tensors_device():
    assert found(TYPE_AS, ("HPU003",)) == [("HPU003", 9)]


KWARGS = """
import torch
import torch.nn.functional as F


def extend(kwargs):
    kwargs["attention_mask"] = F.pad(kwargs["attention_mask"], (0, 0))
    return kwargs


def options(kwargs):
    if kwargs["use_graphs"]:
        return {"bypass": False}
    return {}


def decode(model, ids, kwargs, steps):
    for _ in range(steps):
        kwargs = extend(kwargs)
        ids = model(ids, **options(kwargs))
"""


def test_a_dict_whose_item_goes_into_a_torch_op_is_not_a_tensor():
    assert found(KWARGS, ("HPU008",)) == []


IMAGES = """
import torch


class Processor:
    def fill(self, image, width, height):
        src_ratio = image.width / image.height
        if width / height < src_ratio:
            return image.resize((width, int(width / src_ratio)))
        return image

    def resize(self, image, width, height):
        if isinstance(image, torch.Tensor):
            return torch.nn.functional.interpolate(image, size=(height, width))
        return self.fill(image, width, height)


def run(model, proc, frames, steps):
    for _ in range(steps):
        frames = model(proc.resize(frames, 64, 64))
"""


def test_an_images_width_and_height_are_python_numbers():
    assert found(IMAGES.replace("proc.resize", "Processor().resize"), ("HPU008",)) == []


CHUNKED_RUNS = """
import torch
import habana_frameworks.torch.core as htcore


def generate(model, latents: torch.Tensor, chunks, steps):
    videos = []
    for c in range(chunks):
        for t in range(steps):
            latents = model(latents, t)
            htcore.mark_step()
        videos.append(latents.cpu())
        latents = latents[:, -1:].repeat(1, 4, 1)
    return videos
"""


def test_a_copy_once_per_run_of_steps_is_not_a_per_step_read():
    assert found(CHUNKED_RUNS, ("HPU005",)) == []
