"""`hpulint explain` on PyTorch/XLA and Gaudi output written here in the formats their
documentation and source give (PyTorch/XLA: docs/source/learn/troubleshoot.md,
torch_xla/csrc/debug_util.cpp, torch_xla/csrc/runtime/metrics_analysis.cpp; Gaudi: "Handling
Dynamic Shapes" and the "Detecting frequent graph re-compilations" blog post). These are not real
logs: tests/test_explain.py reads the real ones (Dynamo, PyTorch/XLA); no Gaudi output was at hand."""
from __future__ import annotations

import json
import textwrap

from hpulint.explain import explain_logs

TRAIN = textwrap.dedent("""\
    import torch
    import torch_xla.core.xla_model as xm


    def train(model, loader, optimizer, device):
        for step, (x, y) in enumerate(loader):
            x = x[:, : step + 1].to(device)
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            xm.mark_step()
            print(loss.item())
""")


def block(kind: str, cause: str, graph_hash: str, frames: list) -> str:
    p = f"{kind} Analysis: "
    lines = [p + "=" * 80, p + f"{kind} Cause", p + "  " + cause, p + "Graph Info: ",
             p + f"  Graph Hash: {graph_hash}", p + "  Number of Graph Inputs: 3",
             p + "  Number of Graph Outputs: 1", p + "Python Frame Triggered Execution: "]
    lines += [p + f"  {fn} ({file}:{line})" for fn, file, line in frames]
    lines += [p + "-" * 80, p + "=" * 80]
    return "\n".join(lines) + "\n"


def events(tmp_path, name: str, text: str) -> list:
    log = tmp_path / name
    log.write_text(text)
    reports, errors = explain_logs([str(log)], roots=[tmp_path])
    assert errors == []
    return reports[0]


def test_xla_analysis_blocks(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    lib = "/usr/lib/python3/site-packages/torch_xla/core/xla_model.py"
    marker = "user torch_xla.sync"
    read = "most likely user code trying to access tensor value before torch_xla.sync"
    text = ""
    for step, h in enumerate(["aa11", "bb22", "cc33"]):
        frames = [("sync", lib, 1055), ("mark_step", lib, 1080), ("train", "/home/me/proj/train.py", 11),
                  ("<module>", "/home/me/proj/train.py", 20)]
        text += block("Compilation", marker, h, frames)
        text += block("Execution", marker, h, frames)
        text += block("Execution", read, "dd44", [("train", "/home/me/proj/train.py", 12)])
    text += "pt-xla-profiler: TransferFromDeviceTime too frequent: 3 counts during 3 steps\n"
    report = events(tmp_path, "xla_debug.log", text)
    got = [(e.kind, e.rule, e.line, e.count, e.coverage) for e in report.events]
    assert got == [
        ("host sync", "HPU005", 12, 3, "covered"),  # print(loss.item()), three executions
        ("recompilation", "HPU001", 11, 2, "covered"),  # 3 graphs at the marker; x[:, : step + 1]
        ("too frequent", "HPU005", None, 1, "no line in the log"),
    ]
    assert report.notes == ["3 compilations and 6 executions analysed"]


def test_xla_metrics_report(tmp_path):
    report = textwrap.dedent("""\
        Metric: CompileTime
          TotalSamples: 21
          Accumulator: 13s100ms
        Metric: TransferFromDeviceTime
          TotalSamples: 4
        Counter: MarkStep
          Value: 12
        Counter: aten::nonzero
          Value: 12
        Counter: aten::_local_scalar_dense
          Value: 4
    """)
    r = events(tmp_path, "metrics.txt", report)
    assert [(e.kind, e.rule, e.text) for e in r.events] == [
        ("too frequent", None, "CompileTime too frequent: 21 counts during 12 steps (metrics report)"),
        ("cpu fallback", "HPU006", "aten::nonzero ran on the CPU 12 times (metrics report)"),
    ]
    quiet = report.replace("21", "3")
    r = events(tmp_path, "quiet.txt", quiet.replace("aten::nonzero", "UncachedCompile"))
    assert r.events == [] and r.notes == ["metrics report: 3 compilations, 4 transfers to the host, 12 step markers"]


def test_gaudi_metrics_file_and_printed_stats(tmp_path):
    dumps = [{"metric_name": "graph_compilation", "triggered_by": "metric_change",
              "statistics": {"TotalNumber": n, "TotalTime": 100 * n, "AvgTime": 100}} for n in (1, 2, 3, 3, 4, 6)]
    dumps.append({"metric_name": "cpu_fallback", "statistics": {"TotalNumber": 2, "aten::nonzero": 2}})
    r = events(tmp_path, "metricslog.json", json.dumps(dumps))
    assert [(e.kind, e.rule, e.count) for e in r.events] == [("recompilation", None, 3), ("cpu fallback", "HPU006", 2)]
    printed = "".join(f"graph_compilation:  [('TotalNumber', {n}), ('TotalTime', {n * 50}), ('AvgTime', 50.0)]\n"
                      for n in (3, 3, 3, 3))
    r = events(tmp_path, "train.out", printed)
    assert r.events == [] and r.notes == ["graph_compilation: 3 compilations in 4 reports"]
    growing = "".join(f"graph_compilation:  [('TotalNumber', {n}), ('TotalTime', 1)]\n" for n in (3, 4, 5, 6))
    r = events(tmp_path, "grow.out", growing)
    assert [(e.kind, e.log_line, e.count) for e in r.events] == [("recompilation", 4, 1)]
