"""Run a script on the simulated device (or ``torch._lazy``) and collect what happened.

``replay()`` runs it in this process; ``run()`` runs it in a child process (its own
``__main__``, ``sys.argv``, a wall-clock timeout) and is what ``hpulint verify`` uses. Either way
the result is a plain dict (JSON-ready): the counts, the events, and how the script ended::

    status  "ok"        ran to the end (or sys.exit(0))
            "exit"      sys.exit(N) with N != 0
            "error"     raised an exception (``error`` has type, message, line, traceback)
            "stopped"   --max-steps reached
            "timeout"   --timeout reached; counts are what ran until then
            "crashed"   the child process died without a report (killed, out of memory)
            "internal"  hpulint itself failed (``error`` says how)

The script's own output is kept (last lines) in ``stdout`` and ``stderr``.
"""
from __future__ import annotations

import json
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

TAIL_LINES = 40
_ACTIVE = []  # the backend of the replay running in this process
_ROOT = str(Path(__file__).resolve().parents[2])  # the directory that holds the hpulint package


def _describe(exc: BaseException, script: str) -> dict:
    from .shims import explain_error
    from .sim import is_user_path

    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if is_user_path(f.filename)]
    where = user[-1] if user else None
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(user)
    clearer = explain_error(exc)  # something the replay does not stand in for
    if clearer is not None and type(exc).__module__.startswith("hpulint."):
        lines.append(f"{type(exc).__name__}: {exc}\n")  # not the shims' module path
    else:
        lines += traceback.format_exception_only(type(exc), exc)
    if clearer is not None and clearer not in lines[-1]:
        lines.append(clearer + "\n")
    return {
        "type": type(exc).__name__,
        "message": clearer or str(exc),
        "file": where.filename if where else None,
        "line": where.lineno if where else None,
        "traceback": "".join(lines),
    }


def _backend(engine, profile, max_steps, compile_backend=None, scalars=None, compute=True):
    if profile == "compile":  # real Dynamo (dynamo.py)
        from .dynamo import DynamoRecorder

        return DynamoRecorder(compile_backend, max_steps)
    if engine == "ltc":
        from .ltc import LtcDevice

        return LtcDevice(profile, max_steps)
    from .sim import SimDevice

    return SimDevice(profile, max_steps, scalars, compute)


def replay(script, args=(), profile="hpu", engine="sim", max_steps=None,
           compile_backend=None, on_start=None, scalars=None, compute=True) -> dict:
    """Run ``script`` in this process under the simulated device; return the result dict.

    ``on_start`` is called just before the script's first line runs (the child arms its
    ``--timeout`` clock there, so importing torch does not count against the script)."""
    from .sim import StopReplay
    from .shims import Shims

    script = os.path.abspath(script)
    result = {
        "script": script, "args": list(args), "profile": profile, "engine": engine,
        "status": "ok", "exit_code": None, "error": None, "stopped": None,
    }
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(script))
    started = time.perf_counter()
    backend = None
    globals_ = None
    shims = None
    try:
        backend = _backend(engine, profile, max_steps, compile_backend, scalars, compute)
        _ACTIVE.append(backend)
        shims = Shims(backend)
        with shims:
            with backend:
                try:
                    if on_start is not None:
                        on_start()
                    if script.endswith(".ipynb"):  # its code cells, in order (hpulint/notebook)
                        from hpulint.notebook import run_notebook

                        globals_ = run_notebook(script)
                    else:
                        globals_ = runpy.run_path(script, run_name="__main__")
                except StopReplay as e:
                    result["status"] = "timeout" if e.reason.startswith("timed out") else "stopped"
                    result["stopped"] = e.reason
                except SystemExit as e:
                    code = e.code
                    if code is None or code == 0:
                        result["exit_code"] = 0
                    else:
                        result["status"] = "exit"
                        result["exit_code"] = code if isinstance(code, int) else 1
                        if not isinstance(code, int):
                            result["error"] = {"type": "SystemExit", "message": str(code),
                                               "file": None, "line": None, "traceback": ""}
                except KeyboardInterrupt as e:
                    result["status"] = "error"
                    result["error"] = _describe(e, script)
                except BaseException as e:  # noqa: BLE001 - the script's failure is a result
                    result["status"] = "error"
                    result["error"] = _describe(e, script)
    except StopReplay as e:  # a timeout that landed outside the script (while finishing)
        result["status"] = "timeout" if e.reason.startswith("timed out") else "stopped"
        result["stopped"] = e.reason
    except BaseException as e:  # noqa: BLE001 - hpulint's own failure
        result["status"] = "internal"
        result["error"] = {"type": type(e).__name__, "message": str(e), "file": None,
                           "line": None, "traceback": traceback.format_exc()}
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path
        if backend is not None:
            _ACTIVE.remove(backend)
    del globals_
    result["wall_time"] = round(time.perf_counter() - started, 3)
    result["not_stood_in"] = shims.missing if shims is not None else []
    if backend is not None:
        result.update(backend.summary())
        result["pending_at_exit"] = backend.pending_at_exit
        broken = result.get("internal_error")
        if broken and result["status"] in ("ok", "stopped", "exit"):
            result["status"] = "internal"
            result["error"] = broken
    else:
        result.update({"compiles": 0, "cached": 0, "syncs": 0, "mark_steps": 0,
                       "max_graph_nodes": 0, "events": [], "pending_at_exit": None})
    return result


# ---------------------------------------------------------------------------------------------
# The child process


def _child(argv) -> int:
    config = json.loads(argv[0])
    from .sim import StopReplay

    timeout = config.get("timeout")
    fired = []

    def on_signal(signum, frame):
        if fired:
            return
        fired.append(signum)
        reason = f"timed out after {timeout} s (--timeout)"
        if _ACTIVE and getattr(_ACTIVE[-1], "critical", 0):
            _ACTIVE[-1].interrupt = reason  # raised as soon as the counts are consistent
            return
        raise StopReplay(reason)

    if hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, on_signal)
    timed = bool(timeout) and hasattr(signal, "setitimer")
    if timed:  # the clock starts with the script
        signal.signal(signal.SIGALRM, on_signal)

    def arm():
        signal.setitimer(signal.ITIMER_REAL, float(timeout))

    result = replay(config["script"], config.get("args", ()), config["profile"],
                    config["engine"], config.get("max_steps"), config.get("compile_backend"),
                    on_start=arm if timed else None, scalars=config.get("scalars"),
                    compute=config.get("compute", True))
    if timed:
        signal.setitimer(signal.ITIMER_REAL, 0)
    with open(config["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


def _tail(data: bytes, n=TAIL_LINES) -> str:
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    return "\n".join(lines[-n:])


STARTUP_ALLOWANCE = 120.0  # seconds for the child to import torch and start the script


def run(script, args=(), profile="hpu", engine="sim", timeout=None, max_steps=None,
        grace=10.0, compile_backend=None, scalars=None, compute=True) -> dict:
    """Replay ``script`` in a child process; never raises for anything the script does."""
    script = os.path.abspath(script)
    with tempfile.TemporaryDirectory(prefix="hpulint-verify-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        config = {"script": script, "args": list(args), "profile": profile, "engine": engine,
                  "max_steps": max_steps, "timeout": timeout, "result": result_path,
                  "compile_backend": compile_backend, "scalars": scalars, "compute": compute}
        env = os.environ.copy()
        env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        cmd = [sys.executable, "-m", "hpulint.lazy.replay", json.dumps(config)]
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
        timed_out = False
        # The child times the script itself (from its first line); this is the backstop for a
        # child that never gets there or ignores the signal.
        backstop = None if timeout is None else (
            timeout + STARTUP_ALLOWANCE if hasattr(signal, "setitimer") else timeout)
        try:
            out, err = proc.communicate(timeout=backstop)
        except subprocess.TimeoutExpired:
            timed_out = True
            _signal(proc, getattr(signal, "SIGUSR1", signal.SIGTERM))
            try:
                out, err = proc.communicate(timeout=grace)
            except subprocess.TimeoutExpired:
                _kill(proc)
                out, err = proc.communicate()
        except BaseException:
            _kill(proc)
            proc.communicate()
            raise
        wall = round(time.perf_counter() - started, 3)
        result = None
        if os.path.exists(result_path):
            try:
                with open(result_path, encoding="utf-8") as f:
                    result = json.load(f)
            except ValueError:
                result = None
    if result is None:
        result = {
            "script": script, "args": list(args), "profile": profile, "engine": engine,
            "status": "timeout" if timed_out else "crashed", "exit_code": proc.returncode,
            "error": {"type": "ReplayDied",
                      "message": (f"timed out after {timeout} s and did not stop within "
                                  f"{grace:g} s: killed, no counts" if timed_out else
                                  f"the replay process ended with status {proc.returncode} "
                                  f"without a report"),
                      "file": None, "line": None, "traceback": ""},
            "stopped": None, "compiles": None, "cached": None, "syncs": None,
            "mark_steps": None, "max_graph_nodes": None, "events": [], "pending_at_exit": None,
        }
    result["wall_time"] = wall
    result["stdout"] = _tail(out)
    result["stderr"] = _tail(err)
    return result


def _signal(proc, sig):
    try:
        os.kill(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
