"""Where steps reach that the eighth held-out set showed missed (tests/data/real_code_notes.md): a
property read in a step (its getter runs there), a model held behind a property, a Lightning
module's per-batch hooks, a logging flag a training step sets on every optimizer step, one of a
dict of optimizers stepped under an update-frequency test, module and tensor hooks, and a package
whose own `lightning/` folder must not hide the library. Each has a look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source
from snippets import lint_project as lint


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "run.py")]
    return [x for x in out if not select or x[0] in select]


PROPERTY = """
import torch
import habana_frameworks.torch.core as htcore


class Agent:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt
        self.log_alpha = torch.zeros(1, device="hpu", requires_grad=True)

    {DECORATOR}
    def temperature(self):
        return self.log_alpha.exp().item()

    def update(self, batch):
        loss = self.net(batch).mean() * {READ}
        loss.backward()
        self.opt.step()
        htcore.mark_step()


def train(net, opt, loader):
    agent = Agent(net, opt)
    for batch in loader:
        agent.update(batch)
"""


def test_a_property_read_in_a_step_runs_its_getter_every_step():
    src = PROPERTY.replace("{DECORATOR}", "@property").replace("{READ}", "self.temperature")
    assert found(src, ("HPU005",)) == [("HPU005", 14)]


def test_a_method_that_is_no_property_runs_only_when_called():
    src = PROPERTY.replace("{DECORATOR}", "").replace("{READ}", "2.0")
    assert found(src, ("HPU005",)) == []


HELD_MODEL = """
import torch
import habana_frameworks.torch.core as htcore


class Evaluator:
    def __init__(self, model):
        self._model = model

    @property
    def lm(self):
        return self._model

    def _call(self, x):
        with torch.no_grad():
            return self.lm(x)

    def score(self, batches):
        out = []
        for x in batches:
            logits = self._call(x)
            out.append(float(logits.sum()))
        return out


def main():
    model = torch.nn.Linear(4, 4).to("hpu")
    Evaluator(model).score([torch.randn(2, 4)])
"""


def test_a_model_held_behind_a_property_makes_the_loop_that_calls_it_a_step_loop():
    assert found(HELD_MODEL, ("HPU005",)) == [("HPU005", 22)]


LIGHTNING = """
import torch
import lightning.pytorch as pl
import torch_xla.core.xla_model as xm


class Module(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.net(batch)
        loss.backward()
        self.should_print = False
        if (batch_idx + 1) % self.accum == 0:
            self.should_print = True
            {FLAG_ELSEWHERE}
            opt = self.optimizers()
            opt.step()
            opt.zero_grad()
            xm.mark_step()
        self.loss = loss.detach()

    def on_train_batch_end(self, *args):
        if self.should_print:
            print(f"loss {self.loss.cpu().item()}")
"""


def test_a_lightning_modules_batch_hook_reads_every_step_when_the_flag_is_set_every_optimizer_step():
    src = LIGHTNING.replace("{FLAG_ELSEWHERE}", "pass")
    assert found(src, ("HPU005",)) == [("HPU005", 23)]


def test_a_flag_set_at_a_logging_interval_keeps_the_hook_quiet():
    src = LIGHTNING.replace("            self.should_print = True\n", "").replace(
        "{FLAG_ELSEWHERE}", "if self.global_step % 50 == 0:\n                self.should_print = True")
    assert found(src, ("HPU005",)) == []


def test_a_lightning_hook_that_runs_once_on_the_first_batch_is_quiet():
    src = LIGHTNING.replace("{FLAG_ELSEWHERE}", "pass").replace(
        "        if self.should_print:\n", "        if self.global_step == 0 and batch_idx == 0:\n").replace(
        "def on_train_batch_end(self, *args)", "def on_train_batch_start(self, batch, batch_idx)")
    assert found(src, ("HPU005",)) == []


OPTIMIZER_DICT = """
import torch
import habana_frameworks.torch.core as htcore


class Learner:
    def update(self, actor, batch, step):
        if step % self.actor_every == 0:
            loss = actor(batch).mean()
            self.optimizers["actor"].zero_grad()
            loss.backward()
            self.optimizers["actor"].step()
            {LOG}
        htcore.mark_step()


def train(actor, loader):
    learner = Learner()
    for step, batch in enumerate(loader):
        learner.update(actor, batch, step)
"""


def test_a_dict_of_optimizers_stepped_under_an_update_frequency_is_no_logging_interval():
    src = OPTIMIZER_DICT.replace("{LOG}", "self.stats = loss.item()")
    assert found(src, ("HPU005",)) == [("HPU005", 13)]


def test_a_read_under_a_logging_interval_with_no_optimizer_step_is_quiet():
    src = OPTIMIZER_DICT.replace('self.optimizers["actor"].step()', "pass").replace(
        "{LOG}", "self.stats = loss.item()")
    assert found(src, ("HPU005",)) == []


HOOKS = """
import torch
import habana_frameworks.torch.core as htcore


def attach(model):
    def collect(module, inputs, output):
        module.stats = output.detach().to("cpu")

    for layer in model.modules():
        {REGISTER}


class Scaled(torch.nn.Module):
    def forward(self, x):
        y = x * 2

        def save_grad(grad):
            if torch.isnan(grad).any():
                return None
            return grad

        if y.requires_grad:
            y.register_hook(save_grad)
        return y
"""


def test_a_module_hook_and_a_tensor_hook_run_every_forward_and_backward():
    src = HOOKS.replace("{REGISTER}", "layer.register_forward_hook(collect)")
    assert found(src, ("HPU005", "HPU008")) == [("HPU005", 8), ("HPU008", 19)]


def test_a_function_that_is_never_registered_as_a_hook_is_quiet():
    src = HOOKS.replace("{REGISTER}", "collect(layer, None, torch.zeros(1))").replace(
        "y.register_hook(save_grad)", "pass")
    assert found(src, ("HPU005", "HPU008")) == []


def test_a_packages_own_lightning_folder_does_not_hide_the_library(tmp_path, capsys, monkeypatch):
    files = {
        "pkg/__init__.py": "",
        "pkg/lightning/__init__.py": "from pkg.lightning.module import Base\n",
        "pkg/lightning/module.py": textwrap.dedent("""
            from lightning.pytorch import LightningModule


            class Base(LightningModule):
                pass
            """),
        "train.py": textwrap.dedent("""
            import torch
            import torch_xla.core.xla_model as xm
            from pkg.lightning import Base


            class Module(Base):
                def training_step(self, batch, batch_idx):
                    self.loss = self.net(batch)
                    return self.loss

                def on_train_batch_end(self, *args):
                    print(self.loss.cpu())
            """),
    }
    assert lint(tmp_path, files, capsys, monkeypatch) == ["train.py:13:15:HPU005"]


WRAPPED = {
    "wrap/__init__.py": "",
    "wrap/models.py": textwrap.dedent("""
        import torch


        class Wrapper(torch.nn.Module):
            def run_train(self, **batch):
                loss = self.module(**batch)
                loss.backward()
                return self._process(loss)

            def _process(self, loss):
                return loss.detach().cpu()


        class Pipelined(torch.nn.Module):
            def run_train(self, **batch):
                return self.inner.run_train(**batch)
        """),
    "train.py": textwrap.dedent("""
        import torch
        import torch_xla.core.xla_model as xm
        import wrap.factory as factory


        def main(loader, opt):
            model = factory.build()
            for batch in loader:
                loss = model.run_train(**batch)
                opt.step()
                xm.mark_step()
        """),
}


def test_a_method_few_project_models_define_is_called_on_a_model_of_unknown_class(tmp_path, capsys, monkeypatch):
    # (at the call of `_process`, which only returns the host copy: see the HPU005 page)
    assert lint(tmp_path, WRAPPED, capsys, monkeypatch) == ["wrap/models.py:9:16:HPU005"]


def test_a_module_method_a_project_model_overrides_is_still_the_modules(tmp_path, capsys, monkeypatch):
    files = dict(WRAPPED)
    files["wrap/models.py"] = files["wrap/models.py"].replace("def run_train(", "def train(").replace(
        ".run_train(", ".train(")
    files["train.py"] = files["train.py"].replace("model.run_train(**batch)", "model.train(**batch)")
    assert lint(tmp_path, files, capsys, monkeypatch) == []


ANNOTATED_MODULE = """
import torch
import habana_frameworks.torch.core as htcore


class Policy(torch.nn.Module):
    def _expert(self) -> torch.nn.Module:
        return self.backbone.get_expert()

    def sample(self, x, steps):
        for t in torch.linspace(0, 1, steps, device=x.device):
            v = self._expert().velocity(x, t)
            {READ}
        return v
"""


def test_a_helper_annotated_to_return_a_module_returns_one():
    src = ANNOTATED_MODULE.replace("{READ}", "print(float(t.item()))")
    assert found(src, ("HPU005",)) == [("HPU005", 13)]


def test_a_helper_without_the_annotation_returns_nothing_known():
    src = ANNOTATED_MODULE.replace("{READ}", "print(float(t.item()))").replace(" -> torch.nn.Module", "")
    assert found(src, ("HPU005",)) == []


PREFIX_MASK = """
import torch
import habana_frameworks.torch.core as htcore


def integrate(model, x, prefix: torch.Tensor, prefix_mask: torch.Tensor, steps):
    for step in range(steps):
        t = torch.full(x.shape[:2], 1.0 - step / steps, device=x.device)
        t[{INDEX}] = 0.0
        x = x + model(x, t) / steps
    return x
"""


def test_a_part_of_a_tensor_named_as_a_mask_indexes_by_mask():
    src = PREFIX_MASK.replace("{INDEX}", "prefix_mask[..., 0]")
    assert found(src, ("HPU006",)) == [("HPU006", 9)]


def test_a_part_of_a_tensor_named_otherwise_is_no_mask():
    src = PREFIX_MASK.replace("{INDEX}", "prefix[..., 0]")
    assert found(src, ("HPU006",)) == []


CHECKPOINTED = """
import numpy as np
import torch
import habana_frameworks.torch.core as htcore


class Recompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run, x):
        ctx.run = run
        with torch.no_grad():
            return run(x)

    @staticmethod
    def backward(ctx, grad):
        with torch.enable_grad():
            out = ctx.run(ctx.saved)
        torch.autograd.backward(out, grad)
        return None, grad


class Encoder(torch.nn.Module):
    def forward(self, x):
        return Recompute.apply(self.block, x)


def to_numpy(t):
    return t.detach().cpu().numpy()


def build_index(loader, out):
    encoder = Encoder()
    for batch in loader:
        emb = encoder(batch)
        {USE}
"""


def test_an_inference_loop_through_a_checkpointed_model_does_not_train():
    # the autograd Function's backward() runs only inside someone's backward pass: the loop
    # below only embeds, and the copy its helper returns is what the loop writes out
    src = CHECKPOINTED.replace("{USE}", "np.save(out, to_numpy(emb))")
    assert found(src, ("HPU005",)) == []


def test_the_same_copy_in_a_loop_that_trains_is_a_host_read():
    src = CHECKPOINTED.replace("{USE}", "np.save(out, to_numpy(emb))\n        emb.sum().backward()")
    assert found(src, ("HPU005",)) == [("HPU005", 35)]  # the call of the converter
