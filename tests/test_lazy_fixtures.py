"""Every fixture replayed: the counts in its header, its findings confirmed, the fix's promise,
and a cross-check against PyTorch's real Lazy Tensor Core.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("torch")

from fixture_format import FIXTURES, lazy_fixtures  # noqa: E402
from hpulint.lazy.confirm import HOST_RUN, confirm  # noqa: E402
from hpulint.lazy.replay import replay, run  # noqa: E402
from hpulint.model import Finding  # noqa: E402
from ltc_compare import site_differences  # noqa: E402

ALL = lazy_fixtures()  # the compile fixtures run on real Dynamo: test_compile_fixtures.py
BY_ID = {fx.id: fx for fx in ALL}
PROFILES = ("hpu", "xla")


def finding(code, line, path):
    return Finding(code=code, name="", message="", path=str(path), line=line, col=1,
                   end_line=line, end_col=1)


_SIM = {}


def sim(fx, profile):
    """In-process replay on the simulated device, once per fixture and profile."""
    key = (fx.id, profile)
    if key not in _SIM:
        _SIM[key] = replay(str(fx.path), profile=profile)
    return _SIM[key]


def test_there_is_a_bad_and_a_good_fixture_per_rule_with_replay_headers():
    for code in ("HPU001", "HPU002", "HPU003", "HPU004", "HPU005", "HPU006", "HPU007", "HPU008",
                 "HPU009", "HPU010"):
        names = [fx.path.name for fx in ALL if fx.path.parent.name == code]
        assert any(n.startswith("bad_") for n in names), code
        assert any(n.startswith("good_") for n in names), code
    for fx in ALL:
        assert set(fx.replay) >= {"hpu", "xla", "ltc"}, fx.id


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fx", ALL, ids=[fx.id for fx in ALL])
def test_replay_counts_match_the_header(fx, profile):
    result = sim(fx, profile)
    assert result["status"] == "ok", result["error"]
    got = {key: result[key] for key in fx.replay[profile]}
    assert got == fx.replay[profile]


BAD = [fx for fx in ALL if fx.path.name.startswith("bad_")]


# The rules whose mechanism the simulation does not model: their findings are "not checked".
NOT_SIMULATED = ("HPU009", "HPU010")


def expected_status(code):
    return "not checked" if code in NOT_SIMULATED else "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fx", BAD, ids=[fx.id for fx in BAD])
def test_every_expected_finding_of_a_bad_fixture_is_confirmed(fx, profile):
    findings = [finding(code, line, fx.path) for code, line in fx.expect]
    assert findings
    results = confirm(findings, sim(fx, profile))
    assert [(r["code"], r["line"], r["status"]) for r in results] == [
        (code, line, expected_status(code)) for code, line in fx.expect]


# Where the fixed code sits in each good fixture: a finding there must not be confirmed. By
# rule, or by fixture for the look-alikes that sit next to another rule's fixtures.
FIXED_AT = {
    "HPU001": "steps[0]",
    "HPU002": "if query is key:",
    "HPU003": "torch.cat(outputs",
    "HPU004": "for step in range(10):",
    "HPU005": "loss.item()",
    "HPU001/good_setup_loop.py": "positions[i] =",
    "HPU005/good_predictions_copied_once.py": "preds.append(out.argmax(1))",
    "HPU003/good_cat_fixed_loop_in_forward.py": "features = torch.cat(",
    "HPU003/good_static_kv_cache.py": "past_key.index_copy_(",
    "HPU006/good_where_select_in_forward.py": "torch.where(mask, tmp, 0)",
    "HPU006/good_ignore_index_loss.py": "ignore_index=pad",
    "HPU007/good_drop_last.py": "drop_last=True",
    "HPU018": 'padding="max_length"',
    "HPU008/good_where_on_device.py": "torch.where(tmp.mean() > 0",
    "HPU008/good_nan_check_when_logging.py": "if torch.isnan(loss):",
    "HPU009/good_graphed_positional.py": "output = model(data, keep)",
    "HPU009/good_module_cacher_kwargs.py": "ModuleCacher(max_graphs=10)",
    "HPU009/good_module_cacher_default_bound.py": "ModuleCacher()",
    "HPU009/good_wrap_in_hpu_graph_kwargs.py": "attention_mask=mask.to(device)",
    "HPU010/good_recompute_mode_argument.py": "FusedSDPA.apply(",
}
GOOD = [fx for fx in ALL if fx.path.name.startswith("good_")]


@pytest.mark.parametrize("fx", GOOD, ids=[fx.id for fx in GOOD])
def test_a_finding_on_the_fixed_line_of_a_good_fixture_is_not_reproduced(fx):
    code = fx.path.parent.name
    lines = fx.path.read_text().splitlines()
    marker = FIXED_AT[fx.id] if fx.id in FIXED_AT else FIXED_AT[code]
    line = next(i for i, text in enumerate(lines, 1) if marker in text)
    for profile in PROFILES:
        (result,) = confirm([finding(code, line, fx.path)], sim(fx, profile))
        want = "not checked" if code in NOT_SIMULATED else "not reproduced"
        assert result["status"] == want, (profile, result)


def _pair(code, bad=None, good=None):
    if bad is not None:
        return BY_ID[f"{code}/{bad}"], BY_ID[f"{code}/{good}"]
    bad = next(fx for fx in ALL if fx.path.parent.name == code and fx.path.name.startswith("bad_"))
    good = next(fx for fx in ALL if fx.path.parent.name == code and fx.path.name.startswith("good_"))
    return bad, good


@pytest.mark.parametrize("profile", PROFILES)
def test_each_fix_delivers_its_promise(profile):
    # HPU001: one compilation in 10 steps instead of 10
    bad, good = (sim(fx, profile) for fx in _pair("HPU001", "bad_vdiffusion.py", "good_vdiffusion.py"))
    assert (bad["compiles"], good["compiles"], good["mark_steps"]) == (10, 1, 10)
    # HPU002: no host sync in forward (10 -> 0), and no graph cut before attention (3 -> 2)
    bad, good = (sim(fx, profile) for fx in _pair("HPU002"))
    assert (bad["syncs"], good["syncs"]) == (10, 0)
    assert (bad["compiles"], good["compiles"]) == (3, 2)
    # HPU003: the evaluation step compiles once, not once per batch (+1 for the final cat)
    bad, good = (sim(fx, profile) for fx in _pair("HPU003", "bad_cat_accumulator.py",
                                                  "good_cat_after_loop.py"))
    assert (bad["compiles"], good["compiles"]) == (11, 2)
    # HPU004: ten iterations no longer pile up in one graph; each graph is one iteration
    bad, good = (sim(fx, profile) for fx in _pair("HPU004"))
    growth = [e for e in bad["events"] if e["kind"] == "growth"]
    assert growth and growth[0]["optimizer_steps"] == 10
    assert not [e for e in good["events"] if e["kind"] == "growth"]
    assert bad["pending_at_exit"] and not good["pending_at_exit"]
    assert good["max_graph_nodes"] * 9 < bad["max_graph_nodes"]
    # HPU005: one host sync (the logging step) instead of one per step
    bad, good = (sim(fx, profile) for fx in _pair("HPU005"))
    assert (bad["syncs"], good["syncs"]) == (10, 1)
    # HPU018: one graph per padded length (6, 4, 5, 7 words) -> one length, the step's graphs only
    bad, good = (sim(fx, profile) for fx in _pair("HPU018"))
    assert (bad["compiles"], good["compiles"]) == (6, 3)


def _host_runs(run):
    return sum(e["count"] for e in run["events"] if e["kind"] == "sync" and HOST_RUN in e["what"])


def _recompile_causes(run):
    return [e["cause"] for e in run["events"] if e["kind"] == "compile" and e["recompile"]]


@pytest.mark.parametrize("profile", PROFILES)
def test_dynamic_shapes_fixed_compile_once_and_read_nothing(profile):
    # HPU006, seed 001's model: nonzero on the host every step, a graph per count of positive
    # elements -> the same two graphs every step, nothing read
    bad, good = (sim(fx, profile) for fx in _pair(
        "HPU006", "bad_where_index_in_forward.py", "good_where_select_in_forward.py"))
    assert _host_runs(bad) == bad["syncs"] == 10 and bad["compiles"] >= 6
    assert all(c["kind"] == "constant" and any(x.get("from_line") == 24 for x in c["changes"])
               for c in _recompile_causes(bad))
    assert (good["compiles"], good["syncs"]) == (2, 0)
    # the masked loss: three mask reads a step (logits[mask], labels[mask], and the backward of
    # logits[mask], which reads the mask again: measured on torch_xla 2.9) and a graph per token
    # count -> one graph
    bad, good = (sim(fx, profile) for fx in _pair(
        "HPU006", "bad_masked_loss.py", "good_ignore_index_loss.py"))
    assert _host_runs(bad) == bad["syncs"] == 30 and bad["compiles"] >= 6
    assert (good["compiles"], good["syncs"]) == (1, 0)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_short_last_batch_costs_exactly_one_compilation(profile):
    bad, good = (sim(fx, profile) for fx in _pair(
        "HPU007", "bad_mnist_last_batch.py", "good_drop_last.py"))
    # two epochs of 5 batches, the last of 2 samples: one extra graph, compiled once, reused in
    # the second epoch; with drop_last=True the two graphs of every step
    assert (bad["compiles"], good["compiles"]) == (3, 2)
    (cause,) = _recompile_causes(bad)
    shapes = {c["input"]: (c["old"], c["new"]) for c in cause["changes"] if c["kind"] == "shape"}
    assert shapes == {"data": ([4, 1, 4, 4], [2, 1, 4, 4]), "target": ([4], [2])}
    xla_bad = sim(BY_ID["HPU007/bad_xla_device_loader.py"], profile)
    (cause,) = _recompile_causes(xla_bad)
    assert [c["loader_line"] for c in cause["changes"]] == [20, 20]


@pytest.mark.parametrize("profile", PROFILES)
def test_data_dependent_branches_sync_every_step_and_record_a_graph_per_path(profile):
    bad, good = (sim(fx, profile) for fx in _pair(
        "HPU008", "bad_branch_on_activation.py", "good_where_on_device.py"))
    syncs = [e for e in bad["events"] if e["kind"] == "sync"]
    assert [(e["what"], e["line"], e["count"]) for e in syncs] == [("bool", 29, 10)]
    (result,) = confirm([finding("HPU008", 29, BY_ID["HPU008/bad_branch_on_activation.py"].path)],
                        bad)
    assert result["path_recompiles"] == 1  # module2's path, then module3's: two graphs
    assert (good["syncs"], good["compiles"]) == (0, 2)
    bad, good = (sim(fx, profile) for fx in _pair(
        "HPU008", "bad_nan_guard_every_step.py", "good_nan_check_when_logging.py"))
    assert (bad["syncs"], good["syncs"]) == (10, 4)  # every step -> two logging steps (x2 reads)


# -- the cross-check with a real lazy engine ------------------------------------------------------
#
# The same fixtures on PyTorch's Lazy Tensor Core (torch._lazy, TorchScript backend). Its
# counts differ from the xla profile only where the two engines' documented semantics differ:
#
# * deferred uploads: LTC keeps a tensor moved with .to("lazy") as host data until the next step
#   marker (which syncs it as an extra output if a graph used it), and reads a parameter the
#   optimizer wrote through detach_copy (measured: tests/test_calibration_ltc.py, ltc_compare.py).
#   So the first run of a graph that reads such tensors differs from its later runs: LTC can
#   compile each graph the simulation compiles once more (the first step's graphs; a path of a
#   branch first taken later, whose parameters the optimizer has not written yet). A step
#   marker with nothing else to run (mark_step at the top of the loop, MpDeviceLoader's marker
#   before the first batch) compiles a graph of uploads alone on LTC, where the simulation,
#   which makes uploads device data at once, compiles nothing. (Where the loop recompiles every
#   step anyway, the uploads ride in a graph that is compiled regardless and the counts agree.)
# * CPU fallbacks: the TorchScript backend has no lowering for some ops that PyTorch/XLA and
#   Gaudi compile into the graph (where.self, index.Tensor and its backward _index_put_impl_,
#   isnan, argmax, sin, copy_ into a slice, split_copy) nor for the data-dependent ones
#   (nonzero). LTC runs each on the CPU (they are in its fallback_ops counters) after executing
#   the graph its inputs need: extra compilations at those ops, on sites named
#   "... (CPU fallback)". An op that runs on the CPU on data already computed needs no graph at
#   all, where the simulation compiles it at the read that follows. The simulation's host runs
#   of data-dependent ops (nonzero, the mask of x[mask]) are such fallbacks on LTC, not reads:
#   LTC's syncs are the simulation's minus those.
# * every scalar is data (FLAGS_torch_lazy_handle_special_scalars is off in LTC; torch_xla turns
#   it on): 0, 1 and -1 are constants on XLA but data on LTC. No fixture multiplies by a
#   changing 0/1; test_ltc_keeps_every_scalar_as_data shows the effect on its own.
#
# The check below compares, cut site by cut site (the line of a step marker or read), the
# compilations of both engines apart from the CPU fallbacks and the host runs, and allows only
# these differences, and only for the fixtures listed with them.
#
# Both engines run torch.equal on the CPU (it is not in torch_xla's xla_native_functions.yaml
# and LTC reports it as a fallback), so the HPU002 fixture agrees apart from the uploads.

LTC_DIFFERENCES = {
    "HPU001/good_vdiffusion.py": {"deferred_upload"},
    "HPU001/good_setup_loop.py": {"deferred_upload", "cpu_fallback"},
    "HPU002/bad_equal_in_forward.py": {"deferred_upload"},
    "HPU002/good_identity_check.py": {"deferred_upload"},
    "HPU003/good_cat_after_loop.py": {"deferred_upload"},
    "HPU003/good_cat_fixed_loop_in_forward.py": {"deferred_upload"},
    "HPU003/bad_kv_cache_concat.py": {"cpu_fallback"},  # argmax
    "HPU003/good_static_kv_cache.py": {"cpu_fallback"},  # index_copy_, ~mask, argmax
    "HPU004/good_mark_step.py": {"deferred_upload"},
    "HPU004/good_torch_device_type_check.py": {"deferred_upload"},
    "HPU005/bad_item_every_step.py": {"deferred_upload"},
    "HPU005/good_item_when_logging.py": {"deferred_upload"},
    "HPU005/bad_predictions_copied_every_batch.py": {"cpu_fallback"},  # argmax
    "HPU005/good_predictions_copied_once.py": {"cpu_fallback"},  # argmax
    "HPU006/bad_masked_loss.py": {"deferred_upload", "cpu_fallback"},
    "HPU006/bad_where_index_in_forward.py": {"deferred_upload", "cpu_fallback"},
    "HPU006/good_ignore_index_loss.py": {"deferred_upload"},
    "HPU006/good_where_select_in_forward.py": {"deferred_upload", "cpu_fallback"},
    "HPU007/bad_mnist_last_batch.py": {"deferred_upload"},
    "HPU007/bad_xla_device_loader.py": {"deferred_upload"},
    "HPU007/good_drop_last.py": {"deferred_upload"},
    "HPU008/bad_branch_on_activation.py": {"deferred_upload"},
    "HPU008/bad_nan_guard_every_step.py": {"deferred_upload", "cpu_fallback"},
    "HPU008/good_nan_check_when_logging.py": {"deferred_upload", "cpu_fallback"},
    "HPU008/good_where_on_device.py": {"deferred_upload", "cpu_fallback"},
    "HPU009/bad_graphed_keyword_input.py": {"deferred_upload"},
    "HPU009/good_graphed_positional.py": {"deferred_upload"},
    "HPU009/good_module_cacher_default_bound.py": {"deferred_upload"},
    "HPU009/good_module_cacher_kwargs.py": {"deferred_upload"},
    "HPU009/good_wrap_in_hpu_graph_kwargs.py": {"cpu_fallback"},
    "HPU010/bad_sdp_kernel_in_compiled_forward.py": {"deferred_upload"},
    "HPU010/good_recompute_mode_argument.py": {"deferred_upload"},
}


@pytest.fixture(scope="module")
def ltc_results():
    # A fresh process per fixture: LTC's compilation cache lives as long as the process.
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda fx: run(str(fx.path), engine="ltc", timeout=180), ALL))
    return {fx.id: r for fx, r in zip(ALL, results)}


def test_torch_equal_runs_on_the_host_in_both_engines(ltc_results):
    ltc = ltc_results["HPU002/bad_equal_in_forward.py"]
    assert ltc["fallback_ops"]["equal"] == 10
    assert [e["count"] for e in ltc["events"] if e["kind"] == "sync"] == [10]


def test_data_dependent_ops_run_on_the_host_in_both_engines(ltc_results):
    # the simulation's host runs of nonzero are LTC's CPU fallbacks of the same op
    fx = BY_ID["HPU006/bad_where_index_in_forward.py"]
    ltc = ltc_results[fx.id]
    assert ltc["fallback_ops"]["nonzero"] == _host_runs(sim(fx, "xla")) == 10
    # x[mask] and its backward: LTC runs the whole indexing (and the index_put of the backward)
    # on the CPU, the simulation only the mask's nonzero, as PyTorch/XLA does
    fx = BY_ID["HPU006/bad_masked_loss.py"]
    ops = ltc_results[fx.id]["fallback_ops"]
    assert ops["index.Tensor"] + ops["_index_put_impl_"] == _host_runs(sim(fx, "xla")) == 30


@pytest.mark.parametrize("fx", ALL, ids=[fx.id for fx in ALL])
def test_ltc_cross_check(fx, ltc_results):
    ltc = ltc_results[fx.id]
    assert ltc["status"] == "ok", (ltc["error"], ltc["stderr"])
    assert ltc["compiles"] == fx.replay["ltc"]["compiles"]
    xla = sim(fx, "xla")
    host_runs = _host_runs(xla)
    assert ltc["mark_steps"] == xla["mark_steps"] and ltc["syncs"] == xla["syncs"] - host_runs
    # compilations at CPU fallbacks (LTC) and at host runs of data-dependent ops (simulation)
    # are the two engines' ways of running those ops; the rest is compared site by site
    found = site_differences(ltc["events"], xla["events"])
    if "cpu_fallback" in found:
        assert ltc["fallback_ops"], "a CPU fallback difference, but LTC counted no fallback op"
    assert found == LTC_DIFFERENCES.get(fx.id, set())


def test_ltc_keeps_every_scalar_as_data(tmp_path):
    script = tmp_path / "zero_one.py"
    script.write_text(
        "import torch\n"
        "import torch_xla.core.xla_model as xm\n"
        "x = torch.ones(3).to(xm.xla_device())\n"
        "xm.mark_step()\n"
        "for step in range(6):\n"
        "    y = x * (step % 2)\n"
        "    xm.mark_step()\n"
    )
    ltc = run(str(script), engine="ltc", timeout=120)
    xla = replay(str(script), profile="xla")
    hpu = replay(str(script), profile="hpu")
    # XLA and Gaudi bake 0 and 1 into the graph: two graphs. LTC passes both as data: one.
    assert (xla["compiles"], hpu["compiles"], ltc["compiles"]) == (2, 2, 1)


def test_fixture_ids_are_stable():
    # the LTC table above names fixtures by id: a renamed fixture must not silently drop out
    assert set(LTC_DIFFERENCES) <= set(BY_ID)
    assert FIXTURES.name == "fixtures"
