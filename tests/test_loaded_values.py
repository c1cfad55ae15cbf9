"""`torch.load` returns whatever was saved: a whole model (then a loop that calls it is a decoding
loop), a checkpoint dict or tensors. Its value is unknown, so a name decides (`model = torch.load(f)`),
and a checkpoint's entries are not taken for device tensors.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def codes(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "generate.py")]


def test_a_loaded_model_called_in_a_decoding_loop():
    src = """
    import torch

    device = torch.device("hpu")
    with open("model.pt", "rb") as f:
        model = torch.load(f, map_location=device)
    inp = torch.randint(10, (1, 1)).to(device)
    with torch.no_grad():
        for i in range(100):
            output = model(inp, False)
            weights = output[-1].squeeze().exp().cpu()
            idx = torch.multinomial(weights, 1)[0]
            inp = torch.cat([inp, torch.tensor([[idx]]).to(device)], 0)
    """
    assert codes(src) == [("HPU005", 11), ("HPU003", 13)]


def test_a_loaded_checkpoints_entries_are_not_device_tensors():
    src = """
    import torch

    def resume(model, opt, loader, path):
        ckpt = torch.load(path, map_location="cpu")
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            if ckpt["epoch"] > 3:
                print("resumed late")
    """
    assert codes(src) == []


GATHER = """
import torch
import torch.distributed as dist


class Sampler:
    def update(self, local_ts, local_losses):
        sizes = [{element} for _ in range(dist.get_world_size())]
        dist.all_gather(sizes, torch.tensor([len(local_ts)], device=local_ts.device))
        sizes = [x.item() for x in sizes]
        return max(sizes)


def train(model, loader, opt, sampler):
    for batch in loader:
        loss = model(batch)
        sampler.update(batch, loss)
        loss.mean().backward()
        opt.step()


train(None, [], None, Sampler())
"""


def test_a_list_comprehension_of_device_tensors_holds_device_tensors():
    src = GATHER.format(element="torch.tensor([0], dtype=torch.int32, device=local_ts.device)")
    assert codes(src) == [("HPU005", 10)]


def test_a_list_comprehension_of_host_tensors_holds_host_tensors():
    assert codes(GATHER.format(element="torch.tensor([0], dtype=torch.int32)")) == []


def test_the_length_of_a_tensor_is_a_size_not_tensor_data():
    src = """
    import torch

    def sample(model, latents, guidance_scale):
        x = torch.cat([latents] * 2)
        for t in range(50):
            if guidance_scale > 1:
                half = x[: len(x) // 2]
                x = torch.cat([half, half], dim=0)
            x = model(x, t)
            if x.max() > 3:
                break
        return x
    """
    assert codes(src) == [("HPU008", 11)]
