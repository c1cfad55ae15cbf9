"""Lint a project: summaries (cached, or by analysing files), the link, then each file finished.

Phase one analyses every file that has no cached summary; a worker keeps the files it analysed
that are being linted, so phase three finishes them in the same process without parsing them
again. A linted file whose summary was cached reuses its cached result when the project still
answers its recorded questions the same way; otherwise it is analysed and finished then.

This module imports the engine (and so libcst) only when a file has to be analysed, so a re-run
on unchanged files never pays for the parser's import.
"""
from __future__ import annotations

import gc

import multiprocessing
import pickle
from pathlib import Path

from hpulint.config import Config


def _light(result):
    """A result that pickles cheaply: no tree, no nodes, fixes reduced to their applicability."""
    from hpulint.model import Fix

    for f in result.findings:
        f.node = None
        if f.fix is not None:
            f.fix = Fix(f.fix.applicability, f.fix.description)
    result.module = None
    result.positions = None
    result.source = None
    return result


class _Cached:
    """A cached file's result: the same fields the CLI reads from a FileResult."""

    def __init__(self, path: str, findings: list, errors: list, records: list) -> None:
        self.path = path
        self.findings = findings
        self.errors = errors
        self.records = records


# Source bytes whose analysed trees a run keeps between the phases, shared equally by its
# workers (a kept file takes about 55 times its source in memory, trees and analysis): past
# this, a file is analysed again when it is finished, so a repository of thousands of files
# lints in bounded memory, whatever the number of jobs.
KEEP_BYTES = 8_000_000


class _Worker:
    """Analyses files and finishes them later: the files' trees stay here in between, up to
    its share of :data:`KEEP_BYTES` of source; the others are analysed again when they are
    finished."""

    def __init__(self, config: Config, keep_tree: bool = False, share: int = 1) -> None:
        self.config = config
        self.keep_tree = keep_tree
        self.keep_bytes = KEEP_BYTES // share
        self.states: dict = {}
        self.dropped: dict = {}  # path -> the item to analyse it again
        self.kept = 0

    def analyse(self, items: list) -> list:
        if not items:
            return []  # (a warm run: the engine, and so libcst, is never imported)
        from hpulint.engine import analyse_file

        out = []
        for item in items:
            path, module, is_package, script, lint = item
            keep = False
            if lint:
                size = _size(path)
                keep = self.keep_tree or self.kept + size <= self.keep_bytes
            # a linted file that is not kept is only summarised now (no rules run): it is
            # analysed again, with its rules, when it is finished
            state = analyse_file(Path(path), self.config, module, lint=keep, is_package=is_package,
                                 script=script, index=True)
            out.append((path, state.summary, [] if lint else state.errors))
            if keep:
                self.states[path] = state
                self.kept += size
                continue
            if lint:
                self.dropped[path] = item
            state.release()
            _bound_garbage()
        return out

    def finish(self, linked, paths: list) -> list:
        if not paths:
            return []
        from hpulint.engine import analyse_file, finish_file

        out = []
        for path in paths:
            state = self.states.pop(path, None)
            if state is None:
                _, module, is_package, script, _ = self.dropped.pop(path)
                state = analyse_file(Path(path), self.config, module, lint=True, is_package=is_package,
                                     script=script, index=True)
            else:
                self.kept -= _size(path)
            result = finish_file(state, linked, keep_tree=self.keep_tree)
            state.release()
            out.append(result if self.keep_tree else _light(result))
            _bound_garbage()
        return out


def _serve(conn, config: Config, share: int) -> None:  # pragma: no cover - runs in a worker process
    gc.disable()  # as in run(): trees are freed by reference counts, see _bound_garbage
    worker = _Worker(config, share=share)
    while True:
        msg = conn.recv()
        if msg[0] == "analyse":
            conn.send(worker.analyse(msg[1]))
        elif msg[0] == "finish":
            linked = pickle.loads(msg[1])
            conn.send(worker.finish(linked, msg[2]))
        else:
            return


class _Pool:
    """Worker processes, each owning the files it analysed until it finishes them."""

    def __init__(self, jobs: int, config: Config) -> None:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.conns, self.procs = [], []
        for _ in range(jobs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, config, jobs), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        self.owner: dict = {}

    def analyse(self, items: list) -> list:
        shares = [[] for _ in self.conns]
        sizes = [0] * len(self.conns)
        for item in sorted(items, key=lambda it: -_size(it[0])):
            k = sizes.index(min(sizes))
            shares[k].append(item)
            sizes[k] += _size(item[0]) + 1
            if item[4]:
                self.owner[item[0]] = k
        for conn, share in zip(self.conns, shares):
            conn.send(("analyse", share))
        out = []
        for conn in self.conns:
            out += conn.recv()
        return out

    def finish(self, linked, paths: list) -> list:
        payload = pickle.dumps(linked, protocol=pickle.HIGHEST_PROTOCOL)
        shares = [[] for _ in self.conns]
        for p in paths:
            shares[self.owner[p]].append(p)
        busy = []
        for conn, share in zip(self.conns, shares):
            if share:
                conn.send(("finish", payload, share))
                busy.append(conn)
        out = []
        for conn in busy:
            out += conn.recv()
        return out

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("exit",))
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=5)


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def run(infos: list, lint_paths: list, config: Config, jobs: int = 1, cache=None, keep_tree: bool = False):
    """Lint ``lint_paths`` within the project ``infos`` (FileInfo of every file to summarise).

    Returns (results in the order of ``lint_paths``, the linked project facts).

    Python's cyclic garbage collector is off for the run (and in its workers). A parse makes
    hundreds of thousands of objects and the run keeps up to KEEP_BYTES of trees alive, so the
    collector would walk them again and again, for nothing: a tree has no reference cycles, and
    the ones the analysis makes are broken when a file is done (``FileState.release``), so every
    tree is freed by its reference counts, as in a bare parse. :func:`_bound_garbage` collects
    only if something kept far more objects than expected alive.
    """
    was_on = gc.isenabled()
    gc.disable()
    _GARBAGE["live"] = 0
    try:
        return _run(infos, lint_paths, config, jobs, cache, keep_tree)
    finally:
        if was_on:
            gc.enable()


# Objects the collector tracks, made and not yet freed since its last collection, past which
# _bound_garbage collects (a file kept with its analysis is about 500,000 per MB of source, and
# a run keeps up to KEEP_BYTES of them): the bound on memory if a reference cycle ever keeps
# trees alive.
GC_OBJECTS = 6_000_000
_GARBAGE = {"live": 0}  # objects that survived the last collection (an estimate)


def _bound_garbage() -> None:
    """With the collector off: collect when the objects made since the last collection exceed
    both GC_OBJECTS and what survived it (so a run that keeps every tree, for --fix or SARIF,
    collects a logarithmic number of times, as the collector's own oldest generation does)."""
    made = gc.get_count()[0]
    if made > GC_OBJECTS and made > _GARBAGE["live"]:
        _GARBAGE["live"] += made - gc.collect()


def _run(infos: list, lint_paths: list, config: Config, jobs: int, cache, keep_tree: bool):
    from hpulint.index import info_for

    lint_set = {str(p) for p in lint_paths}
    by_path = {str(i.path): i for i in infos}
    for p in lint_paths:  # a linted file outside the index is its own module
        if str(p) not in by_path:
            info = info_for(Path(p), Path(p).resolve().parent)
            by_path[str(p)] = info
            infos = [*infos, info]
    summaries: dict = {}
    raw: dict = {}
    need = []
    for info in infos:
        p = str(info.path)
        lint = p in lint_set
        data = None
        try:
            data = info.path.read_bytes()
        except OSError:
            pass
        raw[p] = data
        if cache is not None and data is not None and not keep_tree:
            s = cache.get_summary(_summary_key(cache, info, data))
            if s is not None:
                summaries[p] = s
                continue
        need.append((p, info.module, info.is_package, info.script, lint))
    parallel = jobs > 1 and len(need) >= 2 * jobs and not keep_tree
    pool = _Pool(jobs, config) if parallel else _Worker(config, keep_tree)
    try:
        analysed = set()
        for p, summary, _errors in pool.analyse(need):
            if summary is not None:
                summaries[p] = summary
                if cache is not None and raw.get(p) is not None:
                    cache.put_summary(_summary_key(cache, by_path[p], raw[p]), summary)
            if p in lint_set:
                analysed.add(p)
        from hpulint.analysis.link import link  # not through the engine: no libcst on a warm run

        linked = link(list(summaries.values()), config.target)
        results: dict = {}
        again = []
        for p in lint_paths:
            p = str(p)
            if p in analysed:
                continue
            hit = cache.get(cache.key(p, raw[p])) if cache is not None and raw.get(p) is not None else None
            if hit is not None:
                from hpulint.analysis.facts import still_valid

                if still_valid(linked, hit[2]):
                    results[p] = _Cached(p, *hit)
                    continue
            info = by_path[p]
            again.append((p, info.module, info.is_package, info.script, True))
        if again:
            pool.analyse(again)
            analysed |= {a[0] for a in again}
        order = [str(p) for p in lint_paths if str(p) in analysed]
        for res in pool.finish(linked, order):
            results[res.path] = res
    finally:
        if parallel:
            pool.close()
    if cache is not None:
        for p in analysed:
            res = results[p]
            if raw.get(p) is not None and not any("internal error" in e.message or "failed:" in e.message
                                                  for e in res.errors):
                cache.put(cache.key(p, raw[p]), res.findings, res.errors, getattr(res, "records", []))
    return [results[str(p)] for p in lint_paths], linked


def link_only(infos: list, config: Config, cache=None):
    """The project's linked facts (summaries from the cache or analysed here; nothing finished)."""
    from hpulint.analysis.link import link

    summaries = []
    for info in infos:
        data = None
        try:
            data = info.path.read_bytes()
        except OSError:
            continue
        key = _summary_key(cache, info, data) if cache is not None else None
        s = cache.get_summary(key) if key is not None else None
        if s is None:
            from hpulint.engine import analyse_file

            s = analyse_file(info.path, config, info.module, lint=False, is_package=info.is_package,
                             script=info.script, index=True).summary
            if s is not None and key is not None:
                cache.put_summary(key, s)
        if s is not None:
            summaries.append(s)
    return link(summaries, config.target)


def _summary_key(cache, info, data: bytes) -> str:
    return cache.key(str(info.path), data, "summary", f"{info.module}|{info.is_package}|{info.script}")


def lint_files(paths: list, config: Config, jobs: int = 1, cache=None, root=None) -> list:
    """Lint files as one project (the project of their common root, see :mod:`hpulint.index`)."""
    from hpulint.index import index_for, project_root

    from hpulint.cli import discover

    root = root or project_root(paths, config)
    infos = index_for(paths, root, discover, config)
    results, _ = run(infos, [str(p) for p in paths], config, jobs=jobs, cache=cache)
    return results
