"""The causes of the round-3 hand read (tests/data/hand_read/README.md, "Round 3"), one group
per cause: each look-alike (quiet) has a hazard twin of the same shape (reported), so a fix
cannot simply silence the rule.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

import pytest

from hpulint import Config, lint_source

HEAD = """
import numpy as np
import torch
import habana_frameworks.torch.core as htcore
from einops import rearrange
from PIL import Image
"""


def found(src: str) -> list:
    src = textwrap.dedent(HEAD) + textwrap.dedent(src)
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config())]


PIPE = """
class Pipe:
    def prepare(self, image):
        image = torch.as_tensor(image).to("hpu")
        if image.min() < 0:
            image = (image + 1) / 2
        return image

    def __call__(self, control_images, n: int):
        conds = []{prep}
        latents = torch.randn(1, 4, 64, 64, device="hpu")
        for t in self.scheduler.timesteps:{step}
            noise = self.unet(latents, t, conds)
            latents = self.scheduler.step(noise, t, latents)
        frames = []
        for chunk in latents.split(1):
            frames.append(self.vae.decode(chunk))
        return frames
"""

REFS = """
class Pipe:
    def prepare_latents(self, latents, refs):
        out = []
        for latent, ref_batch in zip(latents, refs):
            for ref in ref_batch:
                ref_latent = self.vae.encode(ref.to("hpu"))
                latent = torch.cat([ref_latent, latent], dim=1)
            out.append(latent)
        return torch.stack(out)

    def __call__(self, video, refs, prompts):
        latents = self.vae.encode(video.to("hpu"))
        {call}
        x = torch.randn(1, 4, 64, 64, device="hpu")
        for t in self.scheduler.timesteps:
            x = self.scheduler.step(self.transformer(x, t, cond), t, x)
        return x
"""


HOOK = """
import pytorch_lightning as pl

class Diffusion(pl.LightningModule):
    def {hook}(self, batch, batch_idx):
        images = self.decode(self.sample(batch["cond"]))
        for name, image in zip(batch["names"], images):
            image = 255. * rearrange(image.cpu().numpy(), "c h w -> h w c")
            img = Image.fromarray(image.astype(np.uint8))
            img.save(f"{{name}}.png")
        for prompt, image in zip(batch["prompts"], images):
            img = self.to_pil(image)
            self.scores.append(self.clip.score(prompt, img))
        return images.mean()
"""


PROC = """
class Processor:
    @staticmethod
    def to_numpy(images):
        return np.stack([np.array(i) for i in images])

    def preprocess(self, image):
        if not isinstance(image, list):
            image = [image]
        if isinstance(image[0], {kind}):
            if self.crop:
                image = [i for i in image]
            image = self.to_numpy(image)
        return image

def sample(model, x, n: int):
    proc = Processor()
    for _ in range(n):
        x = model(x)
        proc.preprocess(x)
        htcore.mark_step()
"""


CASES = {
    # --- a branch that runs on one pass of the step loop (Megatron's prefill) ---------------
    "a slice under `counter == 0` runs on the first decoding pass only; the else branch every pass": (
        """
        def decode(model, tokens: torch.Tensor, start: int, stop: int):
            counter = 0
            pos = start
            while pos < stop:
                if counter == 0:
                    ids = tokens[:, :pos]
                else:
                    ids = tokens[:, pos - 1]
                out = model(ids)
                tokens[:, pos] = out.argmax(-1)
                pos += 1
                counter += 1
            return tokens
        """,
        ["HPU001@15", "HPU001@17"],
    ),
    "`i == 0` on the counter of a loop inside the step pins nothing across steps": (
        """
        def train(model, batches: torch.Tensor, n: int):
            for step in range(n):
                for j in range(2):
                    if j == 0:
                        x = batches[step]
                        model(x)
                htcore.mark_step()
        """,
        ["HPU001@12"],
    ),
    "an interval test (`i % k == 0`) is not one pass": (
        """
        def sample(model, xs: torch.Tensor, n: int):
            for i in range(n):
                if i % 10 == 0:
                    model(xs[:, :i])
                htcore.mark_step()
        """,
        ["HPU001@11"],
    ),
    "a legacy CUDA tensor constructor makes a device tensor": (
        """
        def run(model, ids: list, n: int):
            tokens = torch.cuda.LongTensor(ids)
            for i in range(n):
                last = tokens[:, i].view(-1, 1)
                model(last)
        """,
        ["HPU001@11"],
    ),
    # --- a tokenizer's ids are CPU tensors ---------------------------------------------------
    "torch.equal on tokenizer ids in a loop over the text encoders is host work": (
        """
        def encode(prompts, tokenizers, encoders):
            embeds = []
            for prompt, tokenizer, encoder in zip(prompts, tokenizers, encoders):
                ids = tokenizer(prompt, padding="max_length", return_tensors="pt").input_ids
                full = tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
                if full.shape[-1] >= ids.shape[-1] and not torch.equal(ids, full):
                    print("truncated")
                embeds.append(encoder(ids.to("hpu")))
            return embeds
        """,
        [],
    ),
    "the same check through a pipeline's tokenizer attribute": (
        """
        class Pipe(torch.nn.Module):
            def forward(self, prompt):
                ids = self.tokenizer_2(prompt, return_tensors="pt").input_ids
                full = self.tokenizer_2(prompt, padding="longest", return_tensors="pt").input_ids
                if not torch.equal(ids, full):
                    print("truncated")
                return self.text_encoder(ids.to("hpu"))
        """,
        [],
    ),
    "ids moved to the device and compared every decoding step are reported": (
        """
        def generate(model, tokenizer, prompt, stop, n: int):
            ids = tokenizer(prompt, return_tensors="pt").input_ids.to("hpu")
            for _ in range(n):
                ids = torch.cat([ids, model(ids).argmax(-1)[:, -1:]], dim=-1)
                if torch.equal(ids[:, -1:], stop):
                    break
                htcore.mark_step()
            return ids
        """,
        ["HPU003@11", "HPU002@12"],
    ),
    # --- torch's getters return settings, not tensors --------------------------------------
    "a dtype from torch.get_autocast_gpu_dtype() in a warning f-string": (
        """
        class Attn(torch.nn.Module):
            def forward(self, q):
                if q.dtype == torch.float32:
                    if torch.is_autocast_enabled():
                        target = torch.get_autocast_gpu_dtype()
                    else:
                        target = self.proj.weight.dtype
                    print(f"casting back to {target}")
                    q = q.to(target)
                return self.proj(q)
        """,
        [],
    ),
    "a tensor in the same f-string is reported": (
        """
        class Attn(torch.nn.Module):
            def forward(self, q):
                scale = torch.amax(q)
                print(f"largest input {scale}")
                return self.proj(q)
        """,
        ["HPU005@11"],
    ),
    # --- ints that are not tensors: static methods, isinstance branches -------------------
    "a static method called through self gets its arguments in order": (
        """
        class Cache(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fill = -1
                self.register_buffer("buf", torch.zeros(2, 4, 64, 8))

            @staticmethod
            def update(prev, cur, idx, fill):
                if prev.shape == cur.shape:
                    return prev.copy_(cur)
                if cur.shape[2] > 1:
                    prev[:, :, :fill].copy_(cur)
                    return prev
                prev.index_copy_(2, idx - 1, cur)
                return prev

            def forward(self, cur, pos: int):
                idx = torch.full((1,), pos, device="hpu")
                return self.update(self.buf, cur, idx, self.fill)
        """,
        [],
    ),
    "a static metric helper called through self still reads its device arguments": (
        """
        class Dice(torch.nn.Module):
            @staticmethod
            def stats(pred, target):
                if (target != 1).all():
                    return pred.sum() * 0
                return pred.sum()

            def update(self, pred, target):
                self.total = self.total + self.stats(pred, target)

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.dice = Dice()

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.dice.update(self.head(x), y.to("hpu"))
        """,
        ["HPU008@11"],
    ),
    "a length read from the reuse-cache shape tuple in the else branch of isinstance": (
        """
        from typing import List, Optional

        class Model(torch.nn.Module):
            def forward(self, input_ids, past: Optional[List[torch.Tensor]] = None, reuse: bool = False):
                seen = 0
                if past is not None:
                    if reuse and not isinstance(past[0], torch.Tensor):
                        seen = past[0][2]
                    else:
                        seen = past[0].shape[2]
                n = seen if seen else input_ids.shape[1]
                return self.embed(input_ids[:, :n])
        """,
        [],
    ),
    "the same element read without the isinstance test is a device value": (
        """
        from typing import List, Optional

        class Model(torch.nn.Module):
            def forward(self, input_ids, past: Optional[List[torch.Tensor]] = None):
                seen = 0
                if past is not None:
                    seen = past[0][2]
                n = seen if seen else input_ids.shape[1]
                return self.embed(input_ids)
        """,
        ["HPU008@15"],
    ),
    "int() of a timestep in the else branch of isinstance is a Python number": (
        """
        class Sched:
            def step(self, out, timestep, sample):
                if isinstance(timestep, torch.Tensor):
                    index = int(timestep.item())
                else:
                    index = int(timestep)
                return sample - out * index

        def sample(model, x, timesteps: torch.Tensor):
            sched = Sched()
            for t in timesteps:
                x = sched.step(model(x, t), t, x)
                htcore.mark_step()
            return x
        """,
        ["HPU005@11"],
    ),
    # --- a tensor annotation that the callers contradict --------------------------------
    "a list of tensors sliced by the counter, whatever its annotation says": (
        """
        from typing import List

        class Trainer:
            def forward_pass(self, model, queries: torch.Tensor, n: int):
                for i in range(n):
                    batch = queries[i * 4:(i + 1) * 4]
                    model(torch.stack(batch).to("hpu"))

            def step(self, model, queries: List[torch.Tensor]):
                self.forward_pass(model, queries, 2)
        """,
        [],
    ),
    "a caller that passes a stacked tensor keeps it a tensor": (
        """
        from typing import List

        class Trainer:
            def forward_pass(self, model, queries: torch.Tensor, n: int):
                for i in range(n):
                    batch = queries[i * 4:(i + 1) * 4]
                    model(batch.to("hpu"))

            def step(self, model, queries: List[torch.Tensor]):
                self.forward_pass(model, torch.stack(queries), 2)
        """,
        ["HPU001@13"],
    ),
    # --- a host copy laid out on the host and written to a file --------------------------
    "a copy rearranged on the host and saved as an image": (
        """
        def render(sampler, model, prompts, out_dir):
            n = 0
            for prompt in prompts:
                samples = sampler.sample(model, prompt)
                images = torch.clamp((model.decode(samples) + 1.0) / 2.0, 0.0, 1.0)
                for image in images:
                    image = 255. * rearrange(image.cpu().numpy(), "c h w -> h w c")
                    Image.fromarray(image.astype(np.uint8)).save(f"{out_dir}/{n:05}.png")
                    n += 1
        """,
        [],
    ),
    "the same copy added to a running score is reported": (
        """
        def render(sampler, model, prompts, out_dir):
            total = 0.0
            for prompt in prompts:
                samples = sampler.sample(model, prompt)
                images = torch.clamp((model.decode(samples) + 1.0) / 2.0, 0.0, 1.0)
                for image in images:
                    image = 255. * rearrange(image.cpu().numpy(), "c h w -> h w c")
                    total += np.transpose(image, (2, 0, 1)).mean()
            return total
        """,
        ["HPU005@14"],
    ),
    "a copy passed through the project's own host helper before it is saved": (
        """
        def put_mark(img, encoder=None):
            if encoder is not None:
                img = Image.fromarray(encoder.encode(np.array(img)))
            return img

        def render(sampler, model, prompts, encoder):
            for i, prompt in enumerate(prompts):
                images = model.decode(sampler.sample(model, prompt))
                for image in images:
                    image = 255. * rearrange(image.cpu().numpy(), "c h w -> h w c")
                    img = Image.fromarray(image.astype(np.uint8))
                    img = put_mark(img, encoder)
                    img.save(f"{i}.png")
        """,
        [],
    ),
    "a helper that puts the copy back on the device is a round trip": (
        """
        def upload(img):
            return torch.from_numpy(img).to("hpu")

        def render(sampler, model, prompts):
            for i, prompt in enumerate(prompts):
                images = model.decode(sampler.sample(model, prompt))
                for image in images:
                    image = 255. * rearrange(image.cpu().numpy(), "c h w -> h w c")
                    image = upload(image)
                    np.save(f"{i}.npy", image)
        """,
        ["HPU005@15"],
    ),
    # --- preparation before the run's own step loop --------------------------------------
    "control images encoded in a loop before the denoising loop": (
        PIPE.format(prep="""
        for image in control_images:
            conds.append(self.vae.encode(self.prepare(image)))""", step=""),
        [],
    ),
    "the same helper called in every denoising step is reported": (
        PIPE.format(prep="""
        for image in control_images:
            conds.append(self.vae.encode(image))""", step="""
            conds = [self.prepare(c) for c in conds]"""),
        ["HPU008@11"],
    ),
    "reference latents prepended in a helper called before the denoising loop": (
        REFS.format(call="cond = self.prepare_latents(latents, refs)"),
        [],
    ),
    "the same helper called once per prompt of an outer loop is reported": (
        REFS.format(call="""for prompt in prompts:
            cond = self.prepare_latents(latents, refs)"""),
        ["HPU003@14"],
    ),
    "validation images saved from validation_step are its output": (
        HOOK.format(hook="validation_step"),
        [],
    ),
    "the same copy in training_step is reported": (
        HOOK.format(hook="training_step"),
        ["HPU005@14"],
    ),
    "a loop over the call's own inputs that keeps sizes between passes is still preparation": (
        PIPE.format(prep="""
        height = 64
        for image in control_images:
            image = self.prepare(image, height)
            height = image.shape[-2]
            conds.append(self.vae.encode(image))""", step="").replace(
            "def prepare(self, image):", "def prepare(self, image, height=None):"),
        [],
    ),
    "a first sampling loop over a local schedule stays a step loop before a second one": (
        """
        def two_stage(model, refiner_model, x, first: torch.Tensor, second: torch.Tensor):
            steps = first.tolist()
            for i, t in enumerate(steps):
                x = model(x, t)
                x = x[:, :i + 1].mean() + x
            for t in second:
                x = refiner_model(x, t)
            return x
        """,
        ["HPU001@12"],
    ),
    "a copy still read after a branch that may rebind its name is reported": (
        """
        def render(model, loader, kept):
            for i, z in enumerate(loader):
                img = model(z).cpu().numpy()
                np.save(f"{i}.npy", img)
                if i > 100:
                    img = None
                kept.append(img)
        """,
        ["HPU005@10"],
    ),
    "a caller that passes reversed() of a tensor passes a tensor": (
        """
        class Inverter:
            def sample(self, model, latents, steps: torch.Tensor, reference: torch.Tensor = None):
                for i, t in enumerate(steps):
                    if reference is not None:
                        ref = reference[i]
                        latents = latents + ref
                    latents = model(latents, t)
                return latents

            def __call__(self, model, latents, steps: torch.Tensor):
                inverse = self.sample(model, latents, steps)
                return self.sample(model, latents, steps, reference=reversed(inverse))
        """,
        ["HPU001@12"],
    ),
    "a list of PIL images (isinstance of its first item) is host data": (
        PROC.format(kind="Image.Image"),
        [],
    ),
    "the same helper given a list of tensors is reported": (
        PROC.format(kind="torch.Tensor"),
        ["HPU005@11"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    src, expected = CASES[name]
    assert found(src) == expected
