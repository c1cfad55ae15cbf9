"""Names across the project's files (a mixin of :class:`hpulint.analysis.project.Project`):
an import as written in one module resolved to an absolute dotted name (a script's own folder
first, then the root, then ``src/``), and a dotted name resolved to a project function, class,
module or module-level value, through re-exports, star imports and a package's own bindings;
and the sibling a module-level function written as a method calls through ``self``.
"""
from __future__ import annotations

from typing import Optional


class Symbols:
    """Needs ``modules``, ``functions``, ``classes``, ``_dotted``, ``_symbols``, ``val`` and
    ``method`` from the class it is mixed into."""

    def absolute(self, ref: str, context: str) -> str:
        """``ref`` as written in module ``context``, resolved to an absolute dotted name when it
        names a project module (or something in one); external names come back unchanged."""
        if ":" in ref:
            return ref
        key = (ref, context)
        hit = self._dotted.get(key)
        if hit is not None:
            return hit
        out = self._absolute(ref, context)
        self._dotted[key] = out
        return out

    def _absolute(self, ref: str, context: str) -> str:
        parts = ref.split(".")
        ctx = self.modules.get(context)
        here = context.split(".")
        if not (ctx is not None and ctx.get("package")):
            here = here[:-1]
        ancestors = [here[:k] for k in range(len(here), 0, -1)]
        bases = ancestors + [[]] if ctx is not None and ctx.get("script") else [[]] + ancestors
        # a src layout (`src/diffusers/`, no `src/__init__.py`): `import diffusers` in a script
        # or test beside it names the package under src/, as an installed checkout would
        bases.append(["src"])
        for base in bases:
            for k in range(len(parts), 0, -1):
                mod = ".".join(base + parts[:k])
                if mod in self.modules:
                    if base and k < len(parts) - 1 and not self._defines(mod, parts[k]):
                        # `from lightning.pytorch import LightningModule` in a package that has a
                        # `lightning/` of its own without a `pytorch` in it: the library
                        break
                    return ".".join([mod, *parts[k:]])
        return ref

    def _defines(self, mod: str, name: str) -> bool:
        """Does module ``mod`` bind ``name`` (or may it, through a star import)?"""
        s = self.modules[mod]
        return name in s["defs"] or bool(s.get("stars")) or f"{mod}.{name}" in self.modules

    def symbol(self, ref: str, depth: int = 0) -> Optional[tuple]:
        """("fn", fid), ("cls", cid), ("mod", module) or ("val", Val) for an absolute reference
        (a project id ``module:qual`` or a dotted name); None when it is not in the project."""
        hit = self._symbols.get(ref, False)
        if hit is not False:
            return hit
        self._symbols[ref] = None
        out = self._symbol(ref, depth) if depth < 12 else None
        self._symbols[ref] = out
        return out

    def _symbol(self, ref: str, depth: int) -> Optional[tuple]:
        if ":" in ref:
            if ref in self.functions:
                return ("fn", ref)
            if ref in self.classes:
                return ("cls", ref)
            mod, _, qual = ref.partition(":")
            cls, _, attr = qual.rpartition(".")
            if cls and f"{mod}:{cls}" in self.classes:  # a method inherited from a base
                fid = self.method(f"{mod}:{cls}", attr)
                return ("fn", fid) if fid else None
            return None
        parts = ref.split(".")
        for k in range(len(parts), 0, -1):
            mod = ".".join(parts[:k])
            s = self.modules.get(mod)
            if s is None:
                continue
            rest = parts[k:]
            if not rest:
                if k > 1:  # `core.training.Trainer`: the package's binding shadows its submodule
                    bound = self._package_binding(".".join(parts[:k - 1]), parts[k - 1], depth)
                    if bound is not None:
                        return bound
                return ("mod", mod)
            j = s["defs"].get(rest[0])
            if j is None:
                for star in s.get("stars", ()):  # `from .boxes import *` in a package's __init__
                    if not rest[0].startswith("_"):
                        found = self.symbol(".".join([self.absolute(star, mod), *rest]), depth + 1)
                        if found is not None:
                            return found
                return None
            v = self.val(j, mod)
            if v.tag == "sym":
                target = v.ref
                if len(rest) > 1:
                    target += "." + ".".join(rest[1:])
                return self.symbol(target, depth + 1)
            return ("val", v) if len(rest) == 1 else None
        return None

    def _self_sibling(self, fid: str, name: str) -> Optional[str]:
        """The module-level function ``name`` taking ``self`` beside the module-level function
        ``fid`` that takes ``self`` too (both written as methods of one object), or None."""
        entry = self.functions.get(fid)
        if entry is None or entry[1]["cls"] is not None or entry[1]["params"][:1] != ["self"]:
            return None
        mod = entry[0]
        other = self.functions.get(f"{mod}:{name}")
        if other is None or other[1]["cls"] is not None or other[1]["params"][:1] != ["self"]:
            return None
        return f"{mod}:{name}"

    def _package_binding(self, package: str, name: str, depth: int) -> Optional[tuple]:
        """What ``package.name`` is when the package's ``__init__`` binds ``name`` itself, over
        the submodule of that name: `from .Trainer import *` (or `from .Trainer import Trainer`)
        in `training/__init__.py` makes `training.Trainer` the class once the import has run."""
        s = self.modules.get(package)
        if s is None or not s.get("package"):
            return None
        sub = f"{package}.{name}"
        j = s["defs"].get(name)
        if j is not None:
            v = self.val(j, package)
            if v.tag == "sym" and v.ref != sub:
                return self.symbol(v.ref, depth + 1)
            return None
        for star in s.get("stars", ()):
            found = self.symbol(f"{self.absolute(star, package)}.{name}", depth + 1)
            if found is not None and found != ("mod", sub):
                return found
        return None
