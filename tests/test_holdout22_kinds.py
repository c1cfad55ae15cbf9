"""Kinds the twentieth and twenty-second held-out sets showed wrong, once their misses were read
(tests/data/real_code_notes.md). Each has a look-alike, or the hazard it must keep, beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found, lint_project

# a threshold-sweep metric kept in NumPy arrays, updated with device counts on every validation
# batch of an XLA evaluation loop
SWEEP = """
import numpy as np
import torch
import torch_xla.core.xla_model as xm


class Sweep:
    def __init__(self, bins):
        self.bins = bins
        self.hits = np.zeros(bins + 1)
        self.total = torch.zeros(bins + 1, device=xm.xla_device())

    def update(self, pred, target):
        for b in range(self.bins + 1):
            hit = ((pred > b / self.bins).float() * target).sum()
            {UPDATE}


class Runner:
    def __init__(self, model):
        self.device = xm.xla_device()
        self.model = model.to(self.device)
        self.sweep = Sweep(10)

    def validate(self, loader):
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.sweep.update(self.model(x), y)
            xm.mark_step()
"""


def test_a_numpy_element_updated_in_place_with_a_device_count_reads_it():
    assert found(SWEEP.replace("{UPDATE}", "self.hits[b] += hit"), ("HPU005",)) == [("HPU005", 16)]


def test_a_whole_numpy_array_updated_in_place_with_a_device_tensor_reads_it():
    src = SWEEP.replace("{UPDATE}", "hist = np.zeros(self.bins + 1)\n            hist += hit.expand(self.bins + 1)")
    assert found(src, ("HPU005",)) == [("HPU005", 17)]


def test_a_device_tensor_updated_in_place_stays_on_the_device():
    assert found(SWEEP.replace("{UPDATE}", "self.total[b] += hit"), ("HPU005",)) == []


def test_a_python_number_accumulating_a_device_count_is_no_read():
    # (`total += hit` makes `total` a tensor: nothing is copied)
    src = SWEEP.replace("{UPDATE}", "total = 0\n            total += hit")
    assert found(src, ("HPU005",)) == []


# an evaluation loop through a metric logger's generator: it calls the model every batch and a
# metrics helper whose per-image loop runs a perceptual network on each image of the batch
METRICS = {
    "metrics.py": """
        import torch


        class Perceptual(torch.nn.Module):
            def forward(self, a, b):
                return (a - b).abs().mean()


        _net = Perceptual()


        def perceptual(img1, img2):
            value = 0
            for i in range(img1.shape[0]):
                value += _net(img1[i], img2[i])
            return value / img1.shape[0]


        def psnr(img1, img2):
            a = img1.cpu().numpy()
            b = img2.cpu().numpy()
            return float(((a - b) ** 2).mean())


        def compute(img1, img2):
            return {"psnr": psnr(img1, img2), "lpips": perceptual(img1, img2)}
    """,
    "logger.py": """
        class Logger:
            def log_every(self, iterable, every):
                for i, obj in enumerate(iterable):
                    yield obj
                    if i % every == 0:
                        print(i)
    """,
    "evaluate.py": """
        import torch
        from logger import Logger
        from metrics import compute


        class Net(torch.nn.Module):
            def forward(self, x):
                return x


        def evaluate(model, loader, device):
            log = Logger()
            with torch.no_grad():
                for batch in log.log_every(loader, 10):
                    x = batch["x"].to(device)
                    y = batch["y"].to(device)
                    pred = model(x)
                    scores = compute(y, pred)
                    print(scores)


        def main(loader, device):
            evaluate(Net().to(device), loader, device)
    """,
}


def test_a_per_image_loop_of_a_helper_called_per_batch_is_no_step_loop(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, METRICS, capsys, monkeypatch)
    # the batch loop is the step loop: the metrics' host copies are per step, and the per-image
    # counter is unrolled into each step's graph (no HPU001 at metrics.py:16)
    assert got == ["metrics.py:21:9:HPU005", "metrics.py:22:9:HPU005"]


def test_the_same_per_image_loop_called_once_outside_any_loop_still_steps(tmp_path, capsys, monkeypatch):
    files = dict(METRICS)
    files["evaluate.py"] = """
        import torch
        from metrics import perceptual


        def main(a, b, device):
            print(perceptual(a.to(device), b.to(device)).item())
    """
    got = lint_project(tmp_path, files, capsys, monkeypatch)
    assert "metrics.py:16:23:HPU001" in got


# a sampling loop that calls its per-step update through a parameter whose default is the
# project's function: the function's parameters are what the loop passes
SAMPLE_FN = """
import torch


def default_step(model, x, t):
    mean = model(x, t)
    noise = torch.randn_like(x)
    noise[t == 0] = 0
    return mean + noise


class Diffusion(torch.nn.Module):
    def forward(self, x, t):
        return x

    def sample(self, x, sample_fn=default_step):
        for i in reversed(range(10)):
            t = torch.full((x.shape[0],), i, device=x.device, dtype=torch.long)
            x = sample_fn(self, x, t)
        return x
"""


def test_a_parameter_defaulting_to_a_project_function_passes_its_arguments_to_it():
    assert found(SAMPLE_FN, ("HPU006",)) == [("HPU006", 8)]


def test_the_same_store_with_a_python_number_index_is_no_mask():
    assert found(SAMPLE_FN.replace("noise[t == 0] = 0", "noise[0] = 0"), ("HPU006",)) == []


# a rollout inside the update loop of an actor-critic trainer: each pass runs the policy on the
# stored observation and steps the environments with its action
ROLLOUT = """
import torch


class Storage:
    def __init__(self, n, device):
        self.n = n
        self.obs = torch.zeros(n + 1, 4, device=device)
        self.rewards = torch.zeros(n, 1, device=device)
        self.step = 0

    def insert(self, obs, reward):
        self.obs[self.step + 1].copy_(obs)
        self.rewards[self.step].copy_(reward)
        self.step = {NEXT}


def main(policy, agent, envs, n, updates, device):
    store = Storage(n, device)
    for j in range(updates):
        for step in range(n):
            with torch.no_grad():
                action = policy.act(store.obs[step])
            obs, reward, done, info = {STEP}
            store.insert(obs, reward)
        value = policy.get_value(store.obs[-1])
        agent.update(store, value)
"""


def test_a_rollout_loop_that_steps_environments_is_a_step_loop_inside_the_update_loop():
    src = ROLLOUT.replace("{NEXT}", "(self.step + 1) % self.n").replace("{STEP}", "envs.step(action)")
    assert found(src, ("HPU001",)) == [("HPU001", 13), ("HPU001", 14), ("HPU001", 23)]


def test_a_counter_attribute_that_wraps_with_modulo_counts_calls():
    src = ROLLOUT.replace("{NEXT}", "(self.step + 1) % self.n").replace("{STEP}", "envs.step(action)")
    assert ("HPU001", 13) in found(src, ("HPU001",))


def test_a_counter_attribute_reset_every_call_counts_nothing():
    src = ROLLOUT.replace("{NEXT}", "0").replace("{STEP}", "envs.step(action)")
    assert found(src, ("HPU001",)) == [("HPU001", 23)]


def test_an_environment_loop_that_runs_no_model_is_no_step_loop():
    src = ROLLOUT.replace("{NEXT}", "(self.step + 1) % self.n").replace("{STEP}", "envs.step(action)").replace(
        "action = policy.act(store.obs[step])", "action = torch.randint(0, 2, (1,))")
    assert found(src, ("HPU001",)) == []


# a replay batch's episode ends used as a boolean index in a DQN loss
DQN = """
import torch
import torch_xla.core.xla_model as xm


def dqn_loss(net, target_net, batch, gamma):
    states, actions, rewards, {NAME}, next_states = batch
    q = net(states).gather(1, actions.unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        nxt = target_net(next_states).max(1)[0]
        nxt[{NAME}] = 0.0
    return ((q - (nxt * gamma + rewards)) ** 2).mean()


def train(net, target_net, loader, opt):
    device = xm.xla_device()
    for batch in loader:
        batch = [b.to(device) for b in batch]
        loss = dqn_loss(net, target_net, batch, 0.99)
        loss.backward()
        opt.step()
        xm.mark_step()
"""


def test_an_episode_end_index_is_a_boolean_mask():
    assert found(DQN.replace("{NAME}", "dones"), ("HPU006",)) == [("HPU006", 11)]


def test_an_index_with_another_name_may_be_positions():
    assert found(DQN.replace("{NAME}", "picks"), ("HPU006",)) == []


# a Lightning module whose train_dataloader() returns what a private method of the class builds
LIGHTNING = """
import torch
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader
import pytorch_lightning as pl


class DQN(pl.LightningModule):
    def __init__(self, dataset, batch_size):
        super().__init__()
        self.dataset = dataset
        self.batch_size = batch_size

    def training_step(self, batch, i):
        return self(batch).sum()

    def __loader(self):
        loader = DataLoader(dataset=self.dataset, batch_size=self.batch_size{DROP})
        return loader

    def train_dataloader(self):
        return self.__loader()
"""


def test_a_training_loader_a_private_method_builds_for_train_dataloader_keeps_its_short_batch():
    assert found(LIGHTNING.replace("{DROP}", ""), ("HPU007",)) == [("HPU007", 18)]


def test_the_same_loader_with_drop_last_is_quiet():
    assert found(LIGHTNING.replace("{DROP}", ", drop_last=True"), ("HPU007",)) == []


# an evaluation rollout that collects the sampled actions in a list and rebuilds a tensor from it
# every step
ACTIONS = """
import torch


def rollout(model, env, device):
    actions = []
    state = torch.zeros(1, 4, device=device)
    while True:
        sampled = model(state)
        actions += [{ITEM}]
        state, reward, done = env.step(int(sampled.argmax()))
        if done:
            break
        history = torch.tensor(actions, dtype=torch.long).to(device)
        state = state + history.sum()
"""


def test_a_list_extended_with_device_tensors_is_read_by_torch_tensor():
    assert ("HPU005", 14) in found(ACTIONS.replace("{ITEM}", "sampled"), ("HPU005",))


def test_a_list_extended_with_python_numbers_is_not():
    assert ("HPU005", 14) not in found(ACTIONS.replace("{ITEM}", "len(actions)"), ("HPU005",))


# a speculative decoder's helper appends the accepted tokens to the ids it was given and returns
# them; the decoding loop assigns the result back to the name it passed
ACCEPT = """
import torch


def accept(input_ids, candidates, best, n):
    input_ids = torch.cat([input_ids, candidates[None, best, : n + 1]], dim=-1)
    return input_ids, n + 1


def generate(model, input_ids, steps):
    total = 0
    for _ in range(steps):
        candidates = model(input_ids).argmax(-1)
        {CALL}
        total += n
    return input_ids
"""


def test_a_parameter_grown_and_returned_to_a_step_loop_that_passes_it_back_is_an_accumulator():
    src = ACCEPT.replace("{CALL}", "input_ids, n = accept(input_ids, candidates, 0, 2)")
    assert found(src, ("HPU003",)) == [("HPU003", 6)]


def test_the_same_helper_whose_result_the_loop_keeps_apart_grows_nothing():
    # (`out` is new every pass: the loop passes the same `input_ids` each time)
    src = ACCEPT.replace("{CALL}", "out, n = accept(input_ids, candidates, 0, 2)")
    assert found(src, ("HPU003",)) == []


# a sampler's optional top-k filter (a boolean-mask store) under `if top_k is not None:`; the
# project's only caller leaves top_k at its default
TOP_K = """
import torch


def top_k_logits(logits, k):
    v, _ = torch.topk(logits, k)
    out = logits.clone()
    out[out < v[:, [-1]]] = -float("inf")
    return out


def sample(model, x, steps, top_k=None):
    for _ in range(steps):
        logits = model(x)[:, -1, :]
        if top_k is not None:
            logits = top_k_logits(logits, top_k)
        x = torch.multinomial(torch.softmax(logits, -1), 1)
    return x


def evaluate(model, x):
    return sample(model, x, 10{ARGS})
"""


def test_a_helper_under_an_optional_parameter_no_caller_gives_never_runs():
    assert found(TOP_K.replace("{ARGS}", ""), ("HPU006",)) == []


def test_the_same_helper_runs_when_a_caller_gives_the_parameter():
    assert found(TOP_K.replace("{ARGS}", ", top_k=5"), ("HPU006",)) == [("HPU006", 8)]


def test_a_caller_that_spreads_keywords_may_give_it():
    src = TOP_K.replace("def evaluate(model, x):", "def evaluate(model, x, **kw):").replace("{ARGS}", ", **kw")
    assert found(src, ("HPU006",)) == [("HPU006", 8)]


def test_a_models_forward_keeps_its_optional_branches():
    # (a framework calls `forward` with whatever the batch holds: `model(**batch)`)
    src = """
import torch


def merge(ids, embeds, token):
    rows, cols = torch.where(ids == token)
    embeds[rows, cols] = 0.0
    return embeds


class Vlm(torch.nn.Module):
    def forward(self, ids, embeds, pixel_values=None):
        if pixel_values is not None:
            embeds = merge(ids, embeds, 5)
        return embeds


def step(model, ids, embeds, opt):
    model(ids, embeds).sum().backward()
    opt.step()
"""
    assert found(src, ("HPU006",)) == [("HPU006", 6)]


# a helper wraps each loader in a marking loader; only the training loader feeds the training loop
WRAPPED = """
import torch
from torch.utils import data
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def wrap(loader, device):
    return pl.MpDeviceLoader(loader, device)


def main(train_set, test_set, model, opt):
    device = xm.xla_device()
    train_loader = data.DataLoader(train_set, batch_size=8{DROP})
    test_loader = data.DataLoader(test_set, batch_size=8)

    def train_epoch(loader):
        for x, y in loader:
            model(x).sum().backward()
            xm.optimizer_step(opt)

    def evaluate(loader):
        with torch.no_grad():
            for x, y in loader:
                model(x)

    train_epoch(wrap(train_loader, device))
    evaluate(wrap(test_loader, device))
"""


def test_a_wrapped_evaluation_loader_does_not_feed_the_training_loop():
    assert found(WRAPPED.replace("{DROP}", ", drop_last=True"), ("HPU007",)) == []


def test_the_wrapped_training_loader_still_does():
    assert found(WRAPPED.replace("{DROP}", ""), ("HPU007",)) == [("HPU007", 14)]


def test_torch_tensor_of_a_list_on_the_side_where_it_is_empty_reads_nothing():
    src = """
import torch


def update(model, x, steps):
    for _ in range(steps):
        parts = []
        parts.append(model(x).mean())
        parts.append(x.std())
        {LINE}
        x = x + b.sum()
    return x
"""
    assert found(src.replace("{LINE}", "b = torch.stack(parts) if len(parts) > 0 else torch.tensor(parts)"),
                 ("HPU005",)) == []
    assert found(src.replace("{LINE}", "b = torch.tensor(parts)"), ("HPU005",)) == [("HPU005", 10)]


# a video pipeline: a restart loop around the denoising loop, then a chunked decode in a helper
# called once after it
DECODE_AFTER = """
import torch


class VideoPipeline:
    def __init__(self, unet, vae):
        self.unet = unet
        self.vae = vae

    def decode_latents(self, latents, chunk=16):
        frames = []
        for i in range(0, latents.shape[0], chunk):
            frames.append(self.vae.decode(latents[i : i + chunk]))
        return torch.cat(frames)

    def __call__(self, latents, timesteps, restarts=1):
        for r in range(restarts):
            for i, t in enumerate(timesteps):
                latents = latents - self.unet(latents, t)
        {DECODE}
"""


def test_a_decode_loop_after_a_denoising_loop_nested_in_a_restart_loop_finishes_the_run():
    assert found(DECODE_AFTER.replace("{DECODE}", "return self.decode_latents(latents)"), ("HPU001",)) == []


def test_the_denoising_loop_inside_the_restart_loop_still_steps():
    src = DECODE_AFTER.replace("self.unet(latents, t)", "self.unet(latents, timesteps[i])").replace(
        "{DECODE}", "return self.decode_latents(latents)")
    assert found(src, ("HPU001",)) == [("HPU001", 19)]


def test_a_single_name_assigned_back_from_the_helper_is_fed_back_too():
    src = ACCEPT.replace("    return input_ids, n + 1", "    return input_ids").replace(
        "{CALL}", "input_ids = accept(input_ids, candidates, 0, 2)\n        n = 1")
    assert found(src, ("HPU003",)) == [("HPU003", 6)]
