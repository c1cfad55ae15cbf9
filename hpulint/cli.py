"""The ``hpulint`` command.

    hpulint [check] PATH...      lint files and folders (the default command)
    hpulint rule HPU001          print a rule's page; ``hpulint rule --all`` lists the rules
    hpulint verify SCRIPT        replay a script on the simulated lazy device, or on real
                                 Dynamo with --profile compile (needs torch)
    hpulint explain LOG...       map the events in Dynamo, PyTorch/XLA or Gaudi logs to rules and lines

Exit status: 0 nothing found, 1 findings, 2 usage, configuration or file errors.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional

from hpulint import __version__
from hpulint.config import TARGETS, Config, check_codes, find_pyproject, load_config
from hpulint.discovery import discover
from hpulint.model import ConfigError
from hpulint.report import FORMATS

COMMANDS = ("check", "rule", "verify", "clean", "explain")


def _codes(text: str) -> list:
    return [c.strip().upper() for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hpulint",
        description="Find PyTorch habits that recompile or sync every step on lazy-mode accelerators.",
    )
    parser.add_argument("--version", action="version", version=f"hpulint {__version__}")
    sub = parser.add_subparsers(dest="command")

    check = sub.add_parser("check", help="lint files and folders (default)")
    check.add_argument("paths", nargs="*", default=["."], help="files or folders ('-' reads stdin)")
    check.add_argument("--select", type=_codes, help="codes or prefixes to check (replaces the config's)")
    check.add_argument("--extend-select", type=_codes, default=[], help="codes or prefixes to add")
    check.add_argument("--ignore", type=_codes, default=[], help="codes or prefixes to skip")
    check.add_argument("--target", choices=TARGETS, help="device the code runs on (default: config, else auto)")
    check.add_argument("--format", choices=FORMATS, default="text",
                       help="text (default), concise, json, json-lines, github, sarif")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("-q", "--quiet", action="store_true", help="print only findings and errors")
    check.add_argument("--config", type=Path, help="pyproject.toml to read [tool.hpulint] from")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--stdin-filename", help="the path to report (and match config globs) for '-'")
    check.add_argument("-j", "--jobs", type=int, default=0,
                       help="worker processes (default: the number of CPUs; 1: no workers)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write .hpulint_cache/")
    fix = check.add_argument_group("fixes")
    fix.add_argument("--fix", action="store_true", help="apply the safe fixes (and the unsafe ones if allowed)")
    fix.add_argument("--unsafe-fixes", action="store_true", default=None,
                     help="also apply fixes that may change behaviour (config: unsafe-fixes = true)")
    fix.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                     help="never apply unsafe fixes, whatever the config says")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fix.add_argument("--show-fixes", action="store_true", help="list what was fixed, per file")
    fix.add_argument("--exit-non-zero-on-fix", action="store_true",
                     help="exit 1 when something was fixed, even if nothing remains")

    clean = sub.add_parser("clean", help="remove the .hpulint_cache/ folder")
    clean.add_argument("path", nargs="?", default=".", help="the project folder (default: here)")

    rule = sub.add_parser("rule", help="explain a rule")
    rule.add_argument("code", nargs="?", help="a rule code, e.g. HPU001")
    rule.add_argument("--all", action="store_true", help="list every rule")

    explain = sub.add_parser("explain", help="map the events in engine logs to rules, lines and fixes")
    explain.add_argument("logs", nargs="+", metavar="LOG",
                         help="TORCH_LOGS=recompiles,graph_breaks output, PT_XLA_DEBUG output or "
                              "metrics_report() text, a PT_HPU_METRICS_FILE")
    explain.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    explain.add_argument("--root", action="append", default=[], metavar="DIR",
                         help="where to look for the source files the logs name (repeatable)")
    explain.add_argument("--no-lint", action="store_true",
                         help="do not lint the source files to see whether a static finding covers an event")

    verify = sub.add_parser("verify", help="replay a script on the simulated lazy device, or on "
                                           "real Dynamo with --profile compile (needs torch)")
    try:
        from hpulint.lazy.cli import add_arguments
    except ImportError:  # the verifier is not installed: say so when it is asked for
        verify.add_argument("rest", nargs=argparse.REMAINDER)
    else:
        add_arguments(verify)
    return parser


def main(argv: Optional[list] = None) -> int:
    global _LINTED
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rule":
            return _rule(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "clean":
            return _clean(args)
        if args.command == "explain":
            return _explain(args)
        code = _check(args)
        _LINTED = True
        return code
    except ConfigError as exc:
        print(f"hpulint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130


def entry() -> None:
    """The ``hpulint`` command (and ``python -m hpulint``): :func:`main`, then, after a lint,
    an exit that skips the interpreter's teardown. A lint ends holding the linked project and
    the results, millions of objects that a normal exit frees one by one: about 0.3 s, a sixth
    of a warm run on torch's nn/optim/utils. Everything the lint writes (the report, the cache
    entries, fixed files) is written and closed by then; the other commands (``verify`` runs
    user code, which may count on exit handlers) exit normally."""
    code = main()
    if not _LINTED:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # pragma: no cover - the reader went away
        pass
    os._exit(code)


_LINTED = False  # set once a lint (check, --fix, --diff) has returned its exit status


# --- check -----------------------------------------------------------------------------------


def resolve_config(args) -> Config:
    if args.isolated:
        cfg = Config()
    elif args.config is not None:
        if not args.config.is_file():
            raise ConfigError(f"{args.config}: no such file")
        cfg = load_config(args.config)
    else:
        first = next((p for p in args.paths if p != "-"), None)
        start = Path(first) if first else Path(args.stdin_filename or ".")
        if not start.exists():
            start = Path.cwd()
        cfg = load_config(find_pyproject(start))
    if args.select is not None:
        check_codes(args.select, "--select")
        cfg.select = args.select
    if args.extend_select:
        check_codes(args.extend_select, "--extend-select")
        cfg.extend_select = [*cfg.extend_select, *args.extend_select]
    if args.ignore:
        check_codes(args.ignore, "--ignore")
        cfg.ignore = [*cfg.ignore, *args.ignore]
    if args.target:
        cfg.target = args.target
    return cfg


def lint_project(files: list, paths: list, cfg: Config, jobs: int = 1, cache=None, keep_tree: bool = False,
                 stdin_name: Optional[str] = None) -> tuple:
    """(results, linked facts) of ``files`` linted as part of their project (see hpulint.index)."""
    from hpulint.index import index_for, project_root
    from hpulint.runner import run

    roots = [p for p in paths if p != "-"] or ([stdin_name] if stdin_name else ["."])
    root = project_root(roots, cfg)
    # the one folder given is the project root: the files found in it are the whole project
    whole = files if paths == roots and len(roots) == 1 and Path(roots[0]).is_dir() \
        and Path(roots[0]).resolve() == root.resolve() else None
    infos = index_for(files, root, discover, cfg, everything=whole)
    return run(infos, [str(f) for f in files], cfg, jobs=jobs, cache=cache, keep_tree=keep_tree)


def _project_facts(files: list, paths: list, cfg: Config, args) -> tuple:
    """(linked facts, FileInfo by resolved path) of the project ``files`` belong to."""
    from hpulint.index import index_for, project_root
    from hpulint.runner import link_only

    roots = [p for p in paths if p != "-"] or ([args.stdin_filename] if args.stdin_filename else ["."])
    root = project_root(roots, cfg)
    infos = index_for(files, root, discover, cfg)
    cache = None
    if not args.no_cache:
        from hpulint.cache import Cache

        cache = Cache(cfg.source.parent if cfg.source else Path.cwd(), cfg.fingerprint(), cfg.summary_fingerprint())
    return link_only(infos, cfg, cache), {Path(i.path).resolve(): i for i in infos}


def _clean(args) -> int:
    from hpulint.cache import clean

    root = Path(args.path)
    cfg_path = find_pyproject(root) if root.exists() else None
    removed = [str(r / ".hpulint_cache") for r in {root, *( [cfg_path.parent] if cfg_path else [])} if clean(r)]
    print("removed " + ", ".join(removed) if removed else "no cache to remove")
    return 0


def _check(args) -> int:
    from hpulint.report import render

    cfg = resolve_config(args)
    if args.fix or args.diff:
        return _fix(args, cfg)
    findings, errors = [], []
    # SARIF carries each fix's edits: keep the parsed trees (one parse per file, no cache)
    sarif = args.format == "sarif"
    warnings = []
    files, missing = discover([p for p in args.paths if p != "-"], cfg, warnings)
    errors += missing
    for text in warnings:
        print(f"hpulint: warning: {text}", file=sys.stderr)
    cache = None
    if not args.no_cache and not sarif:
        from hpulint.cache import Cache

        cache = Cache(cfg.source.parent if cfg.source else Path.cwd(), cfg.fingerprint(), cfg.summary_fingerprint())
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    results, linked = lint_project(files, args.paths, cfg, jobs=jobs, cache=cache, keep_tree=sarif,
                                   stdin_name=args.stdin_filename)
    if "-" in args.paths:
        from hpulint.engine import check_source
        from hpulint.index import info_for, project_root

        name = args.stdin_filename or "-"
        module = info_for(Path(name), project_root([name], cfg)).module if args.stdin_filename else None
        if name.endswith(".ipynb"):
            from hpulint.notebook import check_notebook

            results.insert(0, check_notebook(name, cfg, keep_tree=sarif, text=sys.stdin.read(), linked=linked,
                                             module_name=module))
        else:
            results.insert(0, check_source(sys.stdin.read(), name, cfg, keep_tree=sarif, linked=linked,
                                           module_name=module))
    fix_changes = {}
    for result in results:
        findings += result.findings
        errors += result.errors
        if sarif:
            from hpulint.fix import sarif_edits

            fix_changes.update(sarif_edits(result, cfg))
    for f in findings:
        if f.fix is not None and not cfg.fixable_code(f.code):
            f.fix = None
    for err in errors:
        print(err, file=sys.stderr)
    out = render(args.format, findings, errors, statistics=args.statistics, quiet=args.quiet,
                 fix_changes=fix_changes, files=len(results))
    sys.stdout.write(out)
    if errors:
        return 2
    if findings and not args.exit_zero:
        return 1
    return 0


def _fix(args, cfg: Config) -> int:
    from collections import Counter

    from hpulint.fix import fix_file, fix_source, unified_diff
    from hpulint.report import files_checked, render

    unsafe = cfg.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes
    outcomes = []
    out = sys.stdout
    if "-" in args.paths:
        name = args.stdin_filename or "-"
        linked, infos = _project_facts([], args.paths, cfg, args)
        info = infos.get(Path(name).resolve()) if args.stdin_filename else None
        module = info.module if info else None
        if name.endswith(".ipynb"):
            from hpulint.notebook import fix_notebook

            outcome = fix_notebook(name, cfg, unsafe, write=False, text=sys.stdin.read(), linked=linked,
                                   module_name=module)
        else:
            outcome = fix_source(sys.stdin.read(), name, cfg, unsafe, linked, module)
        if not args.diff:
            sys.stdout.write(outcome.fixed if not outcome.errors else outcome.original)
            out = sys.stderr  # stdout carries the fixed text
        outcomes.append(outcome)
    warnings = []
    files, missing = discover([p for p in args.paths if p != "-"], cfg, warnings)
    for text in warnings:
        print(f"hpulint: warning: {text}", file=sys.stderr)
    linked, infos = _project_facts(files, args.paths, cfg, args)
    for path in files:
        info = infos.get(Path(path).resolve())
        outcomes.append(fix_file(path, cfg, unsafe, write=not args.diff, linked=linked,
                                 module_name=info.module if info else None))
    errors = list(missing)
    remaining, fixed = [], Counter()
    for o in outcomes:
        errors += o.errors
        remaining += o.remaining
        for f in o.applied:
            fixed[(o.path, f.code, f.name)] += 1
        if args.diff and o.changed:
            out.write(unified_diff(o))
    for err in errors:
        print(err, file=sys.stderr)
    n_fixed = sum(fixed.values())
    hidden = sum(o.hidden_unsafe() for o in outcomes) if not unsafe else 0
    if not args.diff:
        out.write(render("text", remaining, errors, quiet=True, fixable_hint=False))
    if args.show_fixes and fixed:
        out.write(f"{'Would fix' if args.diff else 'Fixed'} {n_fixed} finding{'s' if n_fixed != 1 else ''}:\n")
        for path in sorted({p for p, _, _ in fixed}):
            out.write(f"- {path}:\n")
            for (p, code, name), n in sorted(fixed.items()):
                if p == path:
                    out.write(f"    {n} \u00d7 {code} ({name})\n")
    if not args.quiet:
        verb = "would be fixed" if args.diff else "fixed"
        total = n_fixed + len(remaining)
        checked = files_checked(len(outcomes))
        if total or errors:
            out.write(f"Found {total} finding{'s' if total != 1 else ''} ({n_fixed} {verb}, {len(remaining)} "
                      f"remaining; {checked}).\n")
        elif not outcomes:
            out.write("No files checked.\n")
        else:
            out.write(f"All checks passed! ({checked})\n")
        if hidden:
            out.write(f"{hidden} more fix{'es' if hidden != 1 else ''} available with `--unsafe-fixes`.\n")
    if errors:
        return 2
    if args.diff:
        return 1 if any(o.changed for o in outcomes) else 0
    if remaining and not args.exit_zero:
        return 1
    if args.exit_non_zero_on_fix and n_fixed:
        return 1
    return 0


# --- rule ------------------------------------------------------------------------------------


def rule_page(code: str) -> Optional[str]:
    from importlib import resources

    try:
        return resources.files("hpulint.pages").joinpath(f"{code}.md").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        pass
    # an editable install maps hpulint.pages only when it is importable: read the checkout's rules/
    page = Path(__file__).resolve().parent.parent / "rules" / f"{code}.md"
    return page.read_text(encoding="utf-8") if page.is_file() else None


def _rule(args) -> int:
    from hpulint.rules import ALL_RULES, RULES_BY_CODE

    if args.all or not args.code:
        width = max(len(r.name) for r in ALL_RULES)
        for r in ALL_RULES:
            fix = f"fix: {r.fix_safety}" if r.fix_safety else "no fix"
            extra = f" (on by default only for target {r.default_target})" if r.default_target else ""
            print(f"{r.code}  {r.name:<{width}}  {r.summary}{extra} [{fix}]")
        return 0
    code = args.code.upper()
    if code not in RULES_BY_CODE:
        print(f"hpulint: error: no rule {args.code!r} (see `hpulint rule --all`)", file=sys.stderr)
        return 2
    page = rule_page(code)
    if page is None:
        rule = RULES_BY_CODE[code]
        page = f"# {code} {rule.name}\n\n{rule.summary}\n"
    sys.stdout.write(page)
    return 0


# --- explain ---------------------------------------------------------------------------------


def _explain(args) -> int:
    from hpulint.explain import explain_logs
    from hpulint.explain.render import render

    reports, errors = explain_logs(args.logs, roots=args.root, lint=not args.no_lint)
    for err in errors:
        print(f"hpulint: error: {err}", file=sys.stderr)
    sys.stdout.write(render(args.format, reports))
    if errors:
        return 2
    return 1 if any(r.events for r in reports) else 0


# --- verify ----------------------------------------------------------------------------------


def _verify(args) -> int:
    try:
        from hpulint.lazy.cli import run
    except ImportError as exc:
        print(f"hpulint: error: `hpulint verify` needs torch: pip install 'hpulint[verify]' ({exc})",
              file=sys.stderr)
        return 2
    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
