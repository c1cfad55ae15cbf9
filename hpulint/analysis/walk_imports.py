"""The walk's handlers for imports and the file's evidence (a mixin of :class:`Walker`): the
import table (aliases, `from ... import`, star imports, relative imports resolved against the
module's package), and what the file says about where it runs: Habana, optimum-habana,
lightning_habana or torch_xla imports, DeepSpeed, `"hpu"`/`"xla"` device strings, torch.compile
backends, `PT_HPU_LAZY_MODE` set in the environment."""
from __future__ import annotations

import re

import libcst as cst

from hpulint.analysis.syntax import dotted
from hpulint.analysis.values import Sym
from hpulint.analysis.walker_base import COMPILE_BACKENDS

_LAZY_MODE_SET = re.compile(r"PT_HPU_LAZY_MODE['\"]\s*(?:\]\s*=|,|:)\s*['\"]?([01])\b")


class Imports:
    def _enter_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            self._note_target(full)
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
                self.aliases[local] = full
                self._bind(local, Sym(full))
            else:
                head = full.split(".", 1)[0]
                self.aliases[head] = head
                self._bind(head, Sym(head))
        self._qualnames.clear()

    def _enter_import_from(self, node: cst.ImportFrom) -> None:
        base = dotted(node.module) if node.module is not None else ""
        if base is None:
            return
        if node.relative:
            parts = self.module.split(".")
            if not self.is_package:
                parts = parts[:-1]
            up = len(node.relative) - 1
            if up > len(parts):
                return
            parts = parts[: len(parts) - up] if up else parts
            base = ".".join([*parts, base] if base else parts)
            if not base:
                return
        self._note_target(base)
        if type(node.names) is cst.ImportStar:
            if self.scope is self.module_scope:
                self.star_imports.append(base)
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname and type(alias.asname.name) is cst.Name else name
            self.aliases[local] = f"{base}.{name}"
            self._note_target(f"{base}.{name}")
            self._bind(local, Sym(f"{base}.{name}"))
        self._qualnames.clear()

    def _note_target(self, module: str) -> None:
        if module == "deepspeed" or module.startswith("deepspeed."):
            self.evidence.setdefault("deepspeed", "imports deepspeed")
        if module.startswith("habana_frameworks"):
            self.evidence.setdefault("hpu", "imports habana_frameworks")
            if module.startswith("habana_frameworks.torch.gpu_migration"):
                # Gaudi's GPU Migration toolkit: `.cuda()` and `device="cuda"` run on the hpu
                self.evidence.setdefault("gpu-migration", "imports habana_frameworks.torch.gpu_migration")
        elif module == "optimum.habana" or module.startswith("optimum.habana."):
            # Hugging Face's Gaudi library (`GaudiTrainer`, `GaudiConfig`): the script runs on hpu
            self.evidence.setdefault("hpu", "imports optimum.habana")
        elif module == "lightning_habana" or module.startswith("lightning_habana."):
            # Lightning's Gaudi plugin (`HPUAccelerator`): the script trains on hpu
            self.evidence.setdefault("hpu", "imports lightning_habana")
            self.evidence.setdefault("lightning_habana", "imports lightning_habana")
        elif module.startswith("torch_xla") or module.startswith("torch._lazy"):
            self.evidence.setdefault("xla", "imports torch_xla" if module.startswith("torch_xla")
                                     else "imports torch._lazy")

    def _enter_string(self, node: cst.SimpleString) -> None:
        value = node.value.strip("'\"")
        if value in ("hpu", "xla") or value.startswith(("hpu:", "xla:")):
            self.evidence.setdefault(value[:3], f"uses the device string '{value}'")
        elif value in COMPILE_BACKENDS and value != "inductor":
            self.evidence.setdefault(self.compile_key(), f"uses the torch.compile backend '{value}'")
            if value == "hpu_backend" and self.compile_key() == "compile":
                # Gaudi runs torch.compile in eager mode (PT_HPU_LAZY_MODE=0), where mark_step is a no-op
                self.evidence.setdefault("hpu-compile", "uses the torch.compile backend 'hpu_backend' (Gaudi runs "
                                                        "torch.compile in eager mode, PT_HPU_LAZY_MODE=0)")
        elif value == "PT_HPU_LAZY_MODE":
            self._note_lazy_mode()

    def _note_lazy_mode(self) -> None:
        """`os.environ["PT_HPU_LAZY_MODE"] = "0"` (or setdefault/update/putenv with "0"): Gaudi's
        eager mode, where torch.compile is the graph path; "1": lazy mode."""
        stmt = self.statement
        text = cst.Module([]).code_for_node(stmt) if stmt is not None else ""
        m = _LAZY_MODE_SET.search(text)
        if m:
            key = "eager" if m.group(1) == "0" else "lazy"
            self.evidence.setdefault(key, f"sets PT_HPU_LAZY_MODE={m.group(1)}")
            self.evidence.setdefault("hpu", f"sets PT_HPU_LAZY_MODE={m.group(1)}")

