"""Kinds the twenty-third held-out set showed wrong, once its misses were read
(tests/data/real_code_notes.md, round 24). Each has a look-alike, or the hazard it must keep,
beside it.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

from snippets import found, lint_project

# a replay agent that trains every few environment steps: the interval test is how often it
# trains, not a logging interval
AGENT = """
import torch
from torch import nn


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self):
        self.net = QNet()
        self.opt = torch.optim.Adam(self.net.parameters())

    def learn(self, memory):
        states, targets = memory.sample(32)
        loss = ((self.net(states) - targets) ** 2).mean(1)
        self.opt.zero_grad()
        loss.mean().backward()
        self.opt.step()
        memory.update_priorities(loss.detach().cpu().numpy())

    def report(self, memory):
        states, targets = memory.sample(32)
        print(((self.net(states) - targets) ** 2).mean().item())


def main(env, memory, steps, every):
    agent = Agent()
    state = env.reset()
    for t in range(steps):
        action = agent.net(state).argmax()
        state, reward, done = env.step(action)
        memory.append(state, action, reward, done)
        if t % every == 0:
            agent.{CALL}(memory)
"""


def test_a_call_that_trains_under_an_interval_test_runs_every_few_steps():
    assert found(AGENT.replace("{CALL}", "learn"), ("HPU005",)) == [("HPU005", 26)]


def test_a_call_that_only_reports_under_an_interval_test_stays_a_logging_interval():
    assert found(AGENT.replace("{CALL}", "report"), ("HPU005",)) == []


# a distributional projection: two comparisons combined with `*` (or `&`) are a boolean mask
PROJECT = """
import torch


def learn(net, opt, loader, support):
    for states, returns in loader:
        b = (returns.unsqueeze(1) - support[0]) / 0.5
        lo, hi = b.floor().long(), b.ceil().long()
        lo[{MASK}] -= 1
        loss = -(net(states).log_softmax(-1) * lo.float()).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_two_device_comparisons_multiplied_index_a_boolean_mask_store():
    assert found(PROJECT.replace("{MASK}", "(hi > 0) * (lo == hi)"), ("HPU006",)) == [("HPU006", 9)]


def test_two_device_comparisons_combined_with_and_index_a_boolean_mask_store():
    assert found(PROJECT.replace("{MASK}", "(hi > 0) & (lo == hi)"), ("HPU006",)) == [("HPU006", 9)]


def test_a_comparison_times_a_count_is_an_integer_index_not_a_mask():
    assert found(PROJECT.replace("{MASK}", "(hi > 0).long() * 2"), ("HPU006",)) == []


# speculative decoding: each round verifies with the target model, then the update calls the
# draft model's tree expansion, whose own loop over a fixed depth runs inside that one round
DRAFT = {
    "draft.py": """
        import torch
        from torch import nn


        class Drafter(nn.Module):
            def __init__(self, layer, depth):
                super().__init__()
                self.layer = layer
                self.depth = depth

            def forward(self, x):
                return self.layer(x)

            def expand(self, hidden, ids):
                mask = torch.ones(1, 1)
                for i in range(self.depth):
                    hidden = self(hidden)
                    mask = torch.cat((mask, torch.ones(1, 1)), dim=1)
                parents = hidden.argmax(-1)
                parents[parents == 0] = -1
                order = parents.tolist()
                return order, mask
    """,
    "decode.py": """
        import torch
        from torch import nn
        from draft import Drafter


        def verify(model, ids):
            return model(ids)


        def update(ids, logits, drafter, hidden):
            ids = torch.cat([ids, logits.argmax(-1)[:, -1:]], dim=1)
            tree, mask = drafter.expand(hidden, ids)
            return ids, tree, mask


        def generate(model, ids, hidden, n):
            drafter = Drafter(nn.Linear(16, 16), 4)
            for _ in range(n):
                logits = verify(model, ids)
                ids, tree, mask = update(ids, logits, drafter, hidden)
            return ids
    """,
}


def test_a_draft_expansion_called_by_each_decoding_round_runs_every_round(tmp_path, capsys, monkeypatch):
    got = lint_project(tmp_path, DRAFT, capsys, monkeypatch)
    # after its depth loop, the expansion's mask store and host copy run once a round; its own
    # loop over the depth is unrolled into that round (the mask it grows is no accumulator)
    assert "draft.py:21:9:HPU006" in got and "draft.py:22:17:HPU005" in got
    assert not any(g.startswith("draft.py:19:") for g in got)


# the training loop lives in one file, its backward and optimizer step in another
TRAIN_IN_CALLEE = {
    "agent.py": """
        import torch


        class Agent:
            def __init__(self, net, opt):
                self.net = net
                self.opt = opt

            def update(self, states, returns):
                loss = ((self.net(states) - returns) ** 2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                return loss
    """,
    "train.py": """
        {IMPORT}
        def train(agent, episodes, play):
            for e in range(episodes):
                states, returns = play(agent)
                agent.update(states, returns)
                {MARK}
    """,
    "run_tpu.py": """
        import torch
        import torch_xla.core.xla_model as xm
        from agent import Agent
        from train import train


        def main(net, play):
            dev = xm.xla_device()
            net = net.to(dev)
            train(Agent(net, torch.optim.SGD(net.parameters(), 0.1)), 100, play)
    """,
}


def _train(mark: bool) -> dict:
    text = TRAIN_IN_CALLEE["train.py"]
    text = text.replace("{IMPORT}", "import torch_xla.core.xla_model as xm" if mark else "")
    return dict(TRAIN_IN_CALLEE, **{"train.py": text.replace("{MARK}", "xm.mark_step()" if mark else "pass")})


def test_a_loop_whose_callee_trains_in_another_file_needs_a_step_marker(tmp_path, capsys, monkeypatch):
    assert "train.py:4:5:HPU004" in lint_project(tmp_path, _train(False), capsys, monkeypatch)


def test_the_same_loop_with_a_marker_is_quiet(tmp_path, capsys, monkeypatch):
    assert not any(g.endswith("HPU004") for g in lint_project(tmp_path, _train(True), capsys, monkeypatch))


# an XLA project that builds an MpDeviceLoader somewhere; this function is handed a loader
LOADERS = {
    "data.py": """
        import torch_xla.distributed.parallel_loader as pl


        def device_loader(loader, device):
            return pl.MpDeviceLoader(loader, device)
    """,
    "trainer.py": """
        import torch
        import torch_xla.core.xla_model as xm


        def train_one_epoch(model, loader, opt):
            device = xm.xla_device()
            for batch in loader:
                {BODY}
                loss = model(inputs).mean()
                loss.backward()
                xm.optimizer_step(opt)
    """,
}


def test_a_loader_whose_batches_the_loop_moves_to_the_device_is_a_host_loader(tmp_path, capsys, monkeypatch):
    files = dict(LOADERS, **{"trainer.py": LOADERS["trainer.py"].replace("{BODY}", "inputs = batch.inputs.to(device)")})
    assert "trainer.py:8:5:HPU004" in lint_project(tmp_path, files, capsys, monkeypatch)


def test_a_loader_whose_batches_arrive_on_the_device_may_mark_the_steps(tmp_path, capsys, monkeypatch):
    files = dict(LOADERS, **{"trainer.py": LOADERS["trainer.py"].replace("{BODY}", "inputs = batch.inputs")})
    assert not any(g.endswith("HPU004") for g in lint_project(tmp_path, files, capsys, monkeypatch))


# a verification round's draft count is capped near the end of the sequence
ROUNDS = """
import torch


def speculate(model, ids, gamma, total):
    pos = ids.shape[1]
    while pos < total:
        k = {COUNT}
        q = torch.zeros((1, k, 100))
        ids = model(ids)
        pos += 1
"""


def test_a_counter_capped_with_min_takes_few_values_and_is_no_loop_constant():
    assert found(ROUNDS.replace("{COUNT}", "min(gamma, total - pos - 1)"), ("HPU001",)) == []


def test_a_counter_floored_with_max_still_changes_every_pass():
    assert found(ROUNDS.replace("{COUNT}", "max(1, pos - gamma)"), ("HPU001",)) == [("HPU001", 9)]


# a fine-tuning script whose logging interval is a module constant
INTERVAL = """
import torch

log_interval = {EVERY}


def train(model, opt, batches):
    for it, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if it % log_interval == 0:
            print(f"iter {it}: loss {loss.item():.4f}")
{MAIN}"""


def test_a_logging_interval_of_one_holds_every_step():
    src = INTERVAL.replace("{EVERY}", "1").replace("{MAIN}", "")
    assert found(src, ("HPU005",)) == [("HPU005", 13)]


def test_a_logging_interval_of_ten_is_an_interval():
    assert found(INTERVAL.replace("{EVERY}", "10").replace("{MAIN}", ""), ("HPU005",)) == []


def test_an_interval_of_one_that_main_sets_from_its_arguments_may_be_any():
    main = "\n\ndef main(args):\n    global log_interval\n    log_interval = args.log_interval\n"
    assert found(INTERVAL.replace("{EVERY}", "1").replace("{MAIN}", main), ("HPU005",)) == []


# an XLA sampling script: generate() marks a step before its token loop (the prefill) and in it
SAMPLES = """
import torch
import torch_xla.core.xla_model as xm


def generate(model, idx, steps):
    xm.mark_step()
    for _ in range(steps):
        logits = model(idx)
        idx = torch.cat([idx[1:], logits.argmax(-1)[-1:]])
        xm.mark_step()
    return idx


def step(model, idx):
    idx = model(idx).argmax(-1)
    xm.mark_step()
    return idx


def main(model, tokenizer, prompt, n):
    for i in range(n):
        y = {CALL}
        print(tokenizer.decode(y.tolist()))
"""


def test_a_loop_over_whole_generations_is_no_step_loop():
    assert found(SAMPLES.replace("{CALL}", "generate(model, prompt, 50)"), ("HPU005",)) == []


def test_a_loop_over_a_function_that_marks_one_step_is_a_step_loop():
    assert found(SAMPLES.replace("{CALL}", "step(model, prompt)"), ("HPU005",)) == [("HPU005", 24)]


def test_an_interval_of_one_that_a_configurator_may_override_is_an_interval():
    main = "\n\nexec(open('configurator.py').read())\n"
    assert found(INTERVAL.replace("{EVERY}", "1").replace("{MAIN}", main), ("HPU005",)) == []


# a fine-tuning loop that validates by generating (the generation marks its steps on XLA)
VALIDATE = """
import torch
import torch_xla.core.xla_model as xm


def generate(model, idx, steps):
    xm.mark_step()
    for _ in range(steps):
        idx = torch.cat([idx[1:], model(idx).argmax(-1)[-1:]])
        xm.mark_step()
    return idx


def validate(model, tokenizer, prompt):
    return tokenizer.decode(generate(model, prompt, 20).tolist())


def train(model, opt, tokenizer, batches, prompt, every):
    for it, (x, y) in enumerate(batches):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        xm.mark_step()
        if it % every == 0:
            print(validate(model, tokenizer, prompt))
"""


def test_a_validation_that_generates_under_an_interval_test_is_no_training():
    assert found(VALIDATE, ("HPU005",)) == []


# a token stream handed to a decoding helper: each pass of the helper's loop is one decoding step
STREAM = """
import torch


def generate(model, idx, steps):
    for _ in range(steps):
        idx = model(idx).argmax(-1)
        yield idx


def stream(model, idx):
    return generate(model, idx, 20)


def decode_stream(tokens, vocab):
    for token in tokens:
        yield vocab[token.item()]


def chat(model, prompt, vocab):
    print("".join(decode_stream({TOKENS}, vocab)))
"""


def test_a_parameter_its_caller_fills_with_a_generator_of_steps_is_a_token_stream():
    assert found(STREAM.replace("{TOKENS}", "stream(model, prompt)"), ("HPU005",)) == [("HPU005", 17)]


def test_a_parameter_filled_with_a_tuple_of_tensors_is_no_stream():
    assert found(STREAM.replace("{TOKENS}", "torch.tensor_split(prompt, 4)"), ("HPU005",)) == []


# a Gaudi fine-tuning loop whose step function lives in a module that drives DeepSpeed
ENGINE = {
    "training.py": """
        {IMPORT}


        def train_step(model, optimizer, batch):
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            return loss
    """,
    "finetune.py": """
        import habana_frameworks.torch.core as htcore
        from training import train_step


        def finetune(model, optimizer, loader, epochs):
            for epoch in range(epochs):
                for batch in loader:
                    train_step(model, optimizer, batch.to("hpu"))
    """,
}


def _engine(imports: str) -> dict:
    return dict(ENGINE, **{"training.py": ENGINE["training.py"].replace("{IMPORT}", imports)})


def test_a_gaudi_loop_whose_step_function_trains_without_an_engine_needs_a_marker(tmp_path, capsys, monkeypatch):
    assert "finetune.py:8:9:HPU004" in lint_project(tmp_path, _engine("import torch"), capsys, monkeypatch)


def test_a_gaudi_loop_whose_step_function_is_in_a_deepspeed_module_is_marked_by_the_engine(tmp_path, capsys,
                                                                                          monkeypatch):
    got = lint_project(tmp_path, _engine("import deepspeed"), capsys, monkeypatch)
    assert not any(g.endswith("HPU004") for g in got)


# a PPO trainer: each pass of the outer loop generates, then trains on mini-batches in step()
PPO = """
import torch
from torch import nn


class Policy(nn.Module):
    def forward(self, x):
        return x * 2


class Trainer:
    def __init__(self):
        self.model = Policy()
        self.opt = torch.optim.Adam(self.model.parameters())
        self.mini_batch_size = 4

    def train_minibatch(self, queries, rewards):
        loss = -(self.model(queries) * rewards).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()

    def step(self, queries, rewards):
        for mb_start in range(0, len(queries), self.mini_batch_size):
            end = mb_start + self.mini_batch_size
            self.train_minibatch(queries[mb_start:end], rewards[mb_start:end])

    def train(self, batches, meter):
        for batch in batches:
            queries = self.model(batch)
            rewards = queries.mean(-1)
            self.step(queries, rewards)
            meter.update(rewards.mean().item())
"""


def test_a_loop_that_calls_a_ppo_step_training_on_mini_batches_is_a_step_loop():
    assert found(PPO, ("HPU005",)) == [("HPU005", 33)]
