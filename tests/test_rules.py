"""What each rule reports, and what it must leave alone, on small realistic snippets.

Each case is (source, expected findings as "CODE@line"). A false positive here is a bug.
"""
from __future__ import annotations

import textwrap

import pytest

from hpulint import Config, lint_source

# imports at the cases' indentation, so that `GAUDI + """..."""` dedents as one block
GAUDI = "\n        import torch\n        import habana_frameworks.torch.core as htcore"
XLA = "\n        import torch\n        import torch_xla.core.xla_model as xm"


def found(src: str, **cfg) -> list:
    src = textwrap.dedent(src)
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config(**cfg))]


CASES = {
    # --- HPU001 ----------------------------------------------------------------------------
    "hpu001 seed v-diffusion": (
        """
        import torch
        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            for i in range(4, num_steps):
                t_1 = steps[i]
                t_2 = steps[i + 1]
                x = model(x, t_1, t_2)
            return x
        """,
        ["HPU001@6", "HPU001@7"],
    ),
    "hpu001 seed fix with roll is clean": (
        """
        import torch
        def sample(model, x, num_steps):
            steps = torch.linspace(1, 0, num_steps + 1, device=x.device)
            for i in range(4, num_steps):
                t_1 = steps[0]
                t_2 = steps[1]
                steps = torch.roll(steps, shifts=(-1), dims=(0))
                x = model(x, t_1, t_2)
            return x
        """,
        [],
    ),
    "hpu001 derived values and slices": (
        """
        import torch
        def run(model, data, n):
            buf = torch.zeros(n, 4, device="hpu")
            for step, batch in enumerate(data):
                j = n - step
                out = model(batch)
                out = out[:, : j]
                z = torch.zeros(step + 1)
                v = buf.view(step, -1)
                w = buf.narrow(0, 0, j)
        """,
        ["HPU001@8", "HPU001@9", "HPU001@10", "HPU001@11"],
    ),
    "hpu001 seed 000 batch trimming": (
        """
        import torch
        def train(model, loader, args):
            for batch_idx, (data, target) in enumerate(loader):
                data, target = data.to("hpu"), target.to("hpu")
                index = max(-batch_idx - 1, -args.batch_size + 1)
                data, target = data[:-index, :, :, :], target[:-index]
                output = model(data)
        """,
        ["HPU001@7", "HPU001@7"],  # data[:-index] and target[:-index]: two constants
    ),
    "hpu001 python list or dict indexed by counter is clean": (
        """
        import torch
        def train(model, loader, layers, table):
            names = ["a", "b"]
            for i, batch in enumerate(loader):
                layer = layers[i]
                name = names[i % 2]
                cfg = table[i]
                out = model(batch)
        """,
        [],
    ),
    "hpu001 an element of an unknown container given to a model as its input is left alone": (
        """
        def train(model, loader, prompts):
            for i, batch in enumerate(loader):
                t = prompts[i]
                out = model(t)
        """,
        [],
    ),
    "hpu001 an element of an unknown container given to a model after its input is a constant": (
        """
        def train(model, loader, steps):
            for i, batch in enumerate(loader):
                t = steps[i]
                out = model(batch, t)
        """,
        ["HPU001@4"],
    ),
    "hpu001 loop unrolled inside forward is one graph": (
        """
        import torch
        class RNN(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = torch.nn.GRUCell(4, 4)
            def forward(self, x: torch.Tensor):
                h = torch.zeros(x.shape[0], 4)
                for t in range(x.shape[1]):
                    h = self.cell(x[:, t], h)
                return h
        """,
        [],
    ),
    "hpu001 setup loop that runs once is clean": (
        """
        import torch
        def build(n):
            table = torch.zeros(n, n)
            for i in range(n):
                table[i, : i + 1] = 1.0
            return table
        """,
        [],
    ),
    "hpu001 while counter": (
        """
        import torch
        def generate(model, ids: torch.Tensor, max_len):
            cur = 1
            while cur < max_len:
                logits = model(ids[:, :cur])
                cur += 1
        """,
        ["HPU001@6"],
    ),
    "hpu001 index that is a tensor is data, not a constant": (
        """
        import torch
        def train(model, loader, steps: torch.Tensor):
            for i, batch in enumerate(loader):
                idx = torch.tensor(i)
                t = steps[idx]
                out = model(batch, t)
        """,
        [],
    ),
    "hpu001 a host tensor's index is data for the device (no constant)": (
        """
        import torch
        def sample(model, x, n):
            table = torch.linspace(1.0, 0.0, n + 1)
            for i in range(n):
                t = table[i].to("hpu")
                x = model(x, t)
        """,
        [],
    ),
    # --- HPU011 ----------------------------------------------------------------------------
    "hpu011 is off by default on gaudi too": (
        GAUDI + """
        def sample(model, x, n):
            for i in range(n):
                x = model(x) * i
                htcore.mark_step()
        """,
        [],
    ),
    "hpu011 scalar operand on gaudi when selected by code": (
        GAUDI + """
        def sample(model, x, n):
            for i in range(n):
                x = model(x) * i
                htcore.mark_step()
        """,
        ["HPU011@6"],
    ),
    "hpu011 is off for xla": (
        XLA + """
        def sample(model, x, n):
            for i in range(n):
                x = model(x) * i
                xm.mark_step()
        """,
        [],
    ),
    "hpu011 on for xla when selected by code": (
        """
        import torch
        def sample(model, x, n):
            for i in range(n):
                x = model(x) * i
        """,
        ["HPU011@5"],
    ),
    # --- HPU002 ----------------------------------------------------------------------------
    "hpu002 torch.equal in forward (seed 003 MHA)": (
        """
        import torch
        from torch import nn
        class MHA(nn.Module):
            def forward(self, query, key, value):
                if torch.equal(query, key) and key.equal(value):
                    return self.self_attention(query)
                return self.cross_attention(query, key, value)
        """,
        ["HPU002@6", "HPU002@6"],
    ),
    "hpu002 both spellings are reported": (
        """
        import torch
        from torch import nn
        class MHA(nn.Module):
            def forward(self, query, key, value):
                same = torch.equal(query, key)
                same_kv = key.equal(value)
                return same, same_kv
        """,
        ["HPU002@6", "HPU002@7"],
    ),
    "hpu002 identity check is clean": (
        """
        import torch
        from torch import nn
        class MHA(nn.Module):
            def forward(self, query, key, value):
                if query is key:
                    return query
                return value
        """,
        [],
    ),
    "hpu002 in a function called from the step loop": (
        """
        import torch
        def same(a, b):
            return torch.equal(a, b)
        def train(model, loader, opt):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                if same(x, y):
                    print("same")
        """,
        ["HPU002@4"],
    ),
    "hpu002 in a test helper or setup is clean": (
        """
        import torch
        def check(a, b):
            assert torch.equal(a, b)
        def setup(weights):
            for w in weights:
                assert torch.equal(w, w.clone())
        """,
        [],
    ),
    # --- HPU003 ----------------------------------------------------------------------------
    "hpu003 local accumulator in an eval loop": (
        """
        import torch
        def evaluate(model, loader):
            preds = torch.empty(0)
            for x in loader:
                out = model(x)
                preds = torch.cat((preds, out))
                stacked = torch.stack([preds, out], 0)
            return preds
        """,
        ["HPU003@7"],
    ),
    "hpu003 mmf report accumulation (seed 003)": (
        """
        import torch
        class Report(dict):
            def accumulate_tensor_fields_and_loss(self, report, field_list):
                for key in field_list:
                    if isinstance(self[key], torch.Tensor):
                        self[key] = torch.cat((self[key], report[key]), dim=0)
        """,
        ["HPU003@7"],
    ),
    "hpu003 attribute buffer grows per call": (
        """
        import torch
        class Meter:
            def __init__(self):
                self.buf = torch.zeros(0)
                self.buf = torch.cat([self.buf, torch.ones(1)], 0)
            def update(self, y):
                self.buf = torch.cat([self.buf, y], 0)
        """,
        ["HPU003@8"],
    ),
    "hpu003 list then one cat is clean": (
        """
        import torch
        def evaluate(model, loader):
            preds = []
            for x in loader:
                preds.append(model(x))
            return torch.cat(preds)
        """,
        [],
    ),
    "hpu003 fixed loop inside forward is clean": (
        """
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                out = x
                for _ in range(2):
                    out = torch.cat((out, x), dim=1)
                return out
        """,
        [],
    ),
    # --- HPU004 ----------------------------------------------------------------------------
    "hpu004 gaudi loop with no marker": (
        GAUDI + """
        def train(model, loader, optimizer):
            for data, target in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
        """,
        ["HPU004@5"],
    ),
    "hpu004 seed 001 loop is clean": (
        GAUDI + """
        def train(model, loader, optimizer):
            for data, target in loader:
                optimizer.zero_grad()
                loss = model(data).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
                htcore.mark_step()
        """,
        [],
    ),
    "hpu004 gaudi marker only after step": (
        GAUDI + """
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
                htcore.mark_step()
        """,
        ["HPU004@7"],
    ),
    "hpu004 gaudi marker only after backward": (
        GAUDI + """
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
        """,
        ["HPU004@9"],
    ),
    "hpu004 ModuleCacher loop marks at the top and the end (seed 001)": (
        GAUDI + """
        def train(model, loader, optimizer):
            for data, target in loader:
                htcore.mark_step()
                optimizer.zero_grad(set_to_none=True)
                loss = model(data).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
        """,
        [],
    ),
    "hpu004 xla marker after step is enough": (
        XLA + """
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                xm.optimizer_step(optimizer)
                xm.mark_step()
        """,
        [],
    ),
    "hpu004 xla with no marker": (
        XLA + """
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
        """,
        ["HPU004@5"],
    ),
    "hpu004 xla MpDeviceLoader marks steps": (
        """
        import torch_xla.distributed.parallel_loader as pl
        def train(model, loader, optimizer, device):
            mp_loader = pl.MpDeviceLoader(loader, device)
            for data, target in mp_loader:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
        """,
        [],
    ),
    "hpu004 marker inside a same-file step function": (
        """
        from torch_xla.core import xla_model as xm
        def train_step(model, batch, optimizer):
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
            xm.mark_step()
        def train(model, loader, optimizer):
            for batch in loader:
                train_step(model, batch, optimizer)
        """,
        [],
    ),
    "hpu004 step function without a marker": (
        """
        import torch_xla
        def train_step(model, batch, optimizer):
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
        def train(model, loader, optimizer):
            for batch in loader:
                train_step(model, batch, optimizer)
        """,
        ["HPU004@8"],
    ),
    "hpu004 plain cuda code is not a lazy target": (
        """
        import torch
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data.cuda()).sum()
                loss.backward()
                optimizer.step()
        """,
        [],
    ),
    "hpu004 device string makes the target": (
        """
        import torch
        device = torch.device("hpu")
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data.to(device)).sum()
                loss.backward()
                optimizer.step()
        """,
        ["HPU004@5"],
    ),
    # --- HPU005 ----------------------------------------------------------------------------
    "hpu005 loss.item every step": (
        """
        import torch
        def train(model, loader, optimizer):
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                print(loss.item())
                print(f"loss {loss}")
                total = float(loss)
        """,
        ["HPU005@8", "HPU005@9", "HPU005@10"],
    ),
    "hpu005 under a logging interval is clean": (
        """
        import torch
        def train(model, loader, optimizer, log_every=100):
            for step, (x, y) in enumerate(loader):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                if step % log_every == 0:
                    print(loss.item())
        """,
        [],
    ),
    "hpu005 once per epoch or after the loop is clean": (
        """
        import torch
        def train(model, loader, optimizer, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    loss.backward()
                    optimizer.step()
                print(epoch, loss.item())
            return loss.item()
        """,
        [],
    ),
    "hpu005 progress bar postfix and cpu": (
        """
        import torch
        from tqdm import tqdm
        def evaluate(model, loader):
            bar = tqdm(loader)
            for x, y in bar:
                out = model(x)
                bar.set_postfix(loss=out.mean())
                preds = out.argmax(1).cpu().numpy()
        """,
        ["HPU005@8", "HPU005@9"],
    ),
    "hpu005 non-tensor values are not syncs": (
        """
        import torch
        def train(model, loader, optimizer):
            for step, (x, y) in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                lr = float(optimizer.param_groups[0]["lr"])
                print(step, lr)
                print(f"step {step}")
        """,
        [],
    ),
    "hpu005 an else branch or a != test is not a logging guard": (
        """
        import torch
        def train(model, loader, optimizer):
            for step, (x, y) in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                if step % 10 == 0:
                    pass
                else:
                    print(loss.item())
                if step % 10 != 0:
                    print(loss.item())
                if step % 10:
                    print(loss.item())
                if not step % 10 and loss.item() > 0:
                    pass
        """,
        ["HPU005@11", "HPU005@13", "HPU005@15", "HPU005@16"],
    ),
    "hpu005 numpy and host tensors are not device reads": (
        """
        import numpy as np
        import torch
        def train(model, loader, optimizer):
            lrs = np.linspace(0.1, 0.0, 10)
            sched = torch.linspace(0.1, 0.0, 10)
            for i, x in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                lr = lrs[i].item()
                lr2 = float(sched[i])
        """,
        [],
    ),
    "hpu005 item in a step function called from the loop": (
        """
        import torch
        def train_step(model, x, optimizer):
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            return loss.item()
        def train(model, loader, optimizer):
            for x in loader:
                train_step(model, x, optimizer)
        """,
        ["HPU005@7"],
    ),
}

EXTRA_CONFIG = {"hpu011 on for xla when selected by code": {"extend_select": ["HPU011"]},
                "hpu011 scalar operand on gaudi when selected by code": {"select": ["HPU011"]}}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    src, expected = CASES[name]
    assert found(src, **EXTRA_CONFIG.get(name, {})) == expected


def test_aliases_are_resolved():
    src = """
    from habana_frameworks.torch import core as hc
    from torch import equal as teq
    import torch.nn as nn
    class M(nn.Module):
        def forward(self, a, b):
            return teq(a, b)
    def train(model, loader, optimizer):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
            hc.mark_step()
    """
    # mark_step after step but not after backward: Gaudi wants both
    assert found(src) == ["HPU002@7", "HPU004@10"]


def test_extra_step_markers_from_config():
    src = """
    import torch_xla
    def sync_all():
        pass
    def train(model, loader, optimizer):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
            my_barrier()
    """
    assert found(src) == ["HPU004@6"]
    assert found(src, step_markers=["my_barrier"]) == []


def test_target_from_config_overrides_detection():
    src = """
    import torch
    def train(model, loader, optimizer):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
    """
    assert found(src) == []
    assert found(src, target="xla") == ["HPU004@4"]


def test_finding_fields():
    src = textwrap.dedent("""
    import torch
    def train(model, loader, optimizer):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            print(loss.item())
    """)
    (f,) = lint_source(src, path="t.py")
    assert (f.code, f.name, f.path, f.line, f.col, f.end_line, f.end_col) == (
        "HPU005", "host-sync-every-step", "t.py", 8, 15, 8, 26)
    assert "host" in f.message and "log" in f.message
    assert f.as_dict()["fix"] is None


def test_nested_epoch_loop_is_reported_once():
    src = """
    import habana_frameworks.torch.core as htcore
    def train(model, batches, optimizer):
        for epoch in range(3):
            for data, target in batches:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
    """
    assert found(src) == ["HPU004@5"]


def test_xla_optimizer_step_with_barrier_marks_the_step():
    src = """
    import torch_xla.core.xla_model as xm
    def train(model, loader, optimizer):
        for data in loader:
            model(data).sum().backward()
            xm.optimizer_step(optimizer, barrier=True)
    """
    assert found(src) == []
    assert found(src.replace(", barrier=True", "")) == ["HPU004@4"]


def test_module_level_state_accumulator_in_a_step_loop():
    src = """
    import torch
    import torch_xla.core.xla_model as xm
    class State:
        preds = None
    state = State()
    for x in range(3):
        state.preds = torch.cat([state.preds, model(x)])
        xm.mark_step()
    """
    assert found(src) == ["HPU003@8"]


NEW_CASES = {
    # --- HPU006 ----------------------------------------------------------------------------
    "hpu006 mask indexing, nonzero, where, unique, repeat_interleave in a step loop": (
        """
        import torch
        def train(model, loader, optimizer):
            for x, lengths in loader:
                out = model(x)
                mask = out > 0
                pos = out[mask]
                neg = out[out < 0]
                idx = torch.nonzero(out)
                rows = torch.where(out > 0)
                vals = out.unique()
                rep = torch.repeat_interleave(out, mask.sum(1))
                n = int(mask.sum())
                head = out[:, :n]
                loss = pos.sum() + neg.sum()
                loss.backward()
                optimizer.step()
        """,
        ["HPU006@7", "HPU006@8", "HPU006@9", "HPU006@10", "HPU006@11", "HPU006@12",
         "HPU005@13", "HPU006@14"],  # int(mask.sum()) is a host sync too
    ),
    "hpu006 static look-alikes are clean": (
        """
        import torch
        def train(model, loader, optimizer):
            for x, lengths in loader:
                out = model(x)
                kept = torch.where(out > 0, out, 0)
                out.masked_fill_(out < 0, 0)
                rep = torch.repeat_interleave(out, 2)
                rep2 = torch.repeat_interleave(out, lengths, output_size=64)
                loss = kept.sum()
                loss.backward()
                optimizer.step()
        """,
        [],
    ),
    "hpu006 boolean-mask stores and masks from all/any": (
        """
        import torch
        def train(model, loader, optimizer):
            for x, y in loader:
                out = model(x)
                out[out < 0] = 0
                done = (y == 0).all(-1)
                out[done] = out[done] * 0.5
                loss = out.sum()
                loss.backward()
                optimizer.step()
        """,
        ["HPU006@6", "HPU006@8", "HPU006@8"],
    ),
    "hpu006 seed 001 dynamic op in forward": (
        """
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(10, 3)
            def forward(self, x):
                tmp = self.fc(x)
                return tmp[torch.where(tmp > 0)]
        """,
        ["HPU006@10"],  # once: the indexing by the one-argument where
    ),
    "hpu006 outside the hot path is clean": (
        """
        import torch
        def stats(t):
            return t[t > 0].mean(), torch.nonzero(t)
        """,
        [],
    ),
    # --- HPU007 ----------------------------------------------------------------------------
    "hpu007 loader feeding a gaudi training loop": (
        """
        import torch
        import habana_frameworks.torch.core as htcore
        from torch.utils.data import DataLoader
        train_kwargs = {"batch_size": 200}
        train_loader = DataLoader(dataset, **train_kwargs)
        eval_loader = DataLoader(dataset, batch_size=64, shuffle=False)
        ok_loader = DataLoader(dataset, batch_size=64, drop_last=True)
        one_loader = DataLoader(dataset, batch_size=1, shuffle=False)
        def train(model, train_loader, optimizer):
            for batch_idx, (data, target) in enumerate(train_loader):
                loss = model(data.to("hpu")).sum()
                loss.backward()
                htcore.mark_step()
                optimizer.step()
                htcore.mark_step()
        def check(model):
            for data, _ in ok_loader:
                model(data)
            for data, _ in one_loader:
                model(data)
        """,
        ["HPU007@6"],
    ),
    "hpu007 not a lazy target, unknown kwargs, or a batch sampler: silent": (
        """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(dataset, batch_size=8)
        def train(model, loader, optimizer):
            for data, target in loader:
                loss = model(data).sum()
                loss.backward()
                optimizer.step()
        """,
        [],
    ),
    # --- HPU008 ----------------------------------------------------------------------------
    "hpu008 branches on tensor values": (
        """
        import torch
        from torch import nn
        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                h = self.fc(x)
                if h.sum() > 0:
                    h = h * 2
                while (h > 10).any():
                    h = h / 2
                assert not torch.isnan(h).any()
                y = h if h.mean() > 0 else -h
                if self.training and x.dim() == 3:
                    pass
                return y
        """,
        ["HPU008@10", "HPU008@12", "HPU008@14", "HPU008@15"],
    ),
    "hpu008 python values and shapes are clean": (
        """
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x, mask=None):
                if mask is None:
                    mask = torch.ones_like(x)
                if x.dim() == 3 and x.shape[0] > 1:
                    x = x.flatten(1)
                if torch.jit.is_scripting():
                    pass
                return x * mask
        """,
        [],
    ),
    "hpu008 a check under a logging interval is clean": (
        """
        import torch
        def train(model, loader, optimizer):
            for step, x in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                if step % 100 == 0:
                    if torch.isnan(loss):
                        raise FloatingPointError(step)
        """,
        [],
    ),
    "hpu008 modules built and moved in one expression": (
        """
        import torch.nn as nn
        module1 = nn.Linear(16, 8).to("hpu")
        for data in batches:
            tmp = module1(data)
            if tmp.mean() > 0:
                tmp = tmp * 2
            tmp.sum().backward()
        """,
        ["HPU008@6"],
    ),
    "hpu008 loss check in a step loop": (
        """
        import torch
        def train(model, loader, optimizer):
            for x in loader:
                loss = model(x).sum()
                if torch.isnan(loss):
                    continue
                loss.backward()
                optimizer.step()
        """,
        ["HPU008@6"],
    ),
    # --- HPU009 ----------------------------------------------------------------------------
    "hpu009 graph APIs with non-tensor or keyword inputs; ModuleCacher is bounded by default": (
        """
        import torch
        import habana_frameworks.torch.core as htcore
        x = torch.randn(8, 4, device="hpu")
        model = htcore.hpu.make_graphed_callables(model, (x, 4))
        model2 = htcore.hpu.make_graphed_callables(model, (x,))
        out = model2(x, scale=2.0)
        out = model2(x)
        htcore.hpu.ModuleCacher()(model=model, inplace=True)
        htcore.hpu.ModuleCacher(max_graphs=10)(model=model, inplace=True)
        """,
        ["HPU009@5", "HPU009@7"],
    ),
    # --- HPU010 ----------------------------------------------------------------------------
    "hpu010 sdp_kernel context manager inside torch.compile": (
        """
        import torch
        import habana_frameworks.torch.hpu as ht
        from habana_frameworks.torch.hpex.kernels import FusedSDPA
        class Attn(torch.nn.Module):
            def forward(self, q, k, v):
                with ht.sdp_kernel(enable_recompute=False):
                    return FusedSDPA.apply(q, k, v, None, 0.1, True)
        @torch.compile
        def attend(q, k, v):
            with ht.sdp_kernel(enable_recompute=True):
                return FusedSDPA.apply(q, k, v, None, 0.1, True)
        model = torch.compile(Attn())
        """,
        ["HPU010@7", "HPU010@11"],
    ),
    "hpu010 without torch.compile the context manager is fine": (
        """
        import torch
        import habana_frameworks.torch.hpu as ht
        class Attn(torch.nn.Module):
            def forward(self, q, k, v):
                with ht.sdp_kernel(enable_recompute=False):
                    return q
        """,
        [],
    ),
}


@pytest.mark.parametrize("name", list(NEW_CASES))
def test_new_rule_case(name):
    src, expected = NEW_CASES[name]
    assert found(src) == expected


def test_hpu007_fix_adds_drop_last():
    from hpulint.fix import fix_source

    src = textwrap.dedent("""\
        import torch_xla.core.xla_model as xm
        from torch.utils.data import DataLoader
        loader = DataLoader(dataset, batch_size=8)
        for x in loader:
            model(x).backward()
            opt.step()
            xm.mark_step()
    """)
    assert fix_source(src, "t.py", Config()).fixed == src  # unsafe: not by default
    fixed = fix_source(src, "t.py", Config(), unsafe=True).fixed
    assert fixed == src.replace("batch_size=8)", "batch_size=8, drop_last=True)")


def test_hpu003_while_loop_only_in_hot_code():
    src = """
    import torch
    def pack(chunks):
        out = torch.zeros(0)
        while chunks:
            out = torch.cat((out, chunks.pop()))
        return out
    class Decoder(torch.nn.Module):
        def forward(self, tok):
            out = tok
            while out.shape[0] < 8:
                out = torch.cat((out, tok))
            return out
    """
    assert found(src) == ["HPU003@12"]


def test_seed_000_batch_trimming_on_raw_loader_items():
    # the blog's own code: the slice comes before .to(device), on the DataLoader's items
    src = """
    import torch
    def train(args, model, device, train_loader, optimizer):
        for batch_idx, (data, target) in enumerate(train_loader):
            index = max(-batch_idx - 1, -args.batch_size + 1)
            data, target = data[:-index, :, :, :], target[:-index]
            data, target = data.to(device), target.to(device)
            output = model(data)
            names = ["a", "b"]
            label = names[batch_idx % 2]
    """
    assert found(src) == ["HPU001@6", "HPU001@6"]


def test_hpu007_through_a_device_loader_wrapper():
    src = """
    import torch
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    train_loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True)
    device_loader = pl.MpDeviceLoader(train_loader, xm.xla_device())
    for data, target in device_loader:
        loss = model(data).sum()
        loss.backward()
        xm.optimizer_step(optimizer)
    """
    assert found(src) == ["HPU007@5"]


def test_review_round_two():
    # the PyTorch/XLA loop: MpDeviceLoader inside enumerate(), or passed to the loop's function
    xla = """
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    def train_loop_fn(loader):
        for step, (data, target) in enumerate(loader):
            model(data).sum().backward()
            xm.optimizer_step(optimizer)
    def main(train_loader, device):
        for step, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, device)):
            model(x).sum().backward()
            xm.optimizer_step(optimizer)
        train_loop_fn(pl.MpDeviceLoader(train_loader, device))
    """
    assert found(xla) == []
    # host tensors built with a comparison, and torch.unique/nonzero on them
    host = """
    import torch
    def train(model, optimizer, lengths, device):
        tokens = torch.randint(1, 12, (10, 4, 8)) * (torch.arange(8) < lengths)
        labels = torch.arange(10)
        for step in range(10):
            x = tokens[step].to(device)
            classes = torch.unique(labels)
            idx = torch.nonzero(labels)
            model(x).sum().backward()
            optimizer.step()
    """
    assert found(host) == []
    # a guard in the same `and`
    guarded = """
    import torch
    def train(model, loader, optimizer):
        for step, x in enumerate(loader):
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            if step % 10 == 0 and torch.isnan(loss):
                break
            if torch.isnan(loss) and step % 10 == 0:
                break
    """
    assert found(guarded) == ["HPU008@10"]


def test_hpu007_drop_last_from_an_option_that_is_off_unless_given():
    src = XLA + """
        import argparse
        import torch_xla.distributed.parallel_loader as pl
        parser = argparse.ArgumentParser()
        parser.add_argument("--drop_last", action="store_true")
        parser.add_argument("--drop-tail", action="store_true", default=True)
        FLAGS = parser.parse_args()

        def train(dataset, model, opt):
            a = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=FLAGS.drop_last)
            b = torch.utils.data.DataLoader(dataset, batch_size=8, drop_last=FLAGS.drop_tail)
            for loader in (a, b):
                for x in pl.MpDeviceLoader(loader, xm.xla_device()):
                    model(x).sum().backward()
                    xm.optimizer_step(opt)
        """
    src = src.replace("for loader in (a, b):\n                for x in pl.MpDeviceLoader(loader, xm.xla_device()):",
                      "for _ in range(2):\n                for x in pl.MpDeviceLoader(a, xm.xla_device()):")
    src = src.replace("                    xm.optimizer_step(opt)\n",
                      "                    xm.optimizer_step(opt)\n                for x in pl.MpDeviceLoader(b, xm.xla_device()):\n"
                      "                    model(x).sum().backward()\n                    xm.optimizer_step(opt)\n")
    findings = lint_source(textwrap.dedent(src), path="case.py", config=Config())
    assert [(f.code, f.line) for f in findings] == [("HPU007", 12)]
    assert findings[0].message.endswith("here `drop_last=FLAGS.drop_last` is off unless the script is run with `--drop_last`")
    assert findings[0].fix is None


def test_review_round_three_look_alikes_and_patched_forwards():
    # a logging guard above a loop over the values to log: read on logging steps only
    src = GAUDI + """
        def train(model, opt, loader, log_every):
            for step, (x, y) in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                htcore.mark_step()
                opt.step()
                htcore.mark_step()
                if step % log_every == 0:
                    for name, p in model.named_parameters():
                        print(name, p.grad.norm().item())
        """
    assert found(src) == []
    # `t != None` is answered by identity: no read
    src = GAUDI + """
        def train(model, opt, loader):
            for x, y in loader:
                loss = model(x).sum()
                if loss != None:
                    loss.backward()
                htcore.mark_step()
                opt.step()
                htcore.mark_step()
        """
    assert found(src) == []
    # a forward written to replace a model's: it runs every step; its layer loop is one graph
    src = """
        import torch

        def gaudi_encoder_forward(self, hidden):
            for i, layer in enumerate(self.layers):
                hidden = layer(hidden)
                if torch.isnan(hidden).any():
                    hidden = torch.zeros_like(hidden)
            return hidden
        """
    assert found(src) == ["HPU008@7"]


def test_an_annotation_wins_over_what_callers_pass():
    """`flag: bool | None` and `Optional[int]` say what the parameter is, whatever a caller passes."""
    src = """
        from typing import Optional
        import torch
        import torch.nn as nn

        def pick(x, flag: bool | None = False, n: Optional[int] = None):
            if flag:
                x = x * 2
            if n:
                x = x + 1
            return x

        class M(nn.Module):
            def forward(self, x):
                order = torch.ones(3, device=x.device)
                return pick(x, flag=order, n=order)
        """
    assert found(src) == []


def test_guards_kept_in_variables_helpers_and_call_sites():
    """A logging interval is a logging interval wherever users write it: stored in a variable
    first, above a loop in a helper called every step, or around the call of a helper."""
    loop = GAUDI + """
        def save(model):
            return [v.detach().cpu() for v in model.state_dict().values()]

        def norms(model, step):
            if step % 10 == 0:
                for p in model.parameters():
                    print(p.norm().item())

        def train(model, opt, loader, last):
            for step, (x, y) in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                htcore.mark_step()
                opt.step()
                htcore.mark_step()
                {guard}
                    print(loss.item())
                norms(model, step)
                {save_guard}
                    save(model)
        """
    quiet = loop.format(guard="log_now = step % 10 == 0\n                if log_now or step == last:",
                        save_guard="if step % 100 == 0:")
    assert found(quiet) == []
    # the same reads every step are reported: a variable that is not an interval, an unguarded call
    loud = loop.format(guard="warm = step > 10\n                if warm:",
                       save_guard="if True:")
    assert found(loud) == ["HPU005@5", "HPU005@21"]
    # `finished` says the run is over; `(k > 0 and step % k) == 0` is an interval in brackets
    src = GAUDI + """
        def train(model, opt, loader, k, limit):
            for step, (x, y) in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                htcore.mark_step()
                opt.step()
                htcore.mark_step()
                finished = step >= limit
                if finished:
                    print(loss.item())
                    break
                if (k > 0 and step % k) == 0:
                    print(loss.item())
        """
    assert found(src) == []


def test_dicts_and_unions_are_not_taken_for_tensors():
    """`model_kwargs.get("use_cache")` is a dict's entry (a tensor has no `.get`); a parameter
    annotated `dict[str, Any]` is a dict; `Union[int, Tensor]` is what its callers pass."""
    src = GAUDI + """
        from typing import Any, Union

        def update(outputs, model_kwargs: dict[str, Any]):
            if model_kwargs.get("use_cache", True):
                model_kwargs["past"] = outputs
            return model_kwargs

        def pad(model_kwargs):
            if model_kwargs.get("pad_done", False):
                return
            if model_kwargs["kv_len"] > 0:
                print("pad")

        def keep(logits, n: Union[int, torch.Tensor] = 0):
            if n > 0:
                return logits[:, -n:]
            return logits

        def generate(model, ids, **model_kwargs):
            while True:
                out = model(ids, **model_kwargs)
                model_kwargs = update(out, model_kwargs)
                pad(model_kwargs)
                ids = torch.cat([ids, keep(out, {n}).argmax(-1)], dim=-1)
                htcore.mark_step()
                if ids.shape[-1] > 64:
                    break
        """
    # the growing `ids` is the one hazard
    assert found(src.format(n="1")) == ["HPU003@27"]
    # a device tensor passed where the union allows one is a tensor: a read, and a slice bound
    assert found(src.format(n="out.argmax()")) == ["HPU008@18", "HPU006@19", "HPU003@27"]


def test_fabric_setup_and_accelerate_prepare_return_what_they_wrap():
    """`agent, opt = fabric.setup(agent, opt)`: `agent` is still the model, so a rollout loop that
    calls it steps, and its counter indexes device buffers."""
    src = """
        import torch
        from lightning.fabric import Fabric
        from lightning.pytorch import LightningModule

        class Agent(LightningModule):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 4)

            def act(self, x):
                return self.fc(x)

        def main():
            fabric = Fabric()
            agent = Agent()
            opt = torch.optim.Adam(agent.parameters())
            agent, opt = {wrap}
            obs = torch.zeros(8, 4, device=fabric.device)
            x = torch.zeros(4, device=fabric.device)
            for update in range(10):
                for step in range(8):
                    obs[step] = x
                    print(agent.act(x).cpu())
        """
    assert found(src.format(wrap="fabric.setup(agent, opt)")) == ["HPU001@23", "HPU005@24"]
    # an unknown call's results are not the model
    assert found(src.format(wrap="other.setup(agent, opt)")) == []


def test_loops_over_the_parts_of_one_step_are_not_step_loops():
    """`for opt in self.optimizers: opt.step()` steps each optimizer of the same step: the method
    holding it is still called once per batch, so what it reads, it reads every step."""
    src = """
        import torch
        import habana_frameworks.torch.core as htcore

        class Trainer:
            def train_batch(self, batch):
                loss = self.model(batch).sum()
                loss.backward()
                for {name} in self.{where}:
                    {name}.step()
                flag = self.device.tensor_to_device(torch.tensor([1]))
                return flag.item()

            def fit(self, loader):
                for batch in loader:
                    self.train_batch(batch)
                    htcore.mark_step()
        """
    assert found(src.format(name="opt", where="optimizers")) == ["HPU005@12"]
    # a loop over something else that steps is a step loop of its own: one call runs many steps
    assert found(src.format(name="opt", where="stages")) == []


def test_a_device_compared_with_torch_device_is_a_device_guard():
    src = GAUDI + """
        def encode(model, loader):
            for x in loader:
                out = model(x)
                if out.device {op} torch.device("cpu"):
                    print(out.sum().item())
                htcore.mark_step()
        """
    assert found(src.format(op="==")) == []  # a CPU-only branch does not run on hpu
    assert found(src.format(op="!=")) == ["HPU005@8"]


def test_a_deepspeed_training_loop_on_gaudi_is_not_asked_for_markers():
    src = GAUDI + """
        {imp}

        def train(model, optimizer, loader):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
        """
    assert found(src.format(imp="import deepspeed")) == []
    assert found(src.format(imp="import os")) == ["HPU004@7"]


def test_getattr_of_torch_is_a_torch_function_of_its_arguments():
    """`getattr(torch, mode)(times)` of host timings is a host value: `.item()` reads nothing."""
    src = XLA + """
        def bench(fn, mode="mean"):
            fn()
            times = torch.tensor([1.0, 2.0]{dev})
            return getattr(torch, mode)(times).item()

        def main(model, loader):
            for x in loader:
                print(bench(lambda: model(x)))
                xm.mark_step()
        """
    assert found(src.format(dev="")) == []
    assert found(src.format(dev=', device="xla"')) == ["HPU005@7"]


def test_the_end_of_the_run_is_a_run_once_guard():
    """`global_step >= args.max_steps` holds once the run is over; `>= args.warmup` holds on
    every step after the warm-up."""
    src = GAUDI + """
        def train(model, opt, loader, args, timeout_sent=False):
            global_step = 0
            for training_steps, x in enumerate(loader):
                loss = model(x).sum()
                loss.backward()
                htcore.mark_step()
                opt.step()
                global_step += 1
                htcore.mark_step()
                if global_step >= args.{limit} or timeout_sent or training_steps % args.log_freq == 0:
                    print(loss.item())
        """
    assert found(src.format(limit="steps_this_run")) == []
    assert found(src.format(limit="max_steps")) == []
    assert found(src.format(limit="warmup")) == ["HPU005@14"]


def test_optimizer_state_is_known_by_its_in_place_ops():
    """In an optimizer's step(), `state["exp_avg"]` is a tensor: `.mul_()`, `.norm()` say so."""
    src = """
        import torch
        from torch.optim import Optimizer

        class Lamb(Optimizer):
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        exp_avg = state["exp_avg"]
                        update = {op}
                        if update.norm(2.0) > 0:
                            p.data.add_(update)
        """
    assert found(src.format(op="exp_avg.mul_(0.9)")) == ["HPU008@12"]
    assert found(src.format(op="len(exp_avg)")) == []


def test_an_opt_in_torch_compile_leaves_the_lazy_path_checked():
    """`if args.torchcompile: model = torch.compile(model)`: without the flag the script runs in
    lazy mode, so its per-step reads are still reported; a file that always compiles and never
    marks a step runs in eager mode, where the lazy-mode rules stay quiet."""
    src = GAUDI + """
        def main(args, model, opt, loader):
            {compile}
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                print(loss.item())
        """
    opt_in = "if args.torchcompile:\n                model = torch.compile(model)"
    assert found(src.format(compile=opt_in)) == ["HPU004@7", "HPU005@11"]
    assert found(src.format(compile="model = torch.compile(model)")) == []


def test_cpu_then_item_marks_a_tensor_whatever_the_receiver_is():
    """`loss.cpu().item()` over a dict a trainer's helper returns: only a tensor has both
    `.cpu()` and `.item()`, so the read is reported once, at the `.cpu()`."""
    src = GAUDI + """
        def train(trainer, loader):
            for x in loader:
                losses = trainer.train_batch(x)
                htcore.mark_step()
                total = {{k: loss.{read} for k, loss in losses.items()}}
                print(total)
        """
    assert found(src.format(read="cpu().item()")) == ["HPU005@8"]
    assert found(src.format(read="cpu().numpy()")) == ["HPU005@8"]
    assert found(src.format(read="cpu()")) == []  # a module's .cpu() too: not known to be a read


def test_a_loops_iterable_runs_once_and_module_methods_mark_a_model():
    """`for x in logger.log_every(loader)`: the helper holds a loop of its own, but it is called
    once, before the passes, so the evaluation loop is still one step a pass. `clf.eval()` says
    the parameter `clf` is a model, so calling it is a model call."""
    src = GAUDI + """
        class Logger:
            def log_every(self, iterable, freq):
                for obj in iterable:
                    yield obj
                    self.tick(freq)

            def tick(self, freq):
                pass

        def validate(loader, clf):
            clf.{method}()
            logger = Logger()
            for x in logger.log_every(loader, 20):
                out = clf(x.to("hpu"))
                print(out.sum().item())
        """
    assert found(src.format(method="eval")) == ["HPU005@18"]
    assert found(src.format(method="zero_grad")) == []


def test_a_trainers_model_attribute_called_returns_outputs_and_tensorboard_reads_them():
    """`self.model(x)` in a trainer (not a module) calls the model it holds: its outputs are
    device tensors, and `writer.add_scalar(tag, loss)` reads one every step."""
    src = GAUDI + """
        class Trainer:
            def setup(self, exp):
                self.{attr} = exp.get_model()

            def train_one_iter(self, x):
                outputs = self.{attr}(x.to("hpu"))
                loss = outputs["total_loss"]
                self.tblogger.add_scalar("train/loss", loss, self.step)
                loss.backward()
                htcore.mark_step()

            def train(self, loader):
                for x in loader:
                    self.train_one_iter(x)
        """
    assert found(src.format(attr="model")) == ["HPU005@11"]
    assert found(src.format(attr="callback")) == []  # not known to be a model


def test_a_lambda_passed_to_a_call_runs_where_the_call_is():
    """`apply_to_collection(out, Tensor, lambda x: x.item())` in a function called every step
    reads each tensor then; a lambda handed to `add_step_closure` runs after the step marker."""
    src = XLA + """
        def show(bar, out):
            return apply_to_collection(out, torch.Tensor, lambda x: x.item())

        def train(model, loader, bar):
            for i, x in enumerate(loader):
                out = model(x)
                {call}
                xm.mark_step()
        """
    assert found(src.format(call="show(bar, out)")) == ["HPU005@5"]
    assert found(src.format(call="xm.add_step_closure(lambda: print(out.item()))")) == []
    assert found(src.format(call="if i % 100 == 0: show(bar, out)")) == []


def test_torch_is_nonzero_reads_the_value_it_tests():
    """`a / d if torch.is_nonzero(d) else 0.0` branches on a Python bool read from `d`."""
    src = GAUDI + """
        def update(model, loader):
            for x in loader:
                d = model(x).sum()
                score = 1 / d if {test} else 0.0
                htcore.mark_step()
        """
    assert found(src.format(test="torch.is_nonzero(d)")) == ["HPU008@7"]
    assert found(src.format(test="torch.is_tensor(d)")) == []


def test_an_accumulator_reordered_in_the_same_pass_still_grows():
    """Beam search: `result = result.index_select(0, beams)` keeps the last pass's tokens, so
    `result = torch.cat([result, next_tokens], -1)` after it still grows every step; a value
    rebuilt from something else first (`result = prompt.clone()`) does not."""
    src = GAUDI + """
        def beam_search(model, prompt, steps):
            result = prompt
            for i in range(steps):
                logits = model(result)
                beams = logits.argmax(-1)
                result = {rebind}
                result = torch.cat([result, beams[:, None]], dim=-1)
                htcore.mark_step()
            return result
        """
    assert found(src.format(rebind="result.index_select(0, beams)")) == ["HPU003@10"]
    assert found(src.format(rebind="prompt.clone()")) == []


def test_a_function_named_after_a_model_is_not_one():
    """`self.classifier_fn(value)` is a function the user passed, not a classifier model: its
    result is whatever the function returns."""
    src = GAUDI + """
        class Demux:
            def __init__(self, {attr}):
                self.{attr} = {attr}

            def next_for(self, loader, k):
                for value in loader:
                    c = self.{attr}(value.to("hpu"))
                    if c is None or c >= k:
                        continue
                    htcore.mark_step()
        """
    assert found(src.format(attr="classifier_fn")) == []
    assert found(src.format(attr="classifier")) == ["HPU008@11"]
