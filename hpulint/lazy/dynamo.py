"""The ``compile`` profile: run a script under real Dynamo (torch.compile) and record what it does.

Nothing is simulated here. ``torch.compile`` (also ``@torch.compile``, ``module.compile()``,
``torch_xla.compile`` and the ``hpu_backend``/``openxla`` backends) runs with its backend replaced
by ``"eager"`` (or ``backend=``): Dynamo traces, guards, recompiles and breaks graphs exactly as
it would with any backend, but no machine code is generated. The recorder reads Dynamo's own
records:

* ``torch._dynamo.utils.counters``: ``stats.unique_graphs`` (the graphs Dynamo compiled) and
  ``frames``;
* the ``graph_breaks`` and ``recompiles`` log artifacts (``TORCH_LOGS=graph_breaks,recompiles``),
  captured by a handler on their loggers, not printed: each graph break with its reason and the
  user line Dynamo names; each recompilation with every guard failure;
* the ``torch._dynamo hit config.recompile_limit`` warning: a frame that runs eagerly from then
  on (an eager fallback).

The Gaudi and PyTorch/XLA modules are the stand-ins of ``shims.py`` (step markers count, and do
nothing else); their devices are the CPU.
"""
from __future__ import annotations

import logging
import os
import sys
import sysconfig
import warnings

import torch

from .dynamo_logs import (_BREAK_AT, _LIMIT, _RECOMPILING, _SKIP, _SKIP_AT, _full_path,
                          _reason, guard_failures)
from .frames import user_stack
from .sim import StopReplay, user_frame

REPLACED_BACKENDS = ("inductor", "hpu_backend", "openxla", "openxla_eval", "aot_eager", "cudagraphs",
                     "tvm", "onnxrt", "tensorrt", "torch_tensorrt", "ipex")
_DROP_WITH_BACKEND = ("mode", "options")  # inductor settings, meaningless for another backend

_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep


def _in_stdlib(file) -> bool:
    real = os.path.realpath(file)
    return real.startswith(_STDLIB) and "site-packages" not in real


def _caller_in_user_code(message, file):
    """For a break Dynamo logs inside the standard library (``copy.deepcopy`` of a tensor breaks
    in copy.py): the user's call of it, the innermost frame of the logged user stack that is not
    in the standard library, as (file, line); else (None, None)."""
    if not _in_stdlib(file):
        return None, None
    for at, n in reversed(_SKIP_AT.findall(message)):
        if not _in_stdlib(at):
            return at, int(n)
    return None, None


def _user_line(start=None):
    """(file, line) of the innermost user frame on the stack, or (None, None)."""
    f = user_frame(start=start or sys._getframe(1))
    return (f.f_code.co_filename, f.f_lineno) if f is not None else (None, None)


class _Capture(logging.Handler):
    """Receives Dynamo's ``graph_breaks``/``recompiles`` artifacts and its recompile-limit warning."""

    def __init__(self, recorder):
        super().__init__(logging.DEBUG)
        self.recorder = recorder

    def emit(self, record):
        try:
            self.recorder._on_log(record)
        except StopReplay:
            raise
        except Exception as e:  # noqa: BLE001 - a parse failure must not break the user's run
            self.recorder.internal_errors.append(f"{type(e).__name__}: {e}")


class _Logs:
    """Turn the two artifacts on for our handler only (nothing printed), and undo it after."""

    ARTIFACTS = ("graph_breaks", "recompiles")
    WARNINGS = "torch._dynamo.convert_frame"

    def __init__(self, handler):
        self.handler = handler
        self._saved = []
        self._enabled = []

    def __enter__(self):
        from torch._logging import _internal

        state = _internal.log_state
        for name in self.ARTIFACTS:
            if not state.is_artifact_enabled(name):
                state.enable_artifact(name)
                self._enabled.append(name)
        for qname in sorted(_internal.log_registry.get_artifact_log_qnames()):
            art = qname.rpartition(".__")[2]
            if art not in self.ARTIFACTS:
                continue
            log = logging.getLogger(qname)
            self._saved.append((log, log.level, log.propagate))
            # a user who asked for the artifact (TORCH_LOGS) still sees it printed
            log.propagate = art not in self._enabled and log.propagate
            log.setLevel(logging.DEBUG)
            log.addHandler(self.handler)
        warn = logging.getLogger(self.WARNINGS)
        warn.addHandler(self.handler)
        self._saved.append((warn, warn.level, warn.propagate))
        return self

    def __exit__(self, *exc):
        from torch._logging import _internal

        for log, level, propagate in self._saved:
            log.removeHandler(self.handler)
            log.setLevel(level)
            log.propagate = propagate
        for name in self._enabled:
            _internal.log_state.artifact_names.discard(name)
        self._saved.clear()
        self._enabled.clear()
        return False


class DynamoRecorder:
    """The replay backend of the ``compile`` profile (also behind ``hpulint.lazy.device("compile")``).

    ``backend``: the backend torch.compile gets (default ``"eager"``); ``"keep"`` leaves each
    call's own backend alone, except Gaudi's and XLA's, which do not exist here.
    """

    critical = 0  # the child's timeout handler may raise at any time
    interrupt = None
    pending_at_exit = None
    hpu_available = False  # its devices are the CPU: `torch.hpu.is_available()` says no

    def __init__(self, backend="eager", max_steps=None):
        self.backend = backend or "eager"
        self.max_steps = max_steps
        self.mark_steps = 0
        self.internal_errors = []
        self._events = []
        self._breaks = {}  # (file, line, reason) -> event
        self._marks = {}  # (file, line) of torch._dynamo.mark_static calls -> event
        self._compiled_at = {}  # code object -> (file, line) of the torch.compile call
        self._real_compile = torch.compile
        self._saved = {}
        self._logs = None
        self.graph_breaks = 0
        self.recompiles = 0
        self.fallbacks = 0
        self.skips = 0
        self._unique_graphs = 0
        self._frames = {}
        self._paths = {}  # a file name shortened by Dynamo -> the full name
        self._done = False

    # -- the replaced APIs -------------------------------------------------------------------------

    def _backend_for(self, requested):
        if self.backend == "keep":
            if requested is None or (isinstance(requested, str) and requested in
                                     ("hpu_backend", "openxla", "openxla_eval")):
                return "eager"
            return requested
        return self.backend

    def compile(self, model=None, *args, **kwargs):
        """``torch.compile`` with the backend replaced; remembers where it was called."""
        requested = kwargs.pop("backend", None)
        backend = self._backend_for(requested)
        if backend != requested:
            for key in _DROP_WITH_BACKEND:
                kwargs.pop(key, None)
        kwargs["backend"] = backend
        site = _user_line(sys._getframe(1))
        if model is None:
            def decorate(fn):
                self._remember(fn, site)
                return self._real_compile(fn, *args, **kwargs)
            return decorate
        self._remember(model, site)
        return self._real_compile(model, *args, **kwargs)

    def _remember(self, target, site):
        if site[0] is None:
            return
        fn = getattr(target, "forward", None) if isinstance(target, torch.nn.Module) else target
        fn = getattr(fn, "__func__", fn)
        if getattr(fn, "__name__", None) == "_call_impl":  # module.compile()
            owner = getattr(target, "__self__", None)
            fn = getattr(getattr(owner, "forward", None), "__func__", None)
        code = getattr(fn, "__code__", None)
        if code is not None:
            self._compiled_at.setdefault(code, site)
            self._compiled_at.setdefault((code.co_filename, code.co_firstlineno), site)

    def _mark_static(self, real):
        def mark_static(t, index=None, *args, **kwargs):
            file, line = _user_line(sys._getframe(1))
            if line:
                key = (file, line)
                ev = self._marks.get(key)
                if ev is None:
                    ev = self._marks[key] = {"kind": "mark_static", "file": file, "line": line,
                                             "count": 0}
                    self._events.append(ev)
                ev["count"] += 1
            return real(t, index, *args, **kwargs) if index is not None else real(t, *args, **kwargs)
        return mark_static

    def xla_compile(self, f=None, full_graph=False, name=None, *args, **kwargs):
        """``torch_xla.compile(f)``: torch.compile with the openxla backend (replaced)."""
        if f is None:
            return lambda fn: self.xla_compile(fn, full_graph, name)
        return self.compile(f, backend="openxla", fullgraph=bool(full_graph))

    # -- what the shims call ------------------------------------------------------------------------

    def mark_step(self, what, frame):
        self.mark_steps += 1
        if self.max_steps is not None and self.mark_steps >= self.max_steps:
            raise StopReplay(f"--max-steps {self.max_steps} reached")

    def torch_device(self, index=None):
        return torch.device("cpu")

    def metric_count(self, name):
        return self._graphs() if name == "CompileTime" else 0

    def counter(self, name):
        if name == "UncachedCompile":
            return self._graphs()
        return self.mark_steps if name == "MarkStep" else 0

    @property
    def compiles(self):
        return self._graphs()

    # -- context ----------------------------------------------------------------------------------

    def __enter__(self):
        import torch._dynamo
        from torch._dynamo import utils

        from torch._dynamo import eval_frame

        # Dynamo's settings and stance are global: the script's changes stay inside the run
        with warnings.catch_warnings():  # deprecated keys warn when read or written
            warnings.simplefilter("ignore")
            self._saved["config"] = torch._dynamo.config.save_config()
        self._saved["stance"] = eval_frame._set_stance(eval_frame.DynamoStance())
        torch._dynamo.reset()
        _forget_imported_main()
        utils.counters.clear()
        self._logs = _Logs(_Capture(self)).__enter__()
        self._saved["compile"] = torch.compile
        torch.compile = self.compile
        self._saved["mark_static"] = torch._dynamo.mark_static
        torch._dynamo.mark_static = self._mark_static(torch._dynamo.mark_static)
        tx = sys.modules.get("torch_xla")
        if tx is not None and str(getattr(tx, "__file__", "")).startswith("<hpulint shim"):
            self._saved["xla"] = tx
            tx.compile = self.xla_compile
        return self

    def __exit__(self, *exc):
        from torch._dynamo import eval_frame

        self.finish()
        torch.compile = self._saved.pop("compile", torch.compile)
        if "mark_static" in self._saved:
            torch._dynamo.mark_static = self._saved.pop("mark_static")
        if "config" in self._saved:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch._dynamo.config.load_config(self._saved.pop("config"))
        if "stance" in self._saved:
            eval_frame._set_stance(self._saved.pop("stance"))
        tx = self._saved.pop("xla", None)
        if tx is not None:
            tx.__dict__.pop("compile", None)
        if self._logs is not None:
            self._logs.__exit__(*exc)
            self._logs = None
        return False

    def finish(self):
        """Read Dynamo's counters (once, at the end of the run)."""
        if self._done:
            return
        from torch._dynamo import utils

        self._done = True
        self._unique_graphs = int(utils.counters["stats"]["unique_graphs"])
        self._frames = {k: int(v) for k, v in utils.counters["frames"].items()}

    def _graphs(self):
        if self._done:
            return self._unique_graphs
        from torch._dynamo import utils

        return int(utils.counters["stats"]["unique_graphs"])

    # -- Dynamo's logs ----------------------------------------------------------------------------

    def _site(self, code_file, code_line):
        return self._compiled_at.get((code_file, code_line))

    def _on_log(self, record):
        message = record.getMessage()
        if "Recompiling function" in message:
            m = _RECOMPILING.search(message)
            if m:
                self._recompile(m, message)
            return
        m = _LIMIT.search(message)
        if m:
            self._fallback(m)
            return
        m = _BREAK_AT.search(message + "\n")
        if m:
            skipped = "Skipping the function and falling back to eager" in message
            self._break(m.group(1), int(m.group(2)), _reason(message), skipped,
                        _caller_in_user_code(message, m.group(1)))
            return
        m = _SKIP.search(message)
        if m:
            self._skip(m, message)

    @staticmethod
    def _files(file):
        """The recompiling function's file, then the user frames' files (innermost first)."""
        return [file] + [f for f, _ in user_stack(sys._getframe(2))]

    def _recompile(self, m, message):
        fn, file, first = m.group(1), m.group(2), int(m.group(3))
        files = self._files(file)
        failures = [_full_path(x, files, self._paths) for x in guard_failures(message)]
        call_file, call_line = _user_line()
        self.recompiles += 1  # undone by _fallback when the limit stops this one
        self._events.append({
            "kind": "recompile", "function": fn, "file": file, "def_line": first,
            "line": call_line, "call_file": call_file, "guard_failures": failures,
            "compiled_at": self._site(file, first),
        })

    def _fallback(self, m):
        limit_name, limit, fn, file, first, reason = (m.group(1), int(m.group(2)), m.group(3),
                                                      m.group(4), int(m.group(5)), m.group(6))
        call_file, call_line = _user_line()
        last_reason = (guard_failures("- " + reason.strip()) or [{"guard": reason.strip()}])[0]
        last = self._events[-1] if self._events else None
        if last and last["kind"] == "recompile" and last["function"] == fn and \
                last["def_line"] == first and last["file"] == file:
            # the guard failure that hit the limit is logged before the limit check: it did not
            # compile anything
            self._events.pop()
            self.recompiles -= 1
        self.fallbacks += 1
        self._events.append({
            "kind": "fallback", "function": fn, "file": file, "def_line": first,
            "line": call_line, "call_file": call_file, "limit": limit, "limit_name": limit_name,
            "last_reason": _full_path(last_reason, self._files(file), self._paths),
            "compiled_at": self._site(file, first),
        })

    def _break(self, file, line, reason, skipped=False, called_at=(None, None)):
        self.graph_breaks += 1
        if skipped:  # Dynamo gave up on the whole function: it runs eagerly
            self.skips += 1
        key = (file, line, reason, skipped)
        ev = self._breaks.get(key)
        if ev is None:
            ev = self._breaks[key] = {"kind": "graph_break", "file": file, "line": line,
                                      "reason": reason, "count": 0, "frame_skipped": skipped}
            if called_at[0] is not None:  # logged inside the standard library: the user's call
                ev["call_file"], ev["call_line"] = called_at
            self._events.append(ev)
        ev["count"] += 1

    def _skip(self, m, message):
        at = _SKIP_AT.findall(message)
        file, line = (at[-1][0], int(at[-1][1])) if at else (m.group(2), int(m.group(3)))
        self.skips += 1
        self._events.append({"kind": "skip", "function": m.group(1), "file": file, "line": line,
                             "def_file": m.group(2), "def_line": int(m.group(3)),
                             "reason": "torch.compile cannot resume after the graph break here: "
                                       "the whole frame runs eagerly"})

    # -- results ----------------------------------------------------------------------------------

    def all_events(self) -> list:
        return [dict(e) for e in self._events]

    def summary(self) -> dict:
        self.finish()
        out = {
            "compiles": self._graphs(),
            "graph_breaks": self.graph_breaks,
            "recompiles": self.recompiles,
            "fallbacks": self.fallbacks,
            "frames": dict(self._frames),
            "skipped_frames": self.skips,
            "mark_steps": self.mark_steps,
            "backend": self.backend,
            "torch": torch.__version__,
            "events": self.all_events(),
        }
        if self.internal_errors:
            out["internal_error"] = {"type": "DynamoLogParse", "message": self.internal_errors[0],
                                     "file": None, "line": None, "traceback": ""}
        return out


class CompileDevice:
    """``hpulint.lazy.device("compile")``: count what Dynamo does inside a ``with`` block.

    ::

        with hpulint.lazy.device("compile") as d:
            model = torch.compile(Net())
            for batch in batches:
                train_step(model, batch)
        assert d.graph_breaks == 0 and d.recompiles == 0

    ``torch.compile`` inside the block uses the ``eager`` backend (or ``backend=``); Dynamo's
    caches are reset on entry, so compile inside the block. ``compiles`` (graphs),
    ``graph_breaks``, ``recompiles`` and ``fallbacks`` are numbers; ``events`` has the details
    (the same as ``hpulint verify --profile compile --format json``).
    """

    profile = "compile"

    def __init__(self, backend="eager", max_steps=None):
        self._recorder = DynamoRecorder(backend, max_steps)
        self._shims = None

    def __enter__(self):
        from .shims import Shims

        self._shims = Shims(self._recorder)
        self._shims.__enter__()
        try:
            self._recorder.__enter__()
        except BaseException:
            self._shims.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            self._recorder.__exit__(*exc)
        finally:
            self._shims.__exit__(*exc)
        return False

    @property
    def device(self):
        return torch.device("cpu")

    def mark_step(self):
        self._recorder.mark_step("mark_step", None)

    compiles = property(lambda self: self._recorder.compiles, doc="graphs Dynamo compiled")
    graph_breaks = property(lambda self: self._recorder.graph_breaks, doc="graph breaks")
    recompiles = property(lambda self: self._recorder.recompiles, doc="recompilations")
    fallbacks = property(lambda self: self._recorder.fallbacks,
                         doc="functions that run eagerly after hitting the recompile limit")
    events = property(lambda self: self._recorder.all_events(),
                      doc="graph breaks, recompilations and fallbacks with their lines")

    def summary(self) -> dict:
        return self._recorder.summary()


def _forget_imported_main() -> None:
    """Dynamo caches the modules its guards import by name (``_import_module``, a functools
    cache that ``torch._dynamo.reset()`` keeps): after one script ran as ``__main__`` in this
    process, a later script's guards on its own module globals would look them up in the first
    script's module ("module '__main__' has no attribute ..."). Forget that cache per run."""
    from torch._dynamo import symbolic_convert

    clear = getattr(getattr(symbolic_convert, "_import_module", None), "cache_clear", None)
    if clear is None:
        return
    clear()
    # the alias Dynamo stored in the globals of every module it traced (torch's own too) names
    # the old module: it must go with the cache, or the next trace finds two values for it
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict) and "__import___main__" in namespace:
            del namespace["__import___main__"]

