"""Kinds found wrong in round 25 (hand-read samples and the twenty-fourth held-out set), once
read. Each has a look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found

# a causal video layer run chunk by chunk: it joins what it kept from the last chunk to the new
# one, then keeps only the last frames of the result for the next call
CAUSAL = """
import torch
from torch import nn


class CausalUpsample(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.first = True
        self.frame_cache = None

    def forward(self, x):
        if not self.first:
            x = torch.cat([self.frame_cache, x], dim=2)
            self.frame_cache = x[:, :, {kept}].clone()
        else:
            self.frame_cache = x[:, :, -self.n:].clone()
        self.first = False
        return x
"""


def test_a_cache_cut_back_to_its_last_frames_every_call_does_not_grow():
    assert found(CAUSAL.format(kept="-2 * self.n:-self.n"), ("HPU003",)) == []
    assert found(CAUSAL.format(kept="-1:"), ("HPU003",)) == []


def test_a_cache_that_keeps_everything_it_joined_grows_every_call():
    assert found(CAUSAL.format(kept=":"), ("HPU003",)) == [("HPU003", 15)]


# a pipeline block's state: set afresh from the scheduler every call, then joined with the mask
# channels (a 9-channel inpainting UNet); against the same join onto a state carried across calls
BLOCK = """
import torch


class Denoise:
    def __call__(self, components, block_state, i, t):
{first}        if components.channels == 9:
            block_state.scaled = torch.cat([block_state.scaled, block_state.mask], dim=1)
        return block_state
"""


def test_an_attribute_set_afresh_earlier_in_the_call_does_not_grow():
    first = "        block_state.scaled = components.scheduler.scale_model_input(block_state.latents, t)\n"
    assert found(BLOCK.format(first=first), ("HPU003",)) == []


def test_an_attribute_joined_onto_itself_on_every_call_still_grows():
    assert found(BLOCK.format(first=""), ("HPU003",)) == [("HPU003", 8)]


# block-wise diffusion decoding: each block starts with a full pass that fills the cache, then a
# `while True` loop decodes the block's tokens, one model call a pass, until none is masked
BLOCKS = """
import torch


def generate(model, prompt, x, n_blocks, block, schedule, mask_id):
    for b in range(n_blocks):
        start = prompt.shape[1] + b * block
        out = model(x, use_cache=True)
        kv = out.past_key_values
        i = 1
        while True:
            logits = model(x[:, start:], past_key_values=kv).logits
            take = schedule[:, i]
            x[:, start:] = logits.argmax(-1)
            if (x[:, start:start + block] == mask_id).sum() == 0:
                break
            i += 1
    return x
"""


def test_a_while_loop_that_decodes_a_block_inside_a_block_loop_is_a_step_loop():
    got = found(BLOCKS, ("HPU001",))
    assert ("HPU001", 13) in got  # `schedule[:, i]`, the inner counter


def test_a_block_offset_made_from_a_size_and_the_block_counter_is_a_counter():
    got = found(BLOCKS, ("HPU001",))
    assert ("HPU001", 12) in got  # `x[:, start:]`, a new shape every block


def test_an_outer_counter_read_in_the_inner_step_loop_says_it_changes_per_outer_pass():
    from hpulint.config import Config
    from hpulint.engine import lint_source
    import textwrap

    msgs = {f.line: f.message for f in lint_source(textwrap.dedent(BLOCKS), "run.py", Config()) if f.code == "HPU001"}
    assert "every pass of the outer loop" in msgs[12]
    assert "every pass of the outer loop" not in msgs[13]


# functions of a generation class installed on a loaded model with types.MethodType: `self(...)`
# in them runs the model
INSTALLED = {
    "gen_utils.py": """
import torch


class GenerationMixin:
    def sample(self, x, steps):
        for i in range(steps):
            logits = self(x).logits
            x = torch.where(x == 0, logits.argmax(-1), x)
            if (x == 0).sum() == 0:
                break
        return x
""",
    "run.py": """
import types
import torch
from transformers import AutoModel
from gen_utils import GenerationMixin

model = AutoModel.from_pretrained("m").to("cuda")
{install}
""",
}


def _installed(tmp_path, capsys, monkeypatch, install):
    from snippets import lint_project

    files = dict(INSTALLED)
    files["run.py"] = files["run.py"].format(install=install)
    return lint_project(tmp_path, files, capsys, monkeypatch)


def test_a_class_whose_function_is_installed_on_a_model_calls_the_model_through_self(tmp_path, capsys, monkeypatch):
    got = _installed(tmp_path, capsys, monkeypatch, "model.sample = types.MethodType(GenerationMixin.sample, model)")
    assert any(g.startswith("gen_utils.py:10:") and g.endswith("HPU008") for g in got), got


def test_a_class_never_installed_on_a_model_does_not(tmp_path, capsys, monkeypatch):
    got = _installed(tmp_path, capsys, monkeypatch, "out = None")
    assert not any(g.startswith("gen_utils.py") for g in got)


# the framework hands a step hook each step's batch, on the device
HOOKS = """
import torch
{base_import}


class Step({base}):
    def {hook}(self, {params}):
        mask = {batch}["attention_mask"]
        if mask.sum() == 0:
            return None
        return mask.float().mean()
"""


def test_a_trainer_step_hooks_inputs_are_device_tensors():
    src = HOOKS.format(base_import="from transformers import Trainer", base="Trainer", hook="compute_loss",
                       params="model, inputs, return_outputs=False", batch="inputs")
    assert found(src, ("HPU008",)) == [("HPU008", 9)]


def test_a_lightning_training_steps_batch_is_device_tensors():
    src = HOOKS.format(base_import="import lightning as L", base="L.LightningModule", hook="training_step",
                       params="batch, batch_idx", batch="batch")
    assert found(src, ("HPU008",)) == [("HPU008", 9)]


def test_a_step_hooks_batch_that_a_project_caller_fills_with_host_data_is_not():
    src = HOOKS.format(base_import="import lightning as L", base="L.LightningModule", hook="training_step",
                       params="batch, batch_idx", batch="batch") + """

def smoke():
    Step().training_step({"attention_mask": [1, 1, 0]}, 0)
"""
    assert found(src, ("HPU008",)) == []


def test_a_method_not_named_as_a_step_hook_gets_nothing_from_its_name():
    src = HOOKS.format(base_import="import lightning as L", base="L.LightningModule", hook="summarize",
                       params="batch, batch_idx", batch="batch")
    assert found(src, ("HPU008",)) == []


# a library criterion (transformers' LabelSmoother) gives a loss tensor, which the step prints
SMOOTHED = """
import torch
from transformers.trainer_pt_utils import LabelSmoother


def train(model, loader, opt):
    smoother = LabelSmoother(epsilon=0.1)
    for batch in loader:
        out = model(**batch)
        loss = smoother(out, batch["labels"])
        print(f"loss {loss}")
        loss.backward()
        opt.step()
"""


def test_a_library_criterions_output_is_a_tensor():
    assert found(SMOOTHED, ("HPU005",)) == [("HPU005", 11)]


# the indices where a device condition holds, from a one-argument `torch.where`: their number is
# data, so a branch on it waits for the device
EOS = """
import torch


def decode(model, ids, eos, steps):
    for _ in range(steps):
        ids = torch.cat([ids, model(ids).logits[:, -1:].argmax(-1)], dim=-1)
        found = {found}
        if len(found) > 0:
            break
    return ids
"""


def test_a_branch_on_the_length_of_a_one_argument_wheres_indices_waits_for_the_device():
    assert found(EOS.format(found="torch.where(ids[0] == eos)[0]"), ("HPU008",)) == [("HPU008", 9)]


def test_a_branch_on_the_length_of_a_three_argument_where_does_not():
    assert found(EOS.format(found="torch.where(ids[0] == eos, 1, 0)"), ("HPU008",)) == []


# a tensor compared with a string is never equal: Python falls back to identity, reading nothing
STRING_TEST = """
import torch


def step(model, x, attention_mask):
    for _ in range(4):
        if attention_mask {test}:
            x = model(x, attention_mask)
        else:
            x = model(x)
    return x
"""


def test_a_tensor_compared_with_a_string_reads_nothing():
    src = STRING_TEST.format(test='!= "full"')
    assert found(src.replace("def step(model, x, attention_mask)", "def step(model, x, attention_mask: torch.Tensor)"),
                 ("HPU008",)) == []


def test_a_tensor_compared_with_a_number_is_still_read():
    src = STRING_TEST.format(test="!= 0")
    assert found(src.replace("def step(model, x, attention_mask)", "def step(model, x, attention_mask: torch.Tensor)"),
                 ("HPU008",)) == [("HPU008", 7)]


# XLA training loops that mark their steps through a loader, written the way users write them
XLA_LOOP = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from accelerate import Accelerator
from torch.utils.data import DataLoader


def train(model, opt, dataset):
    loader = DataLoader(dataset, batch_size=8, drop_last=True)
{body}
"""

PREPARED = """    accelerator = Accelerator()
    model, opt, loader = accelerator.prepare(model, opt, loader)
    for batch in loader:
        loss = model(batch).sum()
        accelerator.backward(loss)
        opt.step()
"""

NEXT_OF_ITER = """    it = iter(pl.MpDeviceLoader(loader, xm.xla_device()))
    while True:
        batch = next(it)
        loss = model(batch).sum()
        loss.backward()
        opt.step()
"""


def test_a_loader_accelerate_prepares_on_xla_marks_its_steps():
    assert found(XLA_LOOP.format(body=PREPARED), ("HPU004",)) == []


def test_a_plain_loader_on_xla_still_needs_a_marker():
    body = PREPARED.replace("    model, opt, loader = accelerator.prepare(model, opt, loader)\n", "")
    assert found(XLA_LOOP.format(body=body), ("HPU004",)) == [("HPU004", 12)]


def test_next_on_an_iterator_of_a_marking_loader_marks_each_pass():
    assert found(XLA_LOOP.format(body=NEXT_OF_ITER), ("HPU004",)) == []
    plain = NEXT_OF_ITER.replace("iter(pl.MpDeviceLoader(loader, xm.xla_device()))", "iter(loader)")
    assert found(XLA_LOOP.format(body=plain), ("HPU004",)) == [("HPU004", 12)]


# a synthetic dataset whose length is the literal it is given
SYNTHETIC = """
import torch
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, num_samples, dim):
        self.num_samples = num_samples
        self.dim = dim

    def __len__(self):
        return self.num_samples

    def __getitem__(self, i):
        return torch.randn(self.dim)


def train(model, opt):
    loader = DataLoader(RandomDataset({n}, 8), batch_size=64)
    for x in loader:
        loss = model(x.to(xm.xla_device())).sum()
        loss.backward()
        opt.step()
        xm.mark_step()
"""


def test_a_dataset_whose_length_the_batch_size_divides_has_no_short_batch():
    assert found(SYNTHETIC.format(n=1024), ("HPU007",)) == []


def test_a_dataset_whose_length_it_does_not_divide_has_one():
    assert found(SYNTHETIC.format(n=1000), ("HPU007",)) == [("HPU007", 20)]


def test_the_truth_of_a_hooks_batch_container_is_not_a_device_read():
    src = """
import torch
import lightning as L


class M(L.LightningModule):
    def training_step(self, batch, batch_idx):
        if not self.kept:
            self.kept = batch
        x = batch["images"]
        return self(x).mean()
"""
    assert found(src, ("HPU008",)) == []


def test_an_attribute_set_only_on_another_branch_still_grows():
    src = """
import torch


class Cached:
    def forward(self, x):
        if self.past is None:
            out = self.model(x)
            self.history = out.logits
            self.past = out.past_key_values
        else:
            out = self.model(x[:, -1:], past_key_values=self.past)
            self.history = torch.cat([self.history, out.logits], dim=1)
            self.past = out.past_key_values
        return self.history[:, -1]
"""
    assert found(src, ("HPU003",)) == [("HPU003", 13)]


def test_a_prepared_loader_joined_with_a_library_wrapper_of_it_still_feeds_the_training_loop():
    src = """
import torch
import torch_xla.core.xla_model as xm
from accelerate import skip_first_batches
from torch.utils.data import DataLoader
from .integrations.tpu import tpu_spmd_dataloader


class Trainer:
    def get_train_dataloader(self):
        return self.accelerator.prepare(DataLoader(self.train_dataset, batch_size=8))

    def train(self, skip, spmd):
        train_dataloader = self.get_train_dataloader()
        if spmd:
            train_dataloader = tpu_spmd_dataloader(train_dataloader)
        epoch_iterator = train_dataloader
        if skip:
            epoch_iterator = skip_first_batches(epoch_iterator, skip)
        for step, inputs in enumerate(epoch_iterator):
            loss = self.model(**inputs).loss
            loss.backward()
            self.optimizer.step()
            xm.mark_step()
"""
    assert found(src, ("HPU007", "HPU004")) == [("HPU007", 11)]


def test_a_batch_key_that_names_text_holds_strings():
    src = """
import torch
import lightning as L


class M(L.LightningModule):
    def training_step(self, batch, batch_idx):
        for name, image in zip(batch["names"], self(batch["images"])):
            print(f"{name}")
        mask = batch["mask"]
        if mask.sum() == 0:
            return None
        return self(batch["images"]).mean()
"""
    assert found(src, ("HPU005", "HPU008")) == [("HPU008", 11)]


def test_a_loader_that_is_a_marking_loader_on_xla_and_a_plain_one_elsewhere_marks():
    src = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader


def train(model, opt, dataset, use_xla):
    loader = DataLoader(dataset, batch_size=8, drop_last=True)
    it = pl.MpDeviceLoader(loader, xm.xla_device()) if use_xla else loader
    for x in it:
        loss = model(x).sum()
        loss.backward()
        opt.step()
"""
    assert found(src, ("HPU004",)) == []


# a data loader that slides a window over a token tensor kept on the host
WINDOW = """
import numpy as np
import torch


class Loader:
    def __init__(self, path, B, T):
        self.B, self.T = B, T
        self.tokens = {tokens}
        self.pos = 0

    def next_batch(self):
        buf = self.tokens[self.pos:self.pos + self.B * self.T + 1]
        self.pos += self.B * self.T
        return buf[:-1].view(self.B, self.T), buf[1:].view(self.B, self.T)


loader = Loader("shard.npy", 4, 64)
model = torch.nn.Linear(64, 64).to("cuda")
opt = torch.optim.AdamW(model.parameters())
for step in range(100):
    x, y = loader.next_batch()
    loss = model(x.to("cuda").float()).sum()
    loss.backward()
    opt.step()
"""


def test_a_window_slid_over_a_host_token_tensor_is_new_data_not_a_constant():
    assert found(WINDOW.format(tokens="torch.tensor(np.load(path), dtype=torch.long)"), ("HPU001",)) == []


def test_the_same_window_over_a_device_tensor_is_a_constant():
    got = found(WINDOW.format(tokens='torch.tensor(np.load(path), dtype=torch.long, device="cuda")'), ("HPU001",))
    assert ("HPU001", 13) in got



# a host read under an opt-in flag no project caller gives: the lazy rules still report it (a
# library's public function is called with the flag by its users: bark's `top_p`, sixth set);
# HPU012 does not, for a helper a compiled function calls (test_compile_kinds24)
VERBOSE_HELPER = """
import torch


def score(x, verbose=False):
    if verbose:
        print(x.sum().item())
    return x.mean()


def train(model, loader, opt):
    for b in loader:
        loss = score(model(b))
        loss.backward()
        opt.step()
"""


def test_a_read_under_an_opt_in_flag_no_project_caller_gives_is_still_reported():
    assert found(VERBOSE_HELPER, ("HPU005",)) == [("HPU005", 7)]
