"""What every stand-in module shares: a module type that names what it does not stand in for.

A script that reaches for something the replay does not provide (an attribute of a stand-in
module, or a submodule of ``torch_xla`` / ``habana_frameworks`` that has no stand-in) gets an
error that names it and says so, instead of a traceback from inside the shims:

* ``xm.some_api`` -> ``NotStoodIn`` (an ``AttributeError``, so ``hasattr`` and ``getattr(m, n,
  default)`` still work);
* ``import torch_xla.experimental.custom_kernel`` -> ``NotStoodInModule`` (a
  ``ModuleNotFoundError``, so ``try: import ... except ImportError`` still works);
* a stand-in that exists but cannot do what the call asks (a ``Mesh`` of 8 devices) raises
  ``NotStoodIn`` when called.

Every such name is recorded (``Registry.missing``) and reported with the replay's result.
"""
from __future__ import annotations

import importlib.abc
import types

import torch

DOCS = "docs/verify.md lists what the replay stands in for"


def _message(name: str, why: str = "") -> str:
    why = f" ({why})" if why else ""
    return f"hpulint verify does not stand in for {name}{why}: {DOCS}"


class NotStoodIn(AttributeError):
    """An attribute (or a call) the replay does not stand in for."""

    def __init__(self, name: str, why: str = ""):
        super().__init__(_message(name, why))
        self.qualname = name


class NotStoodInModule(ModuleNotFoundError):
    """A module of ``torch_xla`` / ``habana_frameworks`` the replay does not stand in for."""

    def __init__(self, name: str, why: str = ""):
        super().__init__(_message(name, why), name=name)
        self.qualname = name


class Registry:
    """The stand-in modules of one replay, and the names a script asked for that have none."""

    ROOTS = ("torch_xla", "habana_frameworks")

    def __init__(self):
        self.modules = {}
        self.missing = []  # qualified names, in the order they were first asked for

    def miss(self, name: str) -> None:
        if name not in self.missing:
            self.missing.append(name)

    def module(self, name: str, doc: str = "") -> "ShimModule":
        """The stand-in module ``name`` (made on first use), linked to its parent package."""
        m = self.modules.get(name)
        if m is not None:
            return m
        m = ShimModule(name, doc or f"hpulint verify stand-in for {name}")
        m._registry = self
        self.modules[name] = m
        if "." in name:
            parent, _, child = name.rpartition(".")
            setattr(self.module(parent), child, m)
        return m

    def unsupported(self, name: str, why: str = ""):
        """A stand-in callable that refuses: the API exists but the replay cannot honour it."""

        def refuse(*args, **kwargs):
            self.miss(name)
            raise NotStoodIn(name, why)

        refuse.__name__ = name.rpartition(".")[2]
        refuse.__qualname__ = name
        return refuse


class ShimModule(types.ModuleType):
    """A stand-in module: a package (submodules import), unknown attributes named as missing."""

    def __init__(self, name, doc=None):
        super().__init__(name, doc)
        self.__file__ = f"<hpulint shim {name}>"
        self.__path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__") or attr.startswith("_hpulint"):
            raise AttributeError(attr)
        name = f"{self.__name__}.{attr}"
        registry = self.__dict__.get("_registry")
        if registry is not None:
            registry.miss(name)
        raise NotStoodIn(name)


class Finder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path`` during a replay: stand-ins first, a clear error for the rest."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.partition(".")[0]
        if root not in Registry.ROOTS or fullname in self.registry.modules:
            return None  # sys.modules already holds the stand-ins; anything else is not ours
        self.registry.miss(fullname)
        raise NotStoodInModule(fullname)


def to_device(data, device):
    """Tensors in (nested) lists, tuples and dicts moved with ``.to(device)``, like XLA's loaders."""
    if isinstance(data, torch.Tensor):
        return data.to(device)
    if isinstance(data, (list, tuple)):
        out = [to_device(x, device) for x in data]
        return type(data)(out) if not hasattr(data, "_fields") else type(data)(*out)
    if isinstance(data, dict):
        return type(data)((k, to_device(v, device)) for k, v in data.items())
    return data


def explain_error(exc: BaseException):
    """A clearer message when the script failed on something the replay does not stand in for."""
    if isinstance(exc, (NotStoodIn, NotStoodInModule)):
        return str(exc)
    text = str(exc)
    if isinstance(exc, ImportError) and "<hpulint shim " in text:
        # `from torch_xla.x import y`: Python turns our AttributeError into "cannot import name"
        name = getattr(exc, "name", None) or ""
        missing = text.split("'")[1] if text.count("'") >= 2 else "?"
        return _message(f"{name}.{missing}" if name else missing)
    return None
