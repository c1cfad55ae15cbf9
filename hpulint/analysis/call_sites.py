"""Who calls each project function with what (a mixin of :class:`hpulint.analysis.project.Project`):
the callers' arguments, from a first, syntactic pass over the call sites, and the questions asked of
them: what a parameter is given, whether an optional parameter is ever given, a parameter's default
function."""
from __future__ import annotations

from typing import Optional

from hpulint.analysis.value_json import to_json
from hpulint.analysis.values import SYM, MODEL, V_MLOADER, V_MODEL, V_UNKNOWN, Param


class Callers:
    def passed(self, param: Param, defaults: bool = True) -> list:
        """The values the project's callers pass for a parameter, each once; with ``defaults``,
        the parameter's default (a class or function it names) for a caller that passes nothing,
        or when no caller is known."""
        entry = self.functions.get(param.fid)
        if entry is None or param.name not in entry[1]["params"]:
            return []
        f = entry[1]
        idx = f["params"].index(param.name)
        default = f.get("defaults", {}).get(param.name) if defaults else None
        default = self.val(default, entry[0]) if default is not None else None
        out: list = []
        callers = self.callers.get(param.fid, ())[:32]
        for args, kwargs, shift in callers:
            v = kwargs.get(param.name)
            if v is None and 0 <= idx - shift < len(args):
                v = args[idx - shift]
            if v is None:
                v = default
            if v is not None and v not in out:
                out.append(v)
        if not callers and default is not None:
            out.append(default)
        return out

    def _build_callers(self) -> None:
        """Who calls each project function with what, from the calls whose callee is clear
        without knowing any parameter (a first, syntactic pass)."""
        subclasses = None
        for fid in self.functions:
            spreads = set(self.functions[fid][1].get("spreads", ()))
            for k, (_, callee, args, kwargs, *_) in enumerate(self.calls(fid)):
                c = self.classify(callee, self.shallow)
                handed = self._legacy_data_parallel(callee, args)
                if handed is not None:
                    # `model_parallel(train_loop_fn, loader)` with `model_parallel =
                    # dp.DataParallel(model, device_ids=...)` (torch_xla's old API): each replica's
                    # `train_loop_fn(model, per_device_loader, device, context)`, a marking loader
                    self.callers.setdefault(handed, []).append(((V_MODEL, V_MLOADER, V_UNKNOWN, V_UNKNOWN), {}, 0))
                    continue
                if k in spreads and c is not None and c[1] is not None:
                    self.spread_into.add(c[1])  # `f(**kwargs)`: any of its parameters may be given
                if (c is None or c[1] is None) and callee.tag == "attr" and callee.base.tag != "self" \
                        and self.shallow(callee.base).kind == MODEL:
                    # `self.model.get_position_ids(ids.cpu(), grid)` on a model of unknown class:
                    # the project model classes that define the method get the arguments
                    for fid in self._few_model_methods(callee, self.shallow):
                        self.callers.setdefault(fid, []).append((args, kwargs, 1))
                if c is not None and c[0] == "model" and c[1] is None:
                    # `for layer in self.layers: layer(input_ids=ids, hidden=h)`: an item of a
                    # module container is called, so each block class it holds gets the arguments
                    for fid in self.held_forwards(self.shallow(callee)):
                        self.callers.setdefault(fid, []).append((args, kwargs, 1))
                    continue
                if (c is None or c[1] is None) and isinstance(callee, Param):
                    # `sample_fn(self, x, cond, t)` with `sample_fn=default_sample_fn`: the
                    # parameter's default function gets the arguments
                    c = self._default_function(callee)
                if c is None or c[1] is None:
                    continue
                self.callers.setdefault(c[1], []).append((args, kwargs, c[2]))
                for other in self.alternatives(callee, self.shallow):
                    if other[1] != c[1]:
                        self.callers.setdefault(other[1], []).append((args, kwargs, other[2]))
                if c[0] == "fn" and c[2] == 1 and callee.tag == "attr" and callee.base.tag == "self":
                    # `self.train_loop_fn(loader, epoch)` in a base class calls a subclass's
                    # override too (in another file: the AMP variant of a training script)
                    if subclasses is None:
                        subclasses = self._subclasses()
                    for sub in subclasses.get(callee.base.cls, ()):
                        other = self.method(sub, callee.name)
                        if other is not None and other != c[1]:
                            self.callers.setdefault(other, []).append((args, kwargs, 1))

    def _legacy_data_parallel(self, callee, args: tuple) -> Optional[str]:
        """The project function a torch_xla `DataParallel` instance is called with, else None."""
        while callee is not None and callee.tag == "named":
            callee = callee.base
        if callee is None or callee.tag != "meth" or callee.name != "DataParallel" \
                or to_json(callee.base) != ["sym", "torch_xla.distributed.data_parallel"] or not args:
            return None
        got = self.shallow(args[0]) if args[0] is not None else None
        return got.ref if got is not None and got.kind == SYM and got.ref in self.functions else None

    def never_given(self, fid: str, name: str) -> bool:
        """No project caller gives parameter ``name`` of ``fid`` (whose default is None or False),
        and at least one calls it: the code under `if name is not None:` never runs as the project
        uses it."""
        callers = self.callers.get(fid)
        if not callers or fid in self.spread_into:
            return False
        f = self.functions[fid][1]
        if f["name"] in ("forward", "__call__") or (f["cls"] is not None and self.is_model_class(f["cls"])):
            return False  # a model's methods: frameworks call them with whatever a batch holds
        params = f["params"]
        if name not in params:
            return False
        idx = params.index(name)
        for args, kwargs, shift in callers:
            if name in kwargs or None in args or 0 <= idx - shift < len(args):
                return False
        return True

    def _default_function(self, param: Param) -> Optional[tuple]:
        """("fn", fid, 0) for a parameter whose default is a project function, else None."""
        entry = self.functions.get(param.fid)
        default = entry[1].get("defaults", {}).get(param.name) if entry is not None else None
        if default is None:
            return None
        got = self.shallow(self.val(default, entry[0]))
        if got.kind == SYM and got.ref:
            s = self.symbol(got.ref)
            if s is not None and s[0] == "fn":
                return ("fn", s[1], 0)
        return None
