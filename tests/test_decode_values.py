"""Values in decoding and distillation code that the analysis used to lose: a mask written as
`~keep`, a mask made by `torch.full(..., dtype=torch.bool)`, what a function returns as a tuple on
two paths, a wrapper module built from a list of models, a project class built from any module,
and a loop over model chunks. Each case has a look-alike that must stay quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "decode.py")]
    return [x for x in out if not select or x[0] in select]


INVERTED = """
import torch


def decode(model, tokens: torch.Tensor, special: int, steps: int):
    keep = tokens[..., :1].expand_as(tokens)
    for _ in range(steps):
        nxt = model(tokens)
        nxt[{INDEX}] = special
        tokens = nxt
    return tokens
"""


def test_a_store_through_an_inverted_device_mask_is_a_data_dependent_shape():
    assert found(INVERTED.replace("{INDEX}", "~keep"), ("HPU006",)) == [("HPU006", 9)]


def test_an_inverted_python_int_index_is_no_mask():
    assert found(INVERTED.replace("{INDEX}", "~special"), ("HPU006",)) == []


BOOL_FULL = """
import torch


def remask(model, seq: torch.Tensor, n, span, steps):
    for _ in range(steps):
        scores = model(seq)
        picked = scores.topk(n, dim=-1).indices
        chunks = torch.full(scores.shape, False, dtype={DTYPE}, device=seq.device)
        chunks = chunks.scatter(2, picked, True)
        mask = torch.repeat_interleave(chunks, span, dim=-1)
        seq[mask] = 0
    return seq
"""


def test_a_boolean_tensor_made_on_the_device_and_scattered_is_a_mask():
    assert found(BOOL_FULL.replace("{DTYPE}", "torch.bool"), ("HPU006",)) == [("HPU006", 12)]


def test_an_integer_tensor_made_the_same_way_is_an_index():
    assert found(BOOL_FULL.replace("{DTYPE}", "torch.long"), ("HPU006",)) == []


ENSEMBLE = """
import torch
from torch import nn


class Ensemble(nn.Module):
    def __init__(self, models):
        super().__init__()
        self.models = nn.ModuleList(models)

    def forward_decoder(self, tokens):
        outs = []
        for m in self.models:
            probs = m.decode(tokens)
            if len(self.models) == 1:
                return probs[:, -1, :], None
            outs.append(probs[:, -1, :])
        return torch.stack(outs).mean(0), torch.ones(1, device=tokens.device)


class Generator:
    def __init__(self, models):
        if isinstance(models, Ensemble):
            self.model = models
        else:
            self.model = Ensemble(models)

    def generate(self, tokens: torch.Tensor, max_len: int):
        for step in range(max_len):
            lprobs, attn = self.model.forward_decoder(tokens)
            lprobs[lprobs != lprobs] = -1e9
            tokens = torch.cat([tokens, lprobs.argmax(-1, keepdim=True)], dim=1)
        return tokens
"""


def test_a_wrapper_built_from_a_list_of_models_and_a_tuple_returned_on_two_paths():
    got = found(ENSEMBLE, ("HPU006",))
    # `self.model` is the Ensemble (not the list it wraps); the first position of what
    # forward_decoder returns is a device tensor on its second path
    assert ("HPU006", 31) in got


TEACHER = """
import torch
from torch import nn


class Teacher(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.zeros(1, 3, 1, 1))

    def normalize(self, x, mean):
        if torch.equal(mean, self.mean):
            return x
        return x - mean

    def forward(self, x):
        return self.net(x)


class Distill(nn.Module):
    def __init__(self, student, teacher_model: nn.Module):
        super().__init__()
        self.student = student
        if isinstance(teacher_model, Teacher):
            teacher = teacher_model
        else:
            teacher = Teacher(teacher_model)
        self.teacher = teacher
        self.register_buffer("mean", torch.ones(1, 3, 1, 1))

    def forward(self, x):
        with torch.no_grad():
            t = self.teacher(self.teacher.normalize(x, self.mean))
        return self.student(x) - t
"""


def test_a_project_class_built_from_any_module_says_what_its_methods_are():
    assert ("HPU002", 13) in found(TEACHER, ("HPU002",))


CHUNKS = """
import torch


def disable_hooks(chunks):
    for chunk in chunks:
        chunk.disable_forward_pre_hook()


def save(chunks, path):
    disable_hooks(chunks)
    torch.save([c.state_dict() for c in chunks], path)


def decide_exit(chunks, start, limit, path):
    done = torch.tensor([start > limit], dtype=torch.int, device="hpu")
    if done.item():
        save(chunks, path)
        return True
    return False


def train(model, loader, opt, limit, path):
    if not isinstance(model, list):
        model = [model]
    for batch in loader:
        loss = model[0](batch)
        loss.backward()
        opt.step()
        if decide_exit(model, 0.0, limit, path):
            break
"""


def test_a_loop_over_model_chunks_is_no_step_loop_and_its_callers_stay_per_step():
    # the exit test runs every step: hot through the training loop, not a multi-step function
    # because a helper loops over the model's chunks
    assert ("HPU005", 17) in found(CHUNKS, ("HPU005",))


UNETS = """
import torch


def validate(model, decoder, loader, losses: torch.Tensor):
    for i, (img, emb) in enumerate(loader):
        img = img.to("hpu")
        for unet in range({RANGE}):
            loss = model.forward(img, image_embed=emb, unet_number=unet)
            losses[0, unet - 1] += loss
"""


def test_a_loop_that_numbers_the_models_is_no_step_loop():
    # each pass evaluates one of the unets: the same positions are written every batch
    for rng in ("1, len(decoder.unets) + 1", "1, model.num_unets + 1"):
        assert found(UNETS.replace("{RANGE}", rng), ("HPU001",)) == [], rng


def test_a_loop_over_a_count_of_anything_else_still_steps():
    assert ("HPU001", 10) in found(UNETS.replace("{RANGE}", "1, model.num_steps + 1"), ("HPU001",))


HOUSEKEEPING = """
import torch


def load(model, path):
    if not isinstance(model, list):
        model = [model]
    model[0].load_checkpoint(path)
    sd = model[0].state_dict_for_save_checkpoint()
    done = model[0].was_step_applied() and len(sd) > 0
    return done


def convert(model_cls, paths, out: torch.Tensor):
    for rank in range(len(paths)):
        m = model_cls()
        if load(m, paths[rank]):
            out[rank] = 1
"""


def test_methods_that_manage_a_model_are_not_forward_passes():
    # loading a checkpoint per rank is no step loop, and `was_step_applied()` is a Python bool
    assert found(HOUSEKEEPING, ("HPU001", "HPU008")) == []
