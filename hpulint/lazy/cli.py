"""``hpulint verify``: the command-line half of the verifier (no torch import at module level).

The lead's ``hpulint/cli.py`` wires these two functions into ``hpulint verify``; until then
``python -m hpulint.lazy SCRIPT [-- ARGS]`` runs the same thing.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys


def _intermixed(parser: argparse.ArgumentParser) -> None:
    """Let options follow SCRIPT (``verify s.py --format json -- --epochs 3``).

    Plain argparse binds SCRIPT and ARGS in one go and then rejects later positionals; the
    intermixed parser does not. Subparsers are parsed through ``parse_known_args``, so the
    override works for ``hpulint verify`` as well as for ``python -m hpulint.lazy``.
    """
    plain = parser.parse_known_args
    busy = []

    def parse_known_args(args=None, namespace=None):
        if busy:  # parse_known_intermixed_args calls back into parse_known_args
            return plain(args, namespace)
        busy.append(True)
        try:
            return argparse.ArgumentParser.parse_known_intermixed_args(parser, args, namespace)
        finally:
            busy.pop()

    parser.parse_known_args = parse_known_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", metavar="SCRIPT", help="the training or inference script to replay")
    parser.add_argument("script_args", metavar="ARGS", nargs="*", default=[],
                        help="arguments for the script, after --")
    parser.add_argument("--profile", choices=("hpu", "xla", "compile"), default="hpu",
                        help="device semantics: hpu (Gaudi lazy mode, the default), xla "
                             "(PyTorch/XLA), or compile (torch.compile on real Dynamo: graphs, "
                             "graph breaks, recompilations, eager fallbacks)")
    parser.add_argument("--backend", default=None, metavar="NAME",
                        help="compile profile: the backend torch.compile gets (default eager: "
                             "Dynamo's guards and graph breaks do not depend on it); keep: "
                             "each call's own, except Gaudi's and XLA's")
    parser.add_argument("--engine", choices=("sim", "ltc"), default="sim",
                        help="sim: the simulated device (counts, causes, lines); ltc: PyTorch's "
                             "real Lazy Tensor Core (torch._lazy), compilations only")
    parser.add_argument("--scalars", choices=("data", "constant"), default=None,
                        help="how Python scalar operands (a learning rate, a bias correction) "
                             "enter the graph on the hpu and xla profiles: data (the default, "
                             "as PyTorch/XLA does: only 0, 1 and -1 are constants) or constant "
                             "(every value is a constant: the worst case, reported as an "
                             "assumption)")
    parser.add_argument("--no-compute", dest="compute", action="store_false",
                        help="hpu and xla profiles: do not compute device ops, only the shapes of "
                             "their results (small results read as zeros): for models too big "
                             "for this CPU; counts that depend on device values (a data-dependent "
                             "shape, an if on a tensor) may differ")
    parser.add_argument("--format", dest="format", choices=("text", "json"), default="text",
                        help="report format")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="stop the script after this many seconds of wall time, counted from its "
                             "first line (default 300)")
    parser.add_argument("--max-steps", dest="max_steps", type=int, default=None, metavar="N",
                        help="stop the script cleanly after N step markers")
    _intermixed(parser)


def _usage(message: str) -> int:
    print(f"hpulint verify: error: {message}", file=sys.stderr)
    return 2


def _lint(source: str, path: str):
    """The static findings for the script, or (None, why) when the linter cannot run."""
    try:
        from hpulint import lint_source
    except ImportError as e:
        return None, f"hpulint.lint_source is not available ({e})"
    try:
        found = lint_source(source, path=path)
    except Exception as e:  # noqa: BLE001 - a linter failure must not hide the replay
        return None, f"{type(e).__name__}: {e}"
    findings = [f for f in found if hasattr(f, "code") and hasattr(f, "line")]
    return findings, None


def run(args) -> int:
    """Replay, lint, confirm, report. 0: the script ran; 1: it failed or timed out; 2: usage."""
    script = args.script
    if not os.path.isfile(script):
        return _usage(f"{script}: no such file")
    if args.timeout is not None and args.timeout <= 0:
        return _usage("--timeout must be positive")
    if args.max_steps is not None and args.max_steps < 1:
        return _usage("--max-steps must be at least 1")
    if args.profile == "compile" and args.engine != "sim":
        return _usage("--profile compile runs real Dynamo: --engine does not apply")
    scalars = getattr(args, "scalars", None)
    if scalars is not None and (args.profile == "compile" or args.engine != "sim"):
        return _usage("--scalars applies to the simulated device (--profile hpu or xla, "
                      "--engine sim) only")
    if not getattr(args, "compute", True) and (args.profile == "compile" or args.engine != "sim"):
        return _usage("--no-compute applies to the simulated device (--profile hpu or xla, "
                      "--engine sim) only")
    if args.backend is not None and args.profile != "compile":
        return _usage("--backend applies to --profile compile only")
    if importlib.util.find_spec("torch") is None:
        return _usage("verify needs PyTorch: pip install 'hpulint[verify]'")
    notebook = None
    try:
        if script.endswith(".ipynb"):  # its code cells, in order (hpulint/notebook)
            from hpulint.notebook import Notebook

            notebook = Notebook.load(script)
            source = notebook.python
        else:
            with open(script, encoding="utf-8") as f:
                source = f.read()
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return _usage(f"{script}: cannot read: {e}")

    from . import confirm as conf
    from . import report
    from .replay import run as replay_run

    findings, lint_error = _lint(source, script)
    result = replay_run(script, list(args.script_args), profile=args.profile,
                        engine=args.engine, timeout=args.timeout, max_steps=args.max_steps,
                        compile_backend=args.backend, scalars=scalars,
                        compute=getattr(args, "compute", True))
    if lint_error:
        result["lint_error"] = lint_error
    confirmed = conf.confirm(findings or [], result, source)
    unexplained = conf.unexplained(findings or [], result, source)
    if args.format == "json":
        out = report.format_json(result, confirmed, unexplained) + "\n"
    else:
        out = report.format_text(result, confirmed, unexplained)
    if notebook is not None:  # joined-source lines -> cell N, line L
        out = notebook.relabel(out, result.get("script") or script, args.format == "json")
    sys.stdout.write(out)
    return 0 if result.get("status") in ("ok", "stopped") else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hpulint.lazy",
        description="Replay a script on a simulated lazy device (Gaudi HPU or PyTorch/XLA), "
                    "count its graph compilations and host syncs, and confirm hpulint's findings.")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    return run(args)
