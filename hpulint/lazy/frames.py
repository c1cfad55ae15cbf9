"""Which frames are the user's, and which devices are the replay's.

Every recorded op, read and step marker points at a line of *user* code: anything outside torch,
hpulint, the standard library and site-packages (the script, its own modules, a test file using
the Python API).
"""
from __future__ import annotations

import os
import sys
import sysconfig

import torch

FAKE_DEVICE_TYPES = ("hpu", "xla")


class StopReplay(BaseException):
    """Raised by a step marker to end a replay early (``--max-steps``, a timeout)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Which frames are the user's? Everything but torch, hpulint, the standard library and
# site-packages: the script, its own modules, a test file using the Python API.


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


_LIBRARY_DIRS = tuple(
    sorted(
        {
            _norm(os.path.dirname(torch.__file__)) + os.sep,
            _norm(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,
            *(
                _norm(p) + os.sep
                for key in ("stdlib", "platstdlib", "purelib", "platlib")
                if (p := sysconfig.get_paths().get(key))
            ),
        }
    )
)
_USER_CODE: dict = {}  # code object -> normalised file name, or "" when not user code


def _user_file(code) -> str:
    """The normalised file of ``code`` when it is the user's, else "" (cached per code object)."""
    try:
        hit = _USER_CODE.get(code)
    except TypeError:  # a code object Dynamo built with a dict among its constants: unhashable
        return _file_of(code)
    if hit is None:
        hit = _USER_CODE[code] = _file_of(code)
    return hit


def _file_of(code) -> str:
    name = code.co_filename
    if name.startswith("<"):
        return name if name in ("<string>", "<stdin>") else ""
    full = _norm(name)
    return "" if full.startswith(_LIBRARY_DIRS) else full


def is_user_path(path: str) -> bool:
    """Is this file the user's (not torch, hpulint, the standard library or site-packages)?"""
    if not path or path.startswith("<"):
        return path in ("<string>", "<stdin>")
    return not _norm(path).startswith(_LIBRARY_DIRS)


def user_frame(depth: int = 1, start=None):
    """The innermost frame of user code calling into torch (or None).

    ``start`` is where to begin the walk outwards (default: the caller).
    """
    f = sys._getframe(depth) if start is None else start
    while f is not None:
        if _user_file(f.f_code):
            return f
        f = f.f_back
    return None


def user_stack(frame) -> list:
    """(file, line) of ``frame`` and every user frame that called it, innermost first."""
    out = []
    f = frame
    while f is not None:
        u = _user_file(f.f_code)
        if u:
            out.append((u, f.f_lineno))
        f = f.f_back
    return out


def user_site(depth: int = 1):
    f = user_frame(depth + 1)
    if f is None:
        return None, 0
    return _user_file(f.f_code), f.f_lineno


def is_fake_device(d) -> bool:
    if isinstance(d, str):
        return d.split(":", 1)[0] in FAKE_DEVICE_TYPES
    if isinstance(d, torch.device):
        return d.type in FAKE_DEVICE_TYPES
    return False


def is_cpu_device(d) -> bool:
    if isinstance(d, str):
        return d.split(":", 1)[0] == "cpu"
    if isinstance(d, torch.device):
        return d.type == "cpu"
    return False



def _name_in(frame, t):
    try:
        for k, v in frame.f_locals.items():
            if v is t:
                return k
    except Exception:  # noqa: BLE001 - a frame whose locals cannot be read: no name
        pass
    return None
