"""The ``hpulint`` command.

    hpulint [check] PATH...      lint files and folders (the default command)
    hpulint rule HPU001          print a rule's page; ``hpulint rule --all`` lists the rules
    hpulint verify SCRIPT        replay a script on the simulated lazy device, or on real
                                 Dynamo with --profile compile (needs torch)

Exit status: 0 nothing found, 1 findings, 2 usage, configuration or file errors.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional

from hpulint import __version__
from hpulint.config import DEFAULT_EXCLUDE, TARGETS, Config, check_codes, find_pyproject, load_config
from hpulint.model import ConfigError
from hpulint.report import FORMATS

COMMANDS = ("check", "rule", "verify", "clean")


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
        return _check(args)
    except ConfigError as exc:
        print(f"hpulint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130


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


def discover(paths: list, cfg: Config) -> tuple:
    """(python files, errors) under ``paths``, skipping caches, VCS and virtual environments."""
    from hpulint.model import FileError

    files, errors, seen = [], [], set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if not cfg.is_excluded(path) and path not in seen:
                seen.add(path)
                files.append(path)
            continue
        if not path.is_dir():
            errors.append(FileError(raw, "no such file or directory"))
            continue
        for folder, dirs, names in os.walk(path):
            here = Path(folder)
            dirs[:] = sorted(
                d for d in dirs
                if not _default_excluded(d) and not (here / d / "pyvenv.cfg").exists()
                and not cfg.is_excluded(here / d)
            )
            for name in sorted(names):
                if name.endswith((".py", ".pyi")):
                    p = here / name
                    if not cfg.is_excluded(p) and p not in seen:
                        seen.add(p)
                        files.append(p)
    return files, errors


def _default_excluded(name: str) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDE)


def _clean(args) -> int:
    from hpulint.cache import clean

    root = Path(args.path)
    cfg_path = find_pyproject(root) if root.exists() else None
    removed = [str(r / ".hpulint_cache") for r in {root, *( [cfg_path.parent] if cfg_path else [])} if clean(r)]
    print("removed " + ", ".join(removed) if removed else "no cache to remove")
    return 0


def _check(args) -> int:
    from hpulint.report import render
    from hpulint.runner import lint_files

    cfg = resolve_config(args)
    if args.fix or args.diff:
        return _fix(args, cfg)
    findings, errors = [], []
    # SARIF carries each fix's edits: keep the parsed trees (one parse per file, no cache)
    sarif = args.format == "sarif"
    results = []
    if "-" in args.paths:
        from hpulint.engine import check_source

        name = args.stdin_filename or "-"
        results.append(check_source(sys.stdin.read(), name, cfg, keep_tree=sarif))
    files, missing = discover([p for p in args.paths if p != "-"], cfg)
    errors += missing
    if sarif:
        from hpulint.engine import check_file

        results += [check_file(p, cfg, keep_tree=True) for p in files]
    else:
        cache = None
        if not args.no_cache:
            from hpulint.cache import Cache

            cache = Cache(cfg.source.parent if cfg.source else Path.cwd(), cfg.fingerprint())
        jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
        results += lint_files(files, cfg, jobs=jobs, cache=cache)
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
                 fix_changes=fix_changes)
    sys.stdout.write(out)
    if errors:
        return 2
    if findings and not args.exit_zero:
        return 1
    return 0


def _fix(args, cfg: Config) -> int:
    from collections import Counter

    from hpulint.fix import fix_file, fix_source, unified_diff
    from hpulint.report import render

    unsafe = cfg.unsafe_fixes if args.unsafe_fixes is None else args.unsafe_fixes
    outcomes = []
    out = sys.stdout
    if "-" in args.paths:
        name = args.stdin_filename or "-"
        outcome = fix_source(sys.stdin.read(), name, cfg, unsafe)
        if not args.diff:
            sys.stdout.write(outcome.fixed if not outcome.errors else outcome.original)
            out = sys.stderr  # stdout carries the fixed text
        outcomes.append(outcome)
    files, missing = discover([p for p in args.paths if p != "-"], cfg)
    for path in files:
        outcomes.append(fix_file(path, cfg, unsafe, write=not args.diff))
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
        if total or errors:
            out.write(f"Found {total} finding{'s' if total != 1 else ''} ({n_fixed} {verb}, {len(remaining)} remaining).\n")
        else:
            out.write("All checks passed!\n")
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
