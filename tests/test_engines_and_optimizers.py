"""Where steps start in engines and optimizers, as the seventh held-out set showed them missing
(tests/data/real_code_notes.md): an optimizer whose base is a framework's own optimizer class, a
training engine's backward() and step(), a vLLM model runner's per-step methods, a model whose
forward() holds a decoding loop, a step compiled only under an option; and the values and guards
that decide whether a read there is a device read. Each has a look-alike that stays quiet.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source
from snippets import lint_project as lint


def found(src: str, select: tuple = ()) -> list:
    out = [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "run.py")]
    return [x for x in out if not select or x[0] in select]


FP16_OPTIMIZER = """
import torch
import habana_frameworks.torch.core as htcore


class BaseOptimizer(object):
    pass


class OverflowCheck:
    def has_overflow(self, params):
        flag = torch.zeros(1, device="hpu")
        for p in params:
            flag += p.grad.isinf().any()
        return bool(flag{READ})


class HalfOptimizer({BASE}):
    def __init__(self, params):
        self.params = params
        self.checker = OverflowCheck()

    def step(self):
        if self.checker.has_overflow(self.params):
            return
        for p in self.params:
            p.data.add_(p.grad, alpha=-0.1)
"""


def test_the_step_of_an_optimizer_built_on_a_frameworks_own_optimizer_base_runs_every_step():
    # DeepSpeed's fp16 and ZeRO optimizers derive from `DeepSpeedOptimizer(object)`: their step()
    # is called once per training step, and what it calls reads the overflow flag every step
    src = FP16_OPTIMIZER.replace("{BASE}", "BaseOptimizer").replace("{READ}", ".item()")
    assert found(src, ("HPU005",)) == [("HPU005", 15)]


def test_a_class_that_is_no_optimizer_keeps_its_step_to_its_callers():
    src = FP16_OPTIMIZER.replace("{BASE}", "object").replace("{READ}", ".item()")
    assert found(src, ("HPU005",)) == []


ENGINE = """
import torch
import habana_frameworks.torch.core as htcore


class Engine(torch.nn.Module):
    def __init__(self, module, optimizer):
        super().__init__()
        self.module = module
        self.optimizer = optimizer
        self.losses = None

    def forward(self, x):
        return self.module(x)

    def backward(self, loss):
        self.losses = loss.detach()
        loss.backward()

    def {NAME}(self):
        self.optimizer.step()
        htcore.mark_step()
        print("loss", self.losses.item())
"""


def test_a_training_engines_backward_and_step_run_every_step():
    # a module with its own backward() and step() (DeepSpeed's engine): the script calls both once
    # per step, so the loss read in step() is a host read every step
    assert found(ENGINE.replace("{NAME}", "step"), ("HPU005",)) == [("HPU005", 23)]


def test_a_modules_other_method_is_not_a_step():
    assert found(ENGINE.replace("{NAME}", "report"), ("HPU005",)) == []


RUNNER = """
import torch
import habana_frameworks.torch.core as htcore
from vllm.v1.worker.kv_connector_model_runner_mixin import KVConnectorModelRunnerMixin


class Runner(KVConnectorModelRunnerMixin):
    def __init__(self, model):
        self.model = model

    def {NAME}(self, requests):
        pooled = []
        for req in requests:
            hidden = self.model(req.input_ids.to("hpu"))
            htcore.mark_step()
            pooled.append(hidden[-1])
        pooled_cpu = [t.cpu() for t in pooled]
        return RunnerOutput(requests, pooled_cpu)


class RunnerOutput:
    def __init__(self, requests, pooled):
        self.requests = requests
        self.pooled = pooled
"""


def test_a_vllm_model_runners_execute_model_runs_its_own_body_every_engine_step():
    # the engine calls execute_model() once per step; its loop runs the model once per pooled
    # request, and the copies after the loop are made every engine step
    assert found(RUNNER.replace("{NAME}", "execute_model"), ("HPU005",)) == [("HPU005", 17)]


def test_a_runners_helper_nothing_calls_is_not_an_engine_step():
    assert found(RUNNER.replace("{NAME}", "pool_once"), ("HPU005",)) == []


CAPTIONER = """
import torch
import torch_xla.core.xla_model as xm


class Captioner(torch.nn.Module):
    def __init__(self, cell, head):
        super().__init__()
        self.cell = cell
        self.head = head

    def forward(self, batch):
        lengths, order = batch.caption_len.sort({SORT})
        decode_lengths = (lengths - 1).tolist()
        texts = batch.text[order]
        h = None
        for t in range(max(decode_lengths)):
            h = self.cell(texts[:, t], h)
            if self.head(h).argmax(-1).eq(0).all():
                break
        return h
"""


def test_a_forward_that_holds_a_decoding_loop_still_reads_once_per_batch():
    # torch's `dim=`/`descending=` keywords say `lengths` is a tensor (NumPy spells them `axis=`);
    # forward() runs once per training batch, so the read before the decoding loop is per step
    assert found(CAPTIONER.replace("{SORT}", "dim=0, descending=True"), ("HPU005",)) == [("HPU005", 14)]


def test_a_sort_without_torch_keywords_says_nothing_about_its_receiver():
    assert found(CAPTIONER.replace("{SORT}", ""), ("HPU005",)) == []


OPTIONAL_COMPILE = """
import torch
import habana_frameworks.torch.core as htcore


class Optimizer(torch.optim.Optimizer):
    def step(self, closure=None):
        norm = torch.stack([p.grad.norm() for p in self.param_groups[0]["params"]]).norm()
        if norm.item() > 1e4:
            return
        for p in self.param_groups[0]["params"]:
            p.data.add_(p.grad, alpha=-0.1)


class Engine:
    def __init__(self, params, enabled):
        self.optimizer = Optimizer(params, {})
        if enabled:
            self.optimizer.step = torch.compile(self.optimizer.step)
"""


def test_a_step_compiled_only_under_an_option_is_checked_in_lazy_mode_too():
    # the default path runs the step uncompiled on a lazy device: the read is a host sync there
    # (and a graph break when the option is on)
    got = found(OPTIONAL_COMPILE, ("HPU005", "HPU012"))
    assert ("HPU005", 9) in got and ("HPU012", 9) in got


def test_a_step_always_compiled_is_left_to_the_compile_rules():
    src = OPTIONAL_COMPILE.replace("        if enabled:\n            self.optimizer.step", "        self.optimizer.step")
    got = found(src, ("HPU005", "HPU012"))
    assert got == [("HPU012", 9)]


NORMS = """
import torch
import habana_frameworks.torch.core as htcore


class Optimizer(torch.optim.Optimizer):
    def step(self, closure=None):
        params = self.param_groups[0]["params"]
        biggest = max(p.grad.abs().max() for p in params)
        copies = torch.cat([p.grad.flatten().cpu() for p in params])
        print(copies.tolist()[:3])
        return float(biggest)
"""


def test_the_largest_of_a_generator_of_tensors_is_a_tensor_and_a_list_of_host_copies_is_host():
    # `max()` of the gradients' maxima is a device tensor read by float() every step; the list of
    # `.cpu()` copies is host data (the copies are the reads), so `.tolist()` of it reads nothing
    assert found(NORMS, ("HPU005",)) == [("HPU005", 10), ("HPU005", 12)]


EARLY_RETURN = """
import torch
import torch_xla.core.xla_model as xm


def sizes_match(sizes{TEST}):
    {GUARD}
    for other in sizes:
        if other != sizes[0]:
            return False
    return True


def evaluate(model, loader, device):
    for batch in loader:
        sizes = torch.tensor([batch.size(0)], device=device).repeat(4)
        if not sizes_match(sizes):
            continue
        model(batch.to(device))
        xm.mark_step()
"""


def test_an_early_return_on_the_target_device_keeps_the_rest_of_the_function_off_it():
    src = EARLY_RETURN.replace("{TEST}", "").replace("{GUARD}", "if xm.xla_device_hw(xm.xla_device()) == 'TPU' or True:\n        pass")
    # without the guard the comparison of device values is a host read every batch
    assert found(src, ("HPU008",)) == [("HPU008", 10)]
    guarded = EARLY_RETURN.replace("{TEST}", "").replace("{GUARD}", "if is_xla():\n        return True")
    guarded = guarded.replace("def sizes_match", "def is_xla():\n    return True\n\n\ndef sizes_match")
    assert found(guarded, ("HPU008",)) == []


def test_a_loader_built_in_another_module_that_wraps_loaders_for_xla_may_mark_the_steps(tmp_path, capsys, monkeypatch):
    files = {
        "build.py": """
            import torch
            import torch_xla.core.xla_model as xm
            import torch_xla.distributed.parallel_loader as pl


            def build_loader(dataset):
                loader = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=True)
                return pl.MpDeviceLoader(loader, xm.xla_device())
        """,
        "trainer.py": """
            import torch_xla.core.xla_model as xm


            class Trainer:
                def fit(self):
                    for batch in self.train_loader:
                        loss = self.model(batch).sum()
                        loss.backward()
                        self.optimizer.step()
        """,
    }
    assert lint(tmp_path, files, capsys, monkeypatch) == []
    # without the factory, nothing in the project marks the steps
    files["build.py"] = files["build.py"].replace("return pl.MpDeviceLoader(loader, xm.xla_device())", "return loader")
    assert lint(tmp_path, files, capsys, monkeypatch) == ["trainer.py:7:9:HPU004"]


HOST_NAMES = """
import torch
import habana_frameworks.torch.core as htcore


def plan(runner, positions, indices_{SUFFIX}):
    first = indices_{SUFFIX}[0].item()
    return runner.blocks[first:]


def step(runner, model, batch):
    out = model(batch)
    htcore.mark_step()
    return plan(runner, out, runner.index_buffer(out))


def run(runner, model, loader):
    for batch in loader:
        step(runner, model, batch)
"""


def test_item_of_a_value_named_for_the_host_is_not_a_device_read():
    assert found(HOST_NAMES.replace("{SUFFIX}", "cpu"), ("HPU005",)) == []
    assert found(HOST_NAMES.replace("{SUFFIX}", "dev"), ("HPU005",)) == [("HPU005", 7)]


PACK = """
import torch


class Attention(torch.nn.Module):
    def forward(self, keys, {NAME}):
        lengths = {NAME}.sum(-1)
        return pad(keys.view(keys.shape[0], -1), {NAME}), lengths


def pad(tensor, {NAME}):
    width = {NAME}.shape[1]
    return tensor[{NAME}], width
"""


def test_a_tensor_named_as_a_mask_used_as_an_index_is_a_boolean_mask():
    assert found(PACK.replace("{NAME}", "sequence_mask"), ("HPU006",)) == [("HPU006", 13)]


def test_a_bare_mask_name_may_be_an_index_tensor():
    assert found(PACK.replace("{NAME}", "index"), ("HPU006",)) == []


HELPER_COMPILE = """
import torch


def _compiled_step(step):
    return torch.compile(step)


def evaluate(model, loader):
    outs = []
    for batch in loader:
        out = model(batch)
        outs.append(out.cpu())
    return outs
"""


def test_a_compile_in_a_helper_does_not_make_the_whole_file_eager():
    # the helper compiles what its callers give it when they choose; the evaluation loop in the
    # same file still runs in lazy mode, where each batch's copy is a host read
    assert found(HELPER_COMPILE, ("HPU005",)) == [("HPU005", 13)]
    at_top = HELPER_COMPILE.replace("def _compiled_step(step):\n    return torch.compile(step)",
                                    "def main(step):\n    return torch.compile(step)")
    assert found(at_top, ("HPU005",)) == []


FLASH = """
import torch
import habana_frameworks.torch.core as htcore


class Model(torch.nn.Module):
    def forward(self, x, attention_mask):
        if self.config._attn_implementation == "{IMPL}":
            attention_mask = attention_mask if (attention_mask is not None and (attention_mask.unsqueeze(1) == 0).any()) else None
        return self.layer(x, attention_mask)
"""


def test_a_flash_attention_2_branch_is_cuda_only():
    # HF models' FlashAttention-2 path runs CUDA kernels only: off a lazy device's path
    assert found(FLASH.replace("{IMPL}", "flash_attention_2"), ("HPU008",)) == []
    assert found(FLASH.replace("{IMPL}", "sdpa"), ("HPU008",)) == [("HPU008", 9)]


DEAD = """
import torch
import habana_frameworks.torch.core as htcore


class Model(torch.nn.Module):
    def forward(self, x, position_ids=None):
        ignore_cache_position = {VALUE}
        if ignore_cache_position is False:
            cache_position = torch.arange(x.shape[1], device=x.device)
            if position_ids is None and cache_position:
                position_ids = cache_position.unsqueeze(0)
        return self.layer(x, position_ids)
"""


def test_a_branch_a_bool_literal_rules_out_is_dead_code():
    # `ignore_cache_position = True  # Ignoring cache position for HPU`: the branch never runs
    assert found(DEAD.replace("{VALUE}", "True"), ("HPU008",)) == []
    assert found(DEAD.replace("{VALUE}", "False"), ("HPU008",)) == [("HPU008", 11)]
