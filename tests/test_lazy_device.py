"""The simulated lazy device, through the Python API a user would use in their own tests.

Every count here is exact: it is what a lazy engine with the profile's semantics compiles,
reuses and transfers for the code in the ``with`` block.
"""
from __future__ import annotations

import inspect
import math

import pytest

torch = pytest.importorskip("torch")

import hpulint.lazy as lazy  # noqa: E402


def lineno() -> int:
    """The line this is called on (so a test can name the line it expects in a cause)."""
    return inspect.currentframe().f_back.f_lineno


def recompiles(d):
    return [e for e in d.events if e["kind"] == "compile" and e["recompile"]]


def syncs(d):
    return {(e["line"], e["what"]): e["count"] for e in d.events if e["kind"] == "sync"}


# -- compilations and their causes ---------------------------------------------------------------


@pytest.mark.parametrize("profile", ["hpu", "xla"])
def test_loop_index_as_select_index_recompiles_every_step_and_names_the_line(profile):
    with lazy.device(profile) as d:
        steps = torch.linspace(1.0, 0.0, 8).to(d.device)
        x = torch.ones(3).to(d.device)
        for i in range(5):
            t = steps[i]; select_line = lineno()  # noqa: E702
            x = x * t
            d.mark_step()
    assert (d.compiles, d.cached, d.syncs, d.mark_steps) == (5, 0, 0, 5)
    causes = [e["cause"] for e in recompiles(d)]
    assert len(causes) == 4
    assert all(c["kind"] == "constant" for c in causes)
    first = causes[0]["changes"][0]
    assert first["op"] == "aten.select.int" and first["line"] == select_line
    assert [(c["changes"][0]["old"], c["changes"][0]["new"]) for c in causes] == [
        (0, 1), (1, 2), (2, 3), (3, 4)]


@pytest.mark.parametrize("profile", ["hpu", "xla"])
def test_rolling_the_buffer_compiles_once(profile):
    with lazy.device(profile) as d:
        steps = torch.linspace(1.0, 0.0, 8).to(d.device)
        x = torch.ones(3).to(d.device)
        for i in range(5):
            t = steps[0]
            steps = torch.roll(steps, shifts=-1, dims=0)
            x = x * t
            d.mark_step()
    assert (d.compiles, d.cached, d.mark_steps) == (1, 4, 5)
    assert recompiles(d) == []


def test_python_scalar_is_data_by_default_and_a_constant_with_scalars_constant():
    def run(profile, scalars=None):
        with lazy.device(profile, scalars=scalars) as d:
            x = torch.ones(3).to(d.device)
            for step in range(4):
                lr = 0.1 / (step + 1)
                x = x * lr; mul_line = lineno()  # noqa: E702
                d.mark_step()
        return d, mul_line

    # no source says Gaudi bakes a scalar operand into the graph: hpu treats it as xla does
    for profile in ("hpu", "xla"):
        d, _ = run(profile)
        assert (d.compiles, d.cached) == (1, 3), profile
        assert d.summary()["assumptions"] == []
    # --scalars constant: the worst case, every value a new graph, named as an assumption
    hpu, mul_line = run("hpu", "constant")
    assert hpu.compiles == 4
    change = recompiles(hpu)[0]["cause"]["changes"][0]
    assert (change["op"], change["line"]) == ("aten.mul.Tensor", mul_line)
    assert change["old"] == pytest.approx(0.1) and change["new"] == pytest.approx(0.05)
    assert "every Python scalar operand is a graph constant" in hpu.summary()["assumptions"][0]


def test_hpu_keeps_index_shape_and_dim_integers_constant():
    # Gaudi's "Avoiding Constant Variables in Loops": a loop value used as an index or a shape
    with lazy.device("hpu") as d:
        table = torch.arange(20.0).to(d.device)
        for i in range(3):
            row = table[i]  # select index
            part = table[: i + 2]  # slice bound: a shape
            out = row + part.sum()
            d.mark_step()
    assert d.compiles == 3 and out is not None
    kinds = {c["op"] for e in recompiles(d) for c in e["cause"]["changes"]}
    assert "aten.select.int" in kinds


def test_xla_keeps_0_1_and_minus_1_as_constants():
    # XLA's special scalars: multiplying by 0, 1, -1 bakes the value into the graph.
    with lazy.device("xla") as d:
        x = torch.ones(3).to(d.device)
        for k in (1.0, 0.0, -1.0, 2.0, 3.0, 1.0):
            y = x * k
            d.mark_step()
    # 1, 0, -1 are three constants; 2 and 3 are one graph with a data input; 1 again is cached
    assert (d.compiles, d.cached) == (4, 2)
    assert y is not None


def test_input_shape_change_names_the_input_the_op_and_both_shapes():
    with lazy.device("xla") as d:
        acc = torch.zeros(0, 2).to(d.device)
        for step in range(4):
            out = torch.ones(2, 2).to(d.device)
            acc = torch.cat((acc, out)); cat_line = lineno()  # noqa: E702
            d.mark_step()
    assert d.compiles == 4
    changes = [e["cause"]["changes"][0] for e in recompiles(d)]
    assert [c["kind"] for c in changes] == ["shape"] * 3
    assert [(c["old"], c["new"]) for c in changes] == [
        ([0, 2], [2, 2]), ([2, 2], [4, 2]), ([4, 2], [6, 2])]
    assert all(c["input"] == "acc" and c["op"] == "aten.cat.default" and c["line"] == cat_line
               for c in changes)


def test_different_op_sequence_is_named():
    with lazy.device("hpu") as d:
        x = torch.ones(3).to(d.device)
        for step in range(3):
            if step == 1:
                x = torch.exp(x); exp_line = lineno()  # noqa: E702
            else:
                x = torch.tanh(x)
            d.mark_step()
    assert d.compiles == 2 and d.cached == 1
    (ev,) = recompiles(d)
    assert ev["cause"]["kind"] == "ops"
    change = ev["cause"]["changes"][0]
    assert change["old_op"] == "aten.tanh.default" and change["new_op"] == "aten.exp.default"
    assert change["new_line"] == exp_line


def test_a_graph_still_pending_at_the_end_is_not_compiled():
    with lazy.device("hpu") as d:
        x = torch.ones(3).to(d.device)
        y = (x * 2 + 1).sum()
    assert (d.compiles, d.cached, d.syncs, d.mark_steps) == (0, 0, 0, 0)
    pending = [e for e in d.events if e["kind"] == "pending_at_exit"]
    assert pending and pending[0]["nodes"] == 3
    assert y is not None


def test_an_empty_step_marker_compiles_nothing():
    with lazy.device("xla") as d:
        for _ in range(3):
            d.mark_step()
    assert (d.compiles, d.cached, d.mark_steps) == (0, 0, 3)


# -- host reads ---------------------------------------------------------------------------------


def test_host_read_runs_only_what_the_read_tensor_needs():
    with lazy.device("xla") as d:
        x = torch.ones(3).to(d.device)
        a = x * 2
        b = a + 1
        c = x - 3  # not needed by the read: stays pending until the marker
        value = b.sum().item()
        after_read = d.max_graph_nodes
        d.mark_step()
    assert value == 9.0
    assert after_read == 3  # mul, add, sum
    # the marker's graph computes what is still live and pending: a, b (again) and c
    assert (d.compiles, d.syncs) == (2, 1)
    assert d.max_graph_nodes == 3
    assert c is not None


@pytest.mark.parametrize(
    "read, what",
    [
        (lambda t: t.sum().item(), "item"),
        (lambda t: t.tolist(), "tolist"),
        (lambda t: t.numpy() if False else t.cpu(), "cpu()"),
        (lambda t: t.to("cpu"), "to(cpu)"),
        (lambda t: repr(t), "print"),
        (lambda t: f"{t.sum():.3f}", "format"),
        (lambda t: bool(t.sum() > 0), "bool"),
        (lambda t: float(t.sum()), "float"),
        (lambda t: torch.equal(t, t), "torch.equal"),
        (lambda t: torch.allclose(t, t * 1.0), "torch.allclose"),
        (lambda t: t.allclose(t), "torch.allclose"),
    ],
)
def test_every_kind_of_host_read_is_one_sync(read, what):
    with lazy.device("hpu") as d:
        x = torch.ones(3).to(d.device) * 2
        read(x)
    assert d.syncs == 1
    (ev,) = [e for e in d.events if e["kind"] == "sync"]
    assert ev["what"] == what


def test_print_is_one_sync_and_the_printed_values_are_right(capsys):
    with lazy.device("hpu") as d:
        x = torch.arange(3.0).to(d.device) + 1
        print(x)
        print(f"loss {x.sum():.1f}")
    assert d.syncs == 2
    assert capsys.readouterr().out.splitlines() == ["tensor([1., 2., 3.])", "loss 6.0"]


def test_reads_of_host_tensors_are_not_syncs():
    with lazy.device("hpu") as d:
        cpu = torch.ones(3)
        cpu.sum().item()
        cpu.tolist()
        print(cpu)
        dev = cpu.to(d.device)
        host = dev.cpu()
        host.sum().item()  # already on the host: no second transfer
    assert d.syncs == 1


def test_data_dependent_shapes_run_on_the_host():
    with lazy.device("xla") as d:
        x = torch.tensor([1.0, -2.0, 3.0]).to(d.device)
        idx = torch.nonzero(x > 0)
        picked = x[x > 0]
        d.mark_step()
        values = picked.tolist()
    assert idx.shape == (2, 1) and values == [1.0, 3.0]
    whats = sorted(e["what"] for e in d.events if e["kind"] == "sync")
    assert whats == ["mask index (nonzero runs on the host)", "nonzero (runs on the host)",
                     "tolist"]
    # x > 0 compiled once (the second time it is cached); the indexing stays in the step graph
    assert (d.compiles, d.cached) == (2, 1)


def test_a_mask_with_a_different_number_of_true_values_recompiles():
    with lazy.device("xla") as d:
        for data in ([1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [-1.0, 2.0, -3.0]):
            x = torch.tensor(data).to(d.device)
            y = x[x > 0] * 2
            d.mark_step()
    # masks with 2, 2 and 1 True values: the last step's indices have another shape
    steps = [e["step"] for e in d.events if e["kind"] == "compile" and e["site"] == "mark_step"]
    assert steps == [0, 2]
    assert y is not None


# -- training loops, views, in-place updates ------------------------------------------------------


def _train(d, steps, *, mark=True, log_item=False, momentum=0.0):
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    model.to(d.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    for step in range(steps):
        x = torch.randn(3, 4).to(d.device)
        y = torch.randint(0, 2, (3,)).to(d.device)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if mark:
            d.mark_step()
        opt.step()
        if mark:
            d.mark_step()
        if log_item:
            loss.item()
    return model


@pytest.mark.parametrize("profile", ["hpu", "xla"])
def test_training_step_compiles_once_after_warm_up(profile):
    with lazy.device(profile) as d:
        model = _train(d, 6)
        devices = {p.device.type for p in model.parameters()}
    # forward+backward graph and optimizer graph, both reused from step 2 on
    assert (d.compiles, d.cached, d.syncs, d.mark_steps) == (2, 10, 0, 12)
    assert devices == {profile}


def test_momentum_buffer_creation_makes_the_first_optimizer_graph_different():
    with lazy.device("xla") as d:
        _train(d, 5, momentum=0.9)
    (ev,) = recompiles(d)
    assert ev["cause"]["kind"] == "ops"  # step 1 clones the buffer, later steps update it
    assert (d.compiles, d.cached) == (3, 7)


def test_no_step_marker_grows_one_graph_over_every_iteration():
    with lazy.device("hpu") as d:
        model = _train(d, 4, mark=False)
        w = model[0].weight.sum().item()
    growth = [e for e in d.events if e["kind"] == "growth"]
    assert len(growth) == 1
    assert growth[0]["optimizer_steps"] == 4 and growth[0]["backward_passes"] == 4
    assert (d.compiles, d.syncs, d.mark_steps) == (1, 1, 0)
    assert math.isfinite(w)


def test_item_every_step_without_marker_recompiles_a_growing_graph():
    with lazy.device("xla") as d:
        _train(d, 4, mark=False, log_item=True)
    assert d.syncs == 4 and d.compiles == 4
    kinds = [e["cause"]["kind"] for e in recompiles(d)]
    assert kinds == ["grew"] * 3
    # each read re-runs every update no marker has cut: work carried over from earlier steps
    assert all(e["cause"]["changes"][0]["carried"] for e in recompiles(d))
    assert all("with no step marker" in e["cause"]["summary"] for e in recompiles(d))
    sizes = [e["nodes"] for e in d.events if e["kind"] == "compile"]
    assert sizes == sorted(sizes) and len(set(sizes)) == 4


def test_in_place_writes_through_views_reach_the_base():
    with lazy.device("hpu") as d:
        for step in range(3):
            buf = torch.zeros(4, device=d.device)
            buf[1:3] = 1.0
            buf[0] += 2.0
            d.mark_step()
        values = buf.tolist()
    assert values == [2.0, 1.0, 1.0, 0.0]
    assert (d.compiles, d.cached) == (1, 2)


def test_gradient_accumulation_is_not_growth():
    import torch.nn.functional as F

    with lazy.device("hpu") as d:
        model = torch.nn.Linear(4, 2).to(d.device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            for micro in range(4):
                F.mse_loss(model(torch.randn(2, 4).to(d.device)),
                           torch.zeros(2, 2).to(d.device)).backward()
            opt.step()
            opt.zero_grad()
            d.mark_step()
    assert [e for e in d.events if e["kind"] == "growth"] == []
    assert d.mark_steps == 3


# -- the shims ----------------------------------------------------------------------------------


def test_gaudi_script_runs_unchanged_and_reads_graph_compilation():
    with lazy.device("hpu") as d:
        import habana_frameworks.torch.core as htcore
        from habana_frameworks.torch.hpu.metrics import metric_global

        device = torch.device("hpu")
        x = torch.ones(2, device=device)
        for i in range(3):
            x = x + i  # hpu: the Python int is a constant, so every step is a new graph
            htcore.mark_step()
        stats = dict(metric_global("graph_compilation").stats())
        assert torch.hpu.is_available()
        assert x.device.type == "hpu"
    # hpu: x + 0, x + 1, x + 2 are three graphs (the first also holds the ones() factory)
    assert stats["TotalNumber"] == 3 == d.compiles


def test_xla_script_runs_unchanged_with_loader_markers_and_metrics():
    with lazy.device("xla") as d:
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.debug.metrics as met
        import torch_xla.distributed.parallel_loader as pl

        device = xm.xla_device()
        model = torch.nn.Linear(4, 2).to(device)
        data = torch.utils.data.TensorDataset(torch.randn(6, 4))
        loader = torch.utils.data.DataLoader(data, batch_size=2)
        before = met.metric_data("CompileTime")
        for (x,) in pl.MpDeviceLoader(loader, device):
            out = model(x)
        torch_xla.sync()
        compile_count = met.metric_data("CompileTime")[0]
        marks = met.counter_value("MarkStep")
        assert out.device == torch.device("xla", 0)
    # MpDeviceLoader marks a step before every batch, again when it runs out, and once more
    # as it stops (torch_xla/distributed/parallel_loader.py): 3 batches -> 5 markers, + sync
    assert before is None
    assert marks == d.mark_steps == 6
    assert compile_count == d.compiles == 1


def test_optimizer_step_with_barrier_marks_a_step():
    with lazy.device("xla") as d:
        import torch_xla.core.xla_model as xm

        model = torch.nn.Linear(2, 1).to(xm.xla_device())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(1, 2).to(xm.xla_device())).sum().backward()
        xm.optimizer_step(opt)
        assert d.mark_steps == 0
        xm.optimizer_step(opt, barrier=True)
    assert d.mark_steps == 1


def test_shims_are_gone_after_the_block():
    import sys

    with lazy.device("hpu"):
        import habana_frameworks.torch.core  # noqa: F401
    assert "habana_frameworks.torch.core" not in sys.modules
    assert not hasattr(torch, "hpu")
    with pytest.raises(ImportError):
        import torch_xla.core.xla_model  # noqa: F401
    # and outside the block torch is plain again: no device, no recording
    x = torch.ones(2)
    assert x.device.type == "cpu"


def test_parameters_made_from_device_tensors_stay_on_the_device():
    with lazy.device("hpu") as d:
        w = torch.nn.Parameter(torch.randn(3, device=d.device))
        b = torch.nn.Parameter(torch.zeros(3).to(d.device))
        y = (w * 2 + b).sum()
        d.mark_step()
        assert w.device.type == "hpu" and b.device.type == "hpu"
    assert d.compiles == 1 and d.max_graph_nodes == 4  # randn, mul, add, sum
    assert y is not None


def test_autocast_on_the_device_casts_like_the_cpu():
    with lazy.device("hpu") as d:
        model = torch.nn.Linear(4, 4).to(d.device)
        with torch.autocast(device_type="hpu", dtype=torch.bfloat16):
            y = model(torch.randn(2, 4).to(d.device))
        d.mark_step()
    assert y.dtype == torch.bfloat16
    assert d.max_graph_nodes == 5  # input, weight and bias cast to bfloat16, t, addmm


def test_the_api_refuses_the_ltc_engine_with_a_pointer_to_the_cli():
    with pytest.raises(ValueError, match="--engine ltc"):
        lazy.device("xla", engine="ltc")


def test_a_graph_that_grows_once_for_another_reason_is_not_blamed_on_markers():
    # the second layer is not in the optimizer, so zero_grad() never clears its gradients:
    # from step 2 on, backward accumulates into them (add_) instead of creating them
    with lazy.device("hpu") as d:
        first, second = torch.nn.Linear(4, 4).to(d.device), torch.nn.Linear(4, 1).to(d.device)
        opt = torch.optim.SGD(first.parameters(), lr=0.1)
        for step in range(4):
            opt.zero_grad()
            second(first(torch.randn(2, 4).to(d.device))).sum().backward(); bw_line = lineno()  # noqa: E702,E501
            opt.step()
            d.mark_step()
    (ev,) = recompiles(d)
    (change,) = ev["cause"]["changes"]
    assert ev["cause"]["kind"] == "grew" and not change["carried"]
    assert change["added"] == [{"op": "aten.add_.Tensor", "line": bw_line, "count": 2}]
    assert "no step marker" not in ev["cause"]["summary"]
    assert d.compiles == 2 and d.cached == 2


# -- data-dependent shapes, DataLoader batches, HPU Graph and FusedSDPA shims ---------------------


@pytest.mark.parametrize("profile", ["hpu", "xla"])
def test_a_shape_made_by_a_host_run_names_the_line_that_made_it(profile):
    batches = [torch.tensor([[1.0, -1.0], [2.0, 3.0]]), torch.tensor([[-1.0, 1.0], [2.0, 3.0]]),
               torch.tensor([[1.0, -1.0], [-2.0, 3.0]])]
    with lazy.device(profile) as d:
        for x in batches:
            x = x.to(d.device)
            idx = torch.nonzero(x > 0); made = lineno()  # noqa: E702
            y = (x[idx[:, 0], idx[:, 1]] * 2).sum()
            d.mark_step()
    assert syncs(d) == {(made, "nonzero (runs on the host)"): 3}
    # 3, 3 and 2 positive elements: the third step recompiles
    (e,) = recompiles(d)
    made_here = [c for c in e["cause"]["changes"] if c.get("from_line") == made]
    assert made_here and {tuple(c["new"]) for c in made_here} == {(2, 2)} and y is not None


@pytest.mark.parametrize("profile", ["hpu", "xla"])
def test_a_short_last_batch_is_traced_to_its_dataloader(profile):
    with lazy.device(profile) as d:
        w = torch.ones(4, 2).to(d.device)
        data = torch.utils.data.TensorDataset(torch.randn(10, 4))
        loader = torch.utils.data.DataLoader(data, batch_size=4); made = lineno()  # noqa: E702
        for (x,) in loader:
            y = x.to(d.device) @ w
            d.mark_step()
    (e,) = recompiles(d)  # batches of 4, 4 and 2
    (c,) = e["cause"]["changes"]
    assert (c["old"], c["new"], c["loader_line"]) == ([4, 4], [2, 4], made) and y is not None
    # outside the replay DataLoader is plain again
    assert "_hpulint_site" not in vars(torch.utils.data.DataLoader(data, batch_size=4))


def test_hpu_graph_and_fused_sdpa_shims_are_inert_and_compile_runs_as_is():
    plain_compile = torch.compile
    with lazy.device("hpu") as d:
        import habana_frameworks.torch.core as htcore
        import habana_frameworks.torch.hpu as ht
        from habana_frameworks.torch.hpex.kernels import FusedSDPA

        model = torch.nn.Linear(4, 4).to(d.device)
        assert htcore.hpu.make_graphed_callables(model, (torch.ones(1, 4),)) is model
        assert htcore.hpu.ModuleCacher(max_graphs=10)(model=model, inplace=True) is model
        assert ht.wrap_in_hpu_graph(model) is model
        assert torch.compile(model, backend="hpu_backend") is model
        assert torch.compile(backend="hpu_backend")(model) is model
        q = torch.randn(1, 2, 3, 4).to(d.device)
        with ht.sdp_kernel(enable_recompute=False):
            out = FusedSDPA.apply(q, q, q, None, 0.0, True, None, "None", False)
        d.mark_step()
    assert torch.compile is plain_compile
    ref = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert torch.allclose(out, ref, atol=1e-6) and d.compiles == 1


def test_torch_helpers_are_torch_even_when_the_venv_path_says_hpulint(monkeypatch):
    """CI's venv lives in /tmp/hpulint-ci-venv: torch's clip_grad_norm_ there is still torch's.

    A device tensor moved to the CPU by torch's own helper is not a read (on a real device the
    helper moves it to the device it is on); the test walks a fake torch file under such a path.
    """
    from hpulint.lazy import frames, modes

    torch_dir = "/nonexistent/hpulint-ci-venv/lib/python3.11/site-packages/torch/"
    monkeypatch.setattr(modes, "_TORCH_DIR", torch_dir)
    monkeypatch.setattr(frames, "_LIBRARY_DIRS", frames._LIBRARY_DIRS + (torch_dir,))
    ns = {}
    exec(compile("def helper(handler):\n    return handler()\n",
                 torch_dir + "nn/utils/clip_grad.py", "exec"), ns)
    assert ns["helper"](lambda: modes._called_from_torch()) is True
    # the same call from the user's own file is the user's
    assert (lambda handler: handler())(lambda: modes._called_from_torch()) is False


def test_reads_that_keep_the_ir_recompute_the_read_tensor_in_every_later_graph():
    # torch._lazy (tests/ltc_compare.py): a read computes the tensor and keeps its IR, so the
    # step marker has nothing to run and the next step's graph starts from the IR again (the
    # same code on torch._lazy 2.13: 4 graphs compiled, none reused)
    from dataclasses import replace

    from hpulint.lazy.profiles import get_profile

    keep_ir = replace(get_profile("xla"), reads_keep_graph=False, reads_keep_ir=True)
    counts = {}
    for name, profile in (("hpu", "hpu"), ("keep_ir", keep_ir)):
        with lazy.device(profile) as d:
            x = torch.ones(3).to(d.device)
            for step in range(4):
                x = x * 0.5 + 2.0
                x.tolist(); read_line = lineno()  # noqa: E702
                d.mark_step()
        counts[name] = (d.compiles, d.cached, d.syncs)
        sites = {(e["line"], e["site"]) for e in d.events if e["kind"] == "compile"}
        assert sites == {(read_line, "tolist")}
    # hpu: the read makes x device data, every step is the same graph; keep_ir: the graph grows
    assert counts == {"hpu": (1, 3, 4), "keep_ir": (4, 0, 4)}


def test_deferred_uploads_are_synced_by_the_next_marker_as_outputs_if_a_graph_used_them():
    # torch._lazy (tests/ltc_compare.py): .to(device) keeps host data until the next step
    # marker, which syncs it as an extra output of its graph if an op used it, and uploads it
    # without a graph if none did. The same code on torch._lazy 2.13 (device "lazy",
    # torch._lazy.mark_step()) compiles 5 graphs and reuses 2.
    from dataclasses import replace

    from hpulint.lazy.profiles import get_profile

    deferred = replace(get_profile("xla"), deferred_uploads=True)
    counts = {}
    for name, profile in (("xla", "xla"), ("deferred", deferred)):
        with lazy.device(profile) as d:
            x = torch.randn(4, 4).to(d.device)
            w = torch.randn(4, 4).to(d.device)
            for step in range(4):
                y = (x @ w).sum() if step % 2 == 0 else (x + w).sum()
                d.mark_step()
            u = torch.randn(4, 4).to(d.device)
            d.mark_step()  # u unused: uploaded without a graph
            y = (u @ w).sum()
            d.mark_step()  # the graph of step 0 again, with u device data: cached
            v = torch.randn(3).to(d.device)
            (v * 2).tolist()  # v used by the read's graph, not synced by it...
            d.mark_step()  # ...but by the marker: a graph of that upload alone
        counts[name] = (d.compiles, d.cached)
    assert y is not None
    # deferred: (x @ w).sum() with x and w as extra outputs at step 0, then without at step 2
    assert counts == {"xla": (3, 3), "deferred": (5, 2)}


def test_typed_scalars_make_an_int_and_a_float_operand_two_graphs():
    # torch._lazy keeps a Python int as Long data and a float as Double data: x * 2 and x * 2.0
    # are two graphs there, one on the xla profile (the same code on torch._lazy 2.13: 2 graphs
    # compiled, 4 reused)
    from dataclasses import replace

    from hpulint.lazy.profiles import get_profile

    typed = replace(get_profile("xla"), typed_scalars=True)
    counts = {}
    for name, profile in (("xla", "xla"), ("typed", typed)):
        with lazy.device(profile) as d:
            x = torch.ones(4, 4).to(d.device)
            d.mark_step()
            for s in (2, 3, -2, 2.0, 0.5, 3.0):
                y = x * s
                d.mark_step()
        counts[name] = (d.compiles, d.cached)
    assert y is not None
    assert counts == {"xla": (1, 5), "typed": (2, 4)}
