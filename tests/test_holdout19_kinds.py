"""Kinds the nineteenth held-out set showed wrong, once its misses were read
(tests/data/real_code_notes.md). Each has a look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found

# a validation helper that looks at the first batch of a marking loader only: the loop's body
# ends with `break`, so it runs once per call, not once per step
PEEK = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def preview(model, loader, device, writer):
    model.eval()
    for i, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
        pred = model(x)
        writer.add(pred[0].cpu().numpy(), y[0].cpu().numpy())
        print(float(pred.sum().item()))
        {END}
"""


def test_a_loop_whose_body_ends_in_break_runs_once():
    assert found(PEEK.replace("{END}", "break"), ("HPU005",)) == []


def test_a_break_that_a_continue_can_skip_keeps_the_loop():
    src = PEEK.replace("        pred = model(x)\n", "        if y.numel() == 0:\n            continue\n"
                       "        pred = model(x)\n").replace("{END}", "break")
    assert found(src, ("HPU005",)) == [("HPU005", 13), ("HPU005", 13), ("HPU005", 14)]


def test_without_the_break_every_batch_reads():
    assert found(PEEK.replace("{END}", "pass"), ("HPU005",)) == [("HPU005", 11), ("HPU005", 11), ("HPU005", 12)]


# gradients summed on the device over a few batches, then every entry of the dict replaced by a
# CPU copy; the caller's per-candidate loop (a step loop: it marks a step) reads the host copies
GRADS = """
import torch
import torch_xla.core.xla_model as xm
from collections import OrderedDict


def average_grads(model, batches):
    sums = OrderedDict()
    for name, p in model.named_parameters():
        sums[name] = torch.zeros_like(p)
    for batch in batches:
        model(batch).sum().backward()
        for name, p in model.named_parameters():
            sums[name] += p.grad
    xm.mark_step()
    {MOVE}
    return sums


def score(model, batches, candidates):
    grads = average_grads(model, batches)
    out = []
    for name, index in candidates:
        g = grads[name].flatten()[index].item()
        out.append(g)
        xm.mark_step()
    return out
"""


def test_a_dict_whose_every_entry_was_copied_to_the_cpu_holds_host_tensors():
    src = GRADS.replace("{MOVE}", "for name in sums:\n        sums[name] = (sums[name] / 4).cpu()")
    assert found(src, ("HPU005",)) == []


def test_the_same_dict_left_on_the_device_is_read_every_pass():
    assert found(GRADS.replace("{MOVE}", "pass"), ("HPU005",)) == [("HPU005", 24)]


def test_a_store_under_a_test_replaces_only_some_entries():
    src = GRADS.replace("{MOVE}", "for name in sums:\n        if name.endswith('bias'):\n"
                        "            sums[name] = sums[name].cpu()")
    assert found(src, ("HPU005",)) == [("HPU005", 26)]


# a conditional expression on the device: the `.item()` side runs only off the TPU
LOSS_SUM = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, use_tpu):
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer)
        total += {READ}
    return total
"""


def test_a_read_on_the_off_device_side_of_a_conditional_expression_is_quiet():
    assert found(LOSS_SUM.replace("{READ}", "loss.item() if not use_tpu else 0.0"), ("HPU005",)) == []


def test_a_read_on_the_device_side_is_reported():
    assert found(LOSS_SUM.replace("{READ}", "loss.item() if use_tpu else 0.0"), ("HPU005",)) == [("HPU005", 12)]


# a scheduler step annotated `timestep: int` that its callers pass a device tensor, and that
# copies it to the CPU for a lookup table kept there: the annotation is wrong, the copy is real
SCHED = """
import torch
import torch_xla.core.xla_model as xm


def step_with_logprob(table, model_output: torch.Tensor, timestep: int, sample: torch.Tensor):
    alpha = table.gather(0, timestep.{COPY}).to(sample.device)
    return sample - alpha.view(-1, 1) * model_output


def sample(model, table, x, timesteps):
    device = xm.xla_device()
    for t in timesteps:
        ts = torch.full((x.shape[0],), t, device=device, dtype=torch.long)
        out = model(x, ts)
        x = step_with_logprob(table, out, ts, x)
        xm.mark_step()
    return x
"""


def test_a_parameter_annotated_int_but_copied_with_cpu_is_a_tensor():
    assert found(SCHED.replace("{COPY}", "cpu()"), ("HPU005",)) == [("HPU005", 7)]


def test_an_int_parameter_used_as_one_stays_a_number():
    assert found(SCHED.replace("timestep.{COPY}", "torch.tensor([timestep])"), ("HPU005",)) == []


# a print in the batch loop under a test on the epoch counter: every batch of that epoch prints
EPOCH_LOG = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.mark_step()
            if {TEST}:
                print(loss)
"""


def test_an_interval_on_the_epoch_counter_does_not_thin_the_batches():
    assert found(EPOCH_LOG.replace("{TEST}", "epoch % 10 == 0"), ("HPU005",)) == [("HPU005", 14)]


def test_an_interval_on_the_step_counter_does():
    assert found(EPOCH_LOG.replace("{TEST}", "step % 10 == 0"), ("HPU005",)) == []


# a flag that a line above derives from a device test: `checks = ... and not use_tpu`
CHECKS = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, cfg):
    use_tpu = cfg.device.startswith("xla")
    {FLAG}
    for x, y in loader:
        x = x.to(xm.xla_device())
        if checks and torch.isnan(x).any():
            continue
        loss = model(x).mean()
        if {SKIP}:
            print(f"skipping a bad loss {loss.item()}")
            continue
        loss.backward()
        xm.optimizer_step(optimizer)
"""


def test_a_flag_derived_from_a_device_test_guards_like_the_test():
    src = CHECKS.replace("{FLAG}", "checks = bool(cfg.checks) and not use_tpu").replace("{SKIP}", "False")
    assert found(src, ("HPU008",)) == []


def test_a_flag_that_is_not_a_device_test_does_not():
    src = CHECKS.replace("{FLAG}", "checks = bool(cfg.checks)").replace("{SKIP}", "False")
    assert found(src, ("HPU008",)) == [("HPU008", 11)]


def test_a_read_in_the_branch_a_bad_loss_takes_is_rare():
    # the test itself reads the loss every step (HPU008); the message's `.item()` runs on the
    # step that went wrong only
    src = CHECKS.replace("{FLAG}", "checks = bool(cfg.checks) and not use_tpu").replace("{SKIP}", "not torch.isfinite(loss)")
    assert found(src, ("HPU005", "HPU008")) == [("HPU008", 14)]


def test_a_read_on_the_good_branch_is_every_step():
    src = CHECKS.replace("{FLAG}", "checks = bool(cfg.checks) and not use_tpu").replace("{SKIP}", "torch.isfinite(loss)")
    assert found(src, ("HPU005", "HPU008")) == [("HPU008", 14), ("HPU005", 15)]


# an epoch loop around the batch loop, with its own optimizer step for the last partial
# accumulation: the epoch is not a step, so the read after the batch loop is once an epoch
EPOCH = """
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, epochs, accum):
    for epoch in range(epochs):
        total = torch.zeros((), device=xm.xla_device())
        for step, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(model(x), y)
            (loss / accum).backward()
            total = total + loss.detach()
            if (step + 1) % accum == 0:
                xm.optimizer_step(optimizer)
                optimizer.zero_grad()
        {FLUSH}
        print("epoch loss", total.item())
"""


def test_an_epochs_flush_of_the_last_accumulation_does_not_make_it_a_step():
    src = EPOCH.replace("{FLUSH}", "if len(loader) % accum:\n            xm.optimizer_step(optimizer)")
    assert found(src, ("HPU005",)) == []


def test_a_loop_whose_only_training_is_its_own_step_is_one():
    # the same read in a loop over groups of micro-batches (not a data loader) that steps once a
    # group: each pass is one step
    src = EPOCH.replace("for epoch in range(epochs):", "for pairs in groups:").replace(
        "epochs, accum", "groups, accum").replace("enumerate(loader)", "enumerate(pairs)").replace(
        "{FLUSH}", "xm.optimizer_step(optimizer)").replace(
        "            if (step + 1) % accum == 0:\n                xm.optimizer_step(optimizer)\n"
        "                optimizer.zero_grad()\n", "")
    assert found(src, ("HPU005",)) == [("HPU005", 14)]


# classifier-free guidance doubles the slice the timestep counter picks: `torch.cat([x] * 2)`
GUIDED = """
import torch
import torch_xla.core.xla_model as xm


def train(unet, sample, optimizer, steps, guided):
    for j in range(steps):
        if guided:
            pred = unet(torch.cat({LIST}))
        else:
            pred = unet(sample["latents"][:, j])
        pred.mean().backward()
        optimizer.step()
        xm.mark_step()
"""


def test_an_element_a_torch_op_takes_in_a_list_is_used_with_tensors():
    assert found(GUIDED.replace("{LIST}", '[sample["latents"][:, j]] * 2'), ("HPU001",)) == \
        [("HPU001", 9), ("HPU001", 11)]


def test_a_list_whose_element_the_counter_does_not_pick_stays_quiet():
    assert found(GUIDED.replace("{LIST}", "[sample[0]] * 2"), ("HPU001",)) == [("HPU001", 11)]


def test_an_infinity_norm_branch_is_a_configurations_not_a_bad_values():
    # `isinf` of the norm type picks the infinity norm: the branch computes and goes on, every step
    src = """
import torch
import torch_xla.core.xla_model as xm


def clip(params, max_norm, norm_type):
    grads = [p.grad for p in params]
    if torch.isinf(torch.tensor(float(norm_type))):
        total = max(g.abs().max() for g in grads)
        total = float(total)
    else:
        total = torch.norm(torch.stack([torch.norm(g) for g in grads]))
    return total


def train(model, loader, optimizer):
    for x in loader:
        model(x.to(xm.xla_device())).mean().backward()
        clip(model.parameters(), 1.0, "inf")
        xm.optimizer_step(optimizer)
        xm.mark_step()
"""
    assert found(src, ("HPU005",)) == [("HPU005", 10)]


# (seventeenth set) a PPO step that generates its rollouts in mini-batches: the mini-batch loop's
# passes are parts of one step, the same offsets every step
ROLLOUT = """
import torch
import torch_xla.core.xla_model as xm


def train(policy, ppo, loader, cfg):
    batches = iter(loader)
    for step in range(cfg.max_steps):
        batch = next(batches)
        responses = []
        for idx in range(0, cfg.batch_size, cfg.{SIZE}):
            chunk = batch["input_ids"][idx:idx + cfg.{SIZE}]
            responses.append(policy.generate(chunk.to(xm.xla_device())))
        ppo.step(batch, responses)
"""


def test_a_mini_batch_loop_inside_a_step_takes_the_same_offsets_every_step():
    assert found(ROLLOUT.replace("{SIZE}", "mini_batch_size"), ("HPU001",)) == []


def test_a_loop_over_chunks_of_another_size_is_a_loop_of_steps():
    assert found(ROLLOUT.replace("{SIZE}", "chunk_size"), ("HPU001",)) == [("HPU001", 12)]


# (seventeenth set) a module's forward that prepends virtual-token columns to the batch's mask:
# the dict is the caller's batch, a new one every step
PREFIX = """
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm


class Encoder(nn.Module):
    def __init__(self, body, n_virtual):
        super().__init__()
        self.body = body
        self.n_virtual = n_virtual

    def forward(self, features):
        mask = features["attention_mask"]
        prefix = torch.ones(mask.shape[0], self.n_virtual, device=mask.device)
        features["attention_mask"] = torch.cat((prefix, mask), dim=1)
        return self.body(**features)


def train(model, loader, optimizer):
    for batch in loader:
        model(batch).mean().backward()
        optimizer.step()
        xm.mark_step()
"""


def test_a_forward_extending_its_batch_dict_grows_nothing_across_steps():
    assert found(PREFIX, ("HPU003",)) == []


def test_a_mini_batch_loop_that_steps_an_optimizer_is_a_loop_of_steps():
    # PPO's optimisation epochs: each mini-batch is a step of its own (the missing mark_step is
    # the mini-batch loop's), so the KL test after it runs once an epoch, not once a step
    src = """
import torch
import torch_xla.core.xla_model as xm


def update(agent, optimizer, b_obs, epochs, batch_size, minibatch_size, target_kl):
    for epoch in range(epochs):
        for start in range(0, batch_size, minibatch_size):
            loss, approx_kl = agent.loss(b_obs[start:start + minibatch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if target_kl is not None and approx_kl > target_kl:
            break
"""
    assert found(src, ("HPU004", "HPU008")) == [("HPU004", 8)]
