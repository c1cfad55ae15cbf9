"""The walk's bookkeeping: the facts of one file, gathered in the engine's single pass.

The engine calls the handlers of :data:`ENTER`/:data:`LEAVE` before any rule sees a node and
after every rule has left it, so a rule always reads the facts of the code around its node: the
import table, the enclosing function, class and loops, the bindings of names (their values, in
source order, joined at the end of an `if`), the loop counters and the values derived from
them, the `if` branches around the point (guards), the blocks that say which names the current
pass of a loop has already assigned, and each body's calls, backward(), optimizer steps and
step markers. Nothing here decides across files: that is the link step's job.

No libcst scope or qualified-name metadata: they cost several parses' worth of time.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from hpulint.analysis import build, guards
from hpulint.analysis.names import (
    DEFERRED_CALLBACKS, MARKING_LOADERS, STEP_CONTEXTS, STEP_MARKERS, TENSOR_EVIDENCE, XLA_OPTIMIZER_STEP, is_optimizer_name,
)
from hpulint.analysis.syntax import dotted, is_true, keyword, last_name, names_in, param_names, string_value, target_names
from hpulint.analysis.state import Block, CallSite, ClassInfo, IfFrame, Loop, Scope
from hpulint.analysis.values import (
    Elem, Join, Named, Param, Self, Sym, Tup, by_name, V_NONE, V_OTHER, V_SCALAR, V_SEQ, V_SEQ_TENSOR, V_TENSOR,
    V_UNKNOWN, Val, join,
)

MISSING = object()
_LIBRARY_PREFIXES = ("torch.", "numpy.", "math.", "os.", "sys.", "logging.", "re.", "json.", "time.",
                     "random.", "collections.", "itertools.", "functools.", "typing.", "dataclasses.",
                     "pathlib.", "argparse.", "copy.", "warnings.", "tqdm.", "shutil.", "subprocess.",
                     "pickle.", "glob.", "datetime.", "builtins.")
_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.nn.Parameter", "torch.FloatTensor",
                                 "torch.LongTensor", "torch.BoolTensor"})
_LAZY_MODE_SET = re.compile(r"PT_HPU_LAZY_MODE['\"]\s*(?:\]\s*=|,|:)\s*['\"]?([01])\b")
COMPILE_BACKENDS = frozenset({"hpu_backend", "openxla", "aot_hpu_training_backend", "inductor"})


class Walker:
    def __init__(self, module: str = "<string>", is_package: bool = False, target: str = "auto",
                 extra_markers: tuple = ()) -> None:
        self.module = module
        self.is_package = is_package
        self.configured_target = target
        self.extra_markers = frozenset(extra_markers)
        self.aliases: dict = {}  # local name -> dotted name it imports
        self.evidence: dict = {}  # target ("hpu", "xla", "compile") -> what in this file says so
        self.module_scope: Optional[Scope] = None
        self.scopes: list = []
        self.all_functions: list = []  # function scopes (and the module's), in source order
        self.classes: dict = {}  # id(ClassDef) -> ClassInfo
        self.loops: list = []
        self.all_loops: list = []
        self.statements: list = []
        self.blocks: list = []
        self.if_frames: list = []
        self.if_branches: list = []  # guards.Branch of the branches enclosing the current node
        self._branch_of: dict = {}  # id(node) -> (kind, IfFrame or None)
        self.call_order: dict = {}  # id(Call) -> rank in source order
        self.call_statement: dict = {}  # id(Call) -> statement, for backward/step/marker calls
        self.value_cache: dict = {}
        self.default_device_set = False
        self.wraps_step: set = set()  # ids of Ifs whose body runs an optimizer step
        self.compiled: list = []  # (Val compiled, how): torch.compile(x), x.compile()
        self._ids: dict = {}  # id(def node) -> fid/cid
        self._stores: set = set()  # ids of Name nodes that are assignment targets
        self._qualnames: dict = {}  # id(node) -> qualified name (cleared when an import adds a name)
        self._function: Optional[Scope] = None
        self.call_sites: dict = {}  # id(Call) -> its CallSite
        self._comprehensions: list = []
        self.star_imports: list = []  # modules `from m import *` reads
        self._qual_count: dict = {}

    # --- queries used while walking --------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def function(self) -> Scope:
        """The innermost function scope (or the module's) around the current point."""
        return self._function

    def _push_scope(self, scope: Scope) -> None:
        self.scopes.append(scope)
        if scope.kind != "class":
            self._function = scope

    def _pop_scope(self) -> None:
        self.scopes.pop()
        self._function = next((s for s in reversed(self.scopes) if s.kind != "class"), None)

    @property
    def loop(self) -> Optional[Loop]:
        """The innermost loop in the current function (loops of outer functions don't count)."""
        loops = self.loops
        if loops and loops[-1].scope is self._function:
            return loops[-1]
        return None

    @property
    def statement(self) -> Optional[cst.CSTNode]:
        return self.statements[-1] if self.statements else None

    @property
    def current_class(self) -> Optional[ClassInfo]:
        for s in reversed(self.scopes):
            if s.kind == "class":
                return self.classes.get(id(s.node))
            if s.cls is not None:
                return s.cls
        return None

    def lookup(self, name: str) -> Val:
        for s in reversed(self.scopes):
            if s.kind == "class":
                continue
            v = s.bindings.get(name)
            if v is not None:
                return v
        if name == "None":
            return V_NONE
        if name in ("True", "False"):
            return V_SCALAR
        return V_UNKNOWN

    def bound_names(self):
        """Names a function or the module binds (shadowing builtins)."""
        out = set()
        for s in self.scopes:
            if s.kind != "class":
                out.update(s.bindings)
        return out

    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        """``a.b.c`` with its head resolved through the imports (``xm.mark_step`` ->
        ``torch_xla.core.xla_model.mark_step``); other chains come back as written."""
        key = id(node)
        hit = self._qualnames.get(key, self)
        if hit is not self:
            return hit
        name = dotted(node)
        if name is not None:
            head, _, rest = name.partition(".")
            resolved = self.aliases.get(head, head)
            name = f"{resolved}.{rest}" if rest else resolved
        self._qualnames[key] = name
        return name

    def local_name_for(self, target: str) -> Optional[str]:
        """How this file spells the module or function ``target`` through its imports."""
        best = None
        for local, full in self.aliases.items():
            if target == full or target.startswith(full + "."):
                spelled = local + target[len(full):]
                if best is None or len(spelled) < len(best):
                    best = spelled
        return best

    def value(self, node: cst.BaseExpression) -> Val:
        return build.value(self, node)

    def is_marker_call(self, call: cst.Call) -> bool:
        qn = self.qualname(call.func)
        if qn is None:
            return False
        if qn in STEP_MARKERS or qn in self.extra_markers:
            return True
        name = last_name(call.func)
        # any `<x>.mark_step()` (a wrapper, hpulint.lazy.device().mark_step()): the name is specific
        return name in self.extra_markers or name == "mark_step"

    def counters_here(self) -> dict:
        """Counter name -> the Loop it counts, or the parameter (str) that carries one."""
        out: dict = {}
        fn = self.function
        for name, param in fn.pcounters.items():
            out[name] = param
        loop = self.loop
        for lp in reversed(list(loop.chain())) if loop is not None else ():
            for c in lp.counters:
                out[c] = lp
        return out

    def counter_in(self, expr: cst.CSTNode):
        """(name, origin) of a counter ``expr`` reads: origin is the Loop it counts or the name
        of a parameter that may carry one (decided when linked); a loop's counter wins over a
        parameter's. None if it reads none."""
        counters = self.counters_here()
        if not counters:
            return None
        found = None
        for n in names_in(expr):
            origin = counters.get(n)
            if origin is None:
                continue
            if isinstance(origin, Loop):
                return n, origin
            if found is None:
                found = (n, origin)
        return found

    def defined_in_pass(self, name: str, loop: Loop) -> bool:
        """Whether ``name`` is certainly assigned earlier in the current pass of ``loop``."""
        for block in reversed(self.blocks):
            if name in block.defs:
                return True
            if block is loop.block:
                return False
        return False

    # --- bindings and blocks ---------------------------------------------------------------

    def _bind(self, name: str, val: Val) -> None:
        scope = self.scope if self.scope.kind == "class" else self.function
        block = self.blocks[-1] if self.blocks else None
        if block is not None and block.scope is scope:
            if name not in block.prior:
                block.prior[name] = scope.bindings.get(name, MISSING)
            block.defs.add(name)
        scope.bindings[name] = val
        fn = self.function
        if name in fn.pcounters and scope is fn:
            del fn.pcounters[name]
        if self.value_cache:
            self.value_cache.clear()

    def _push_block(self, kind: str) -> Block:
        block = Block(kind, self.scope if self.scope.kind == "class" else self.function)
        self.blocks.append(block)
        return block

    def _pop_block(self) -> Block:
        block = self.blocks.pop()
        parent = self.blocks[-1] if self.blocks else None
        if parent is not None and parent.scope is block.scope:
            for name, prior in block.prior.items():
                parent.prior.setdefault(name, prior)
            if block.kind in ("with", "try"):
                parent.defs |= block.defs
        return block

    def _restore(self, block: Block) -> None:
        bindings = block.scope.bindings
        for name, prior in block.prior.items():
            if prior is MISSING:
                bindings.pop(name, None)
            else:
                bindings[name] = prior
        self.value_cache.clear()

    # --- module, imports ---------------------------------------------------------------------

    def _new_id(self, qual: str) -> str:
        base = f"{self.module}:{qual}"
        n = self._qual_count.get(base, 0) + 1
        self._qual_count[base] = n
        return base if n == 1 else f"{base}#{n}"

    def _enter_module(self, node: cst.Module) -> None:
        scope = Scope("module", node, "<module>", None, fid=self._new_id("<module>"))
        scope.qual = ""
        scope.pcounters = {}
        self.module_scope = scope
        self._push_scope(scope)
        self.all_functions.append(scope)
        # module-level defs are visible to every function, wherever they are defined
        for stmt in node.body:
            if isinstance(stmt, cst.FunctionDef):
                fid = self._ids[id(stmt)] = self._new_id(stmt.name.value)
                scope.bindings[stmt.name.value] = Sym(fid)
            elif isinstance(stmt, cst.ClassDef):
                cid = self._ids[id(stmt)] = self._new_id(stmt.name.value)
                scope.bindings[stmt.name.value] = Sym(cid)
        self.blocks.append(Block("body", scope))

    def _leave_module(self, node: cst.Module) -> None:
        self.blocks.pop()
        self._pop_scope()

    def _enter_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            self._note_target(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
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
        if isinstance(node.names, cst.ImportStar):
            if self.scope is self.module_scope:
                self.star_imports.append(base)
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.aliases[local] = f"{base}.{name}"
            self._note_target(f"{base}.{name}")
            self._bind(local, Sym(f"{base}.{name}"))
        self._qualnames.clear()

    def _note_target(self, module: str) -> None:
        if module.startswith("habana_frameworks"):
            self.evidence.setdefault("hpu", "imports habana_frameworks")
        elif module.startswith("torch_xla") or module.startswith("torch._lazy"):
            self.evidence.setdefault("xla", "imports torch_xla" if module.startswith("torch_xla")
                                     else "imports torch._lazy")

    def _enter_string(self, node: cst.SimpleString) -> None:
        value = node.value.strip("'\"")
        if value in ("hpu", "xla") or value.startswith(("hpu:", "xla:")):
            self.evidence.setdefault(value[:3], f"uses the device string '{value}'")
        elif value in COMPILE_BACKENDS and value != "inductor":
            self.evidence.setdefault("compile", f"uses the torch.compile backend '{value}'")
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

    # --- classes and functions ---------------------------------------------------------------

    def symbol_ref(self, node: cst.BaseExpression) -> Optional[str]:
        """The project id or dotted name a Name/Attribute chain refers to, through bindings."""
        if isinstance(node, cst.Name):
            v = self.lookup(node.value)
            return v.ref if isinstance(v, Sym) else None
        if isinstance(node, cst.Attribute):
            head = self.symbol_ref(node.value)
            return f"{head}.{node.attr.value}" if head else None
        if isinstance(node, cst.Subscript):  # Generic[T], nn.Module subscripted
            return self.symbol_ref(node.value)
        return None

    def _enter_class(self, node: cst.ClassDef) -> None:
        parent = self.scope
        qual = f"{parent.qual}.{node.name.value}" if parent.qual else node.name.value
        cid = self._ids.get(id(node)) or self._new_id(qual)
        bases = [self.symbol_ref(b.value) or self.qualname(b.value) or "" for b in node.bases if not b.keyword]
        info = ClassInfo(node, node.name.value, cid, [b for b in bases if b])
        self.classes[id(node)] = info
        if id(node) not in self._ids:
            self._bind(node.name.value, Sym(cid))
        scope = Scope("class", node, node.name.value, parent, fid=cid)
        scope.qual = qual
        scope.pcounters = {}
        self._push_scope(scope)
        self.statements.append(node)
        self.blocks.append(Block("body", scope))

    def _leave_class(self, node: cst.ClassDef) -> None:
        self.blocks.pop()
        self._pop_scope()
        self.statements.pop()

    def _enter_function(self, node: cst.FunctionDef) -> None:
        parent = self.scope
        cls = self.classes.get(id(parent.node)) if parent.kind == "class" else None
        name = node.name.value
        qual = f"{parent.qual}.{name}" if parent.qual else name
        fid = self._ids.get(id(node)) or self._new_id(qual)
        if id(node) not in self._ids and parent.kind != "class":
            self._bind(name, Sym(fid))
        scope = Scope("function", node, name, parent, fid=fid, cls=cls)
        scope.qual = qual
        scope.decorators = [self.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                            or "" for d in node.decorators]
        if cls is not None:
            cls.methods.setdefault(name, fid)
        params = node.params
        plist = [*params.posonly_params, *params.params]
        static = any(d.endswith("staticmethod") for d in scope.decorators)
        classmethod = any(d.endswith("classmethod") for d in scope.decorators)
        scope.params = param_names(node)
        scope.pcounters = {}
        for i, p in enumerate([*plist, *params.kwonly_params]):
            pname = p.name.value
            if i == 0 and cls is not None and not static and p in plist:
                scope.bindings[pname] = Sym(cls.cid) if classmethod else Self(cls.cid)
                continue
            scope.bindings[pname] = Param(fid, pname)
            if p.annotation is not None and self._is_tensor_annotation(p.annotation.annotation):
                scope.evidence[pname] = "tensor"
            else:
                scope.pcounters[pname] = pname
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bindings[star.name.value] = V_SEQ if star is params.star_arg else V_OTHER
        if node.returns is not None:
            scope.ret_annotation = self._annotation_value(node.returns.annotation)
        self._push_scope(scope)
        self.all_functions.append(scope)
        self.statements.append(node)
        self.blocks.append(Block("body", scope))
        for d in scope.decorators:
            if d == "torch.compile" or d.endswith("torch_xla.compile"):
                self.evidence.setdefault("compile", f"@{d.rsplit('.', 1)[-1] if d != 'torch.compile' else d} "
                                                    f"on {name}()")

    def _leave_function(self, node: cst.FunctionDef) -> None:
        self.blocks.pop()
        self._pop_scope()
        self.statements.pop()

    def _is_tensor_annotation(self, ann: cst.BaseExpression) -> bool:
        if isinstance(ann, cst.Subscript):  # Optional[Tensor], Union[Tensor, None]; not list[Tensor]
            if (self.qualname(ann.value) or "").rsplit(".", 1)[-1] not in ("Optional", "Union"):
                return False
            return any(isinstance(el.slice, cst.Index) and self._is_tensor_annotation(el.slice.value)
                       for el in ann.slice)
        if isinstance(ann, cst.BinaryOperation):  # Tensor | None
            return self._is_tensor_annotation(ann.left) or self._is_tensor_annotation(ann.right)
        if isinstance(ann, cst.SimpleString):
            return ann.value.strip("'\"") in ("Tensor", "torch.Tensor")
        return self.qualname(ann) in _TENSOR_ANNOTATIONS

    def _annotation_value(self, ann: cst.BaseExpression):
        """A return annotation that says tensor (`-> Tensor`) or tensors (`-> dict[str, Tensor]`,
        `-> Tuple[Tensor, Tensor]`, `-> list[torch.Tensor]`); None otherwise."""
        if self._is_tensor_annotation(ann):
            return V_TENSOR
        if isinstance(ann, cst.Subscript):
            head = (self.qualname(ann.value) or "").rsplit(".", 1)[-1].lower()
            if head in ("dict", "list", "tuple", "sequence", "mapping", "iterable"):
                parts = [el.slice.value for el in ann.slice if isinstance(el.slice, cst.Index)]
                if parts and self._is_tensor_annotation(parts[-1] if head in ("dict", "mapping") else parts[0]):
                    return V_SEQ_TENSOR
        return None

    def _enter_lambda(self, node: cst.Lambda) -> None:
        parent = self.function
        qual = f"{parent.qual}.<lambda>" if parent.qual else "<lambda>"
        fid = self._new_id(qual)
        scope = Scope("function", node, "<lambda>", self.scope, fid=fid)
        scope.qual = qual
        scope.params = param_names(node)
        scope.pcounters = {}
        for p in scope.params:
            scope.bindings[p.lstrip("*")] = Param(fid, p)
        self._push_scope(scope)
        self.all_functions.append(scope)
        self.blocks.append(Block("body", scope))

    def _leave_lambda(self, node: cst.Lambda) -> None:
        scope = self.scopes[-1]
        scope.returns.append(self.value(node.body))
        self.blocks.pop()
        self._pop_scope()

    def _enter_yield(self, node) -> None:
        self.function.yields = True

    def _enter_return(self, node: cst.Return) -> None:
        self.function.returns.append(self.value(node.value) if node.value is not None else V_NONE)

    # --- statements and branches ------------------------------------------------------------

    def _enter_statement(self, node: cst.CSTNode) -> None:
        self.statements.append(node)

    def _leave_statement(self, node: cst.CSTNode) -> None:
        self.statements.pop()

    def _enter_with(self, node: cst.With) -> None:
        self.statements.append(node)
        self._branch_of[id(node.body)] = ("with", None)
        fn = self.function
        loop = self.loop
        facts = loop.facts if loop is not None else fn.facts
        for item in node.items:
            it = item.item
            if isinstance(it, cst.Call) and self.qualname(it.func) in STEP_CONTEXTS:
                facts.markers.append(it)
                self.call_statement[id(it)] = node
            if item.asname is not None:
                for n in target_names(item.asname.name):
                    self._bind(n, V_OTHER)

    def _enter_try(self, node: cst.Try) -> None:
        self.statements.append(node)
        self._branch_of[id(node.body)] = ("try", None)
        if node.orelse is not None:
            self._branch_of[id(node.orelse)] = ("try-else", None)
        if node.finalbody is not None:
            self._branch_of[id(node.finalbody)] = ("with", None)

    def _enter_handler(self, node: cst.ExceptHandler) -> None:
        self._push_block("handler")
        if node.name is not None:
            for n in target_names(node.name.name):
                self._bind(n, V_OTHER)

    def _leave_handler(self, node: cst.ExceptHandler) -> None:
        self._pop_block()

    def _enter_if(self, node: cst.If) -> None:
        self._enter_branch(node)  # an elif is the else branch of the if before it
        self.statements.append(node)
        frame = IfFrame(node)
        self.if_frames.append(frame)
        loop = self.loop
        counters = set()
        for lp in loop.chain() if loop is not None else ():
            counters |= lp.counters
        interval, device = guards.classify(node.test, counters)
        frame.guard = (interval, device)
        self._branch_of[id(node.body)] = ("if-body", frame)
        if node.orelse is not None:
            self._branch_of[id(node.orelse)] = ("else", frame)

    def _leave_if(self, node: cst.If) -> None:
        frame = self.if_frames.pop()
        self.statements.pop()
        self._merge_if(frame)
        self._leave_branch(node)

    def _enter_branch(self, node: cst.CSTNode) -> None:
        info = self._branch_of.get(id(node))
        if info is None:
            return
        kind, frame = info
        self._push_block(kind)
        if frame is not None:
            interval, device = frame.guard
            self.if_branches.append(guards.Branch(frame.node, kind == "if-body", interval, device))

    def _leave_branch(self, node: cst.CSTNode) -> None:
        info = self._branch_of.pop(id(node), None)
        if info is None:
            return
        kind, frame = info
        block = self._pop_block()
        if frame is None:
            return
        self.if_branches.pop()
        bindings = block.scope.bindings
        end = {name: bindings.get(name, MISSING) for name in block.prior}
        for name, prior in block.prior.items():
            frame.before.setdefault(name, prior)
        if kind == "if-body":
            frame.body_end, frame.body_defs = end, block.defs
        else:
            frame.else_end, frame.else_defs = end, block.defs
        self._restore(block)

    def _merge_if(self, frame: IfFrame) -> None:
        block = self.blocks[-1] if self.blocks else None
        defs_before = set(block.defs) if block is not None else set()
        for name in set(frame.body_end) | set(frame.else_end):
            before = frame.before.get(name, MISSING)
            parts = [frame.body_end.get(name, before), frame.else_end.get(name, before) if frame.has_else else before]
            parts = [p for p in parts if p is not MISSING]
            if parts:
                self._bind(name, join(parts))
        if block is not None:  # certainly assigned only when both branches assign it
            block.defs = defs_before | (frame.body_defs & frame.else_defs if frame.has_else else set())

    # --- loops ----------------------------------------------------------------------------

    def _enter_for(self, node: cst.For) -> None:
        from hpulint.analysis.loops import bind_for_target, counters_of_for, iterates_marking_loader

        self.statements.append(node)
        fn = self.function
        loop = Loop(node, fn, self.loop, len(fn.loops))
        fn.loops.append(loop)
        self.all_loops.append(loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = counters_of_for(self, node)
        loop.iter_value = self.value(node.iter)
        loop.loader_marks = iterates_marking_loader(self, node.iter)
        loop.iterated_params = [p for p in names_in(node.iter) if p in fn.params]
        self.loops.append(loop)
        loop.block = self._push_block("loop")
        bind_for_target(self, node, loop)
        loop.assigned.update(target_names(node.target))

    def _enter_while(self, node: cst.While) -> None:
        from hpulint.analysis.loops import counters_of_while

        self.statements.append(node)
        fn = self.function
        loop = Loop(node, fn, self.loop, len(fn.loops))
        fn.loops.append(loop)
        self.all_loops.append(loop)
        loop.if_depth = len(self.if_branches)
        loop.counters = counters_of_while(node)
        self.loops.append(loop)
        loop.block = self._push_block("loop")

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self.statements.pop()
        loop = self.loops.pop()
        self._pop_block()
        tensors = {n for n in loop.assigned & loop.read_before_assign
                   if _maybe_tensor(self.function.bindings.get(n))}
        loop.facts.carried = bool(tensors)

    # --- assignments ------------------------------------------------------------------------

    # Targets are bound when the statement is left: Python evaluates the value first, so a rule
    # looking at `x.cpu()` in `x = x.cpu()` sees the `x` from before.

    def _enter_assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._note_store(t.target)

    def _leave_assign(self, node: cst.Assign) -> None:
        val = self.value(node.value)
        for t in node.targets:
            self._assign(t.target, val, node.value)

    def _enter_ann_assign(self, node: cst.AnnAssign) -> None:
        self._note_store(node.target)

    def _leave_ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, self.value(node.value), node.value)
        elif isinstance(node.target, cst.Name) and self._is_tensor_annotation(node.annotation.annotation):
            self._bind(node.target.value, V_TENSOR)

    def _enter_aug_assign(self, node: cst.AugAssign) -> None:
        self._note_store(node.target)

    def _leave_aug_assign(self, node: cst.AugAssign) -> None:
        from hpulint.analysis.values import Arith

        if isinstance(node.target, cst.Name):
            name = node.target.value
            loop = self.loop
            if loop is not None:
                if name not in loop.assigned:
                    loop.read_before_assign.add(name)
                loop.assigned.add(name)
            self._bind_keeping_counter(name, Arith((self.lookup(name), self.value(node.value))))
        elif isinstance(node.target, cst.Attribute) and isinstance(node.target.value, cst.Name) \
                and node.target.value.value == "self" and self.current_class is not None:
            self.current_class.attrs.setdefault(node.target.attr.value, []).append(self.value(node.value))
            if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
                self.current_class.counter_attrs.add(node.target.attr.value)

    def _note_store(self, target: cst.BaseExpression) -> None:
        """Names a statement stores to are not reads (for the loop-carried facts)."""
        if isinstance(target, cst.Name):
            self._stores.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._note_store(el.value)
        elif isinstance(target, cst.StarredElement):
            self._note_store(target.value)

    def refine_elements(self, name: str, element: Val) -> None:
        """`xs.append(t)`, `xs[i] = t`: the list bound to ``xs`` holds ``element`` too (not an
        assignment of ``xs``: certainly-assigned facts stay as they are)."""
        fn = self._function
        old = fn.bindings.get(name)
        if old is None or not (old is V_SEQ or isinstance(old, Tup)):
            return
        parts = (join((old.parts[0], element)),) if isinstance(old, Tup) and len(old.parts) == 1 else (element,)
        block = self.blocks[-1] if self.blocks else None
        if block is not None and block.scope is fn and name not in block.prior:
            block.prior[name] = old
        fn.bindings[name] = Tup(parts)
        self.value_cache.clear()

    def _bind_keeping_counter(self, name: str, val: Val) -> None:
        fn = self.function
        kept = fn.pcounters.get(name)
        self._bind(name, val)
        if kept is not None:
            fn.pcounters[name] = kept

    def _enter_named_expr(self, node: cst.NamedExpr) -> None:
        self._note_store(node.target)

    def _leave_named_expr(self, node: cst.NamedExpr) -> None:
        self._assign(node.target, self.value(node.value), node.value)

    def _assign(self, target: cst.BaseExpression, val: Val, value_node: Optional[cst.BaseExpression]) -> None:
        from hpulint.analysis.loops import is_int_arith

        if isinstance(target, (cst.Tuple, cst.List)):
            els = target.elements
            if isinstance(value_node, (cst.Tuple, cst.List)) and len(value_node.elements) == len(els) \
                    and not any(isinstance(e, cst.StarredElement) for e in (*els, *value_node.elements)):
                for te, ve in zip(els, value_node.elements):
                    self._assign(te.value, self.value(ve.value), ve.value)
                return
            for k, el in enumerate(els):
                part = V_SEQ if isinstance(el, cst.StarredElement) else Elem(val, k)
                self._assign(el.value, part, None)
            return
        if isinstance(target, cst.Name):
            name = target.value
            loop = self.loop
            fn = self.function
            derived = None
            if value_node is not None and is_int_arith(value_node):
                hit = self.counter_in(value_node)
                if hit is not None:
                    derived = hit
            if loop is not None:
                if name not in loop.assigned and value_node is not None and name in set(names_in(value_node)):
                    loop.read_before_assign.add(name)  # x = f(x): carried from the last pass
                loop.assigned.add(name)
            if by_name(name).kind != "unknown" and not isinstance(val, (Sym,)):
                val = Named(val, name)  # `model = load(...)`: the name decides if nothing else does
            self._bind(name, val)
            for lp in loop.chain() if loop is not None else ():
                lp.counters.discard(name)
            if derived is not None:
                origin = derived[1]
                if isinstance(origin, Loop):
                    origin.counters.add(name)
                else:
                    fn.pcounters[name] = origin
            return
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.refine_elements(target.value.value, val)
            return
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            cls = self.current_class
            if cls is not None:
                cls.attrs.setdefault(target.attr.value, []).append(val)
                v = value_node
                if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, (cst.Add, cst.Subtract)) \
                        and any(isinstance(x, cst.Attribute) and x.deep_equals(target) for x in (v.left, v.right)):
                    cls.counter_attrs.add(target.attr.value)  # self.n = self.n + 1

    # --- calls: the facts that make a loop a step loop --------------------------------------

    def _enter_call(self, node: cst.Call) -> None:
        from hpulint.analysis.loops import record_call

        self.call_order[id(node)] = len(self.call_order)
        record_call(self, node)

    def _enter_attribute(self, node: cst.Attribute) -> None:
        # `x.new_ones(...)`, `x.shape`, `x.float()`: evidence that parameter x is a tensor
        base = node.value
        if type(base) is cst.Name and node.attr.value in TENSOR_EVIDENCE:
            v = self.lookup(base.value)
            if type(v) is Param:
                fn = self.function
                if v.fid == fn.fid:
                    fn.evidence.setdefault(v.name, "tensor")
                    fn.pcounters.pop(base.value, None)

    def _enter_subscript(self, node: cst.Subscript) -> None:
        # `alphas[index]` with a parameter (or int arithmetic on one): the link step decides
        # whether a step loop's counter arrives there
        fn = self._function
        if not fn.pcounters:
            return
        for el in node.slice:
            s = el.slice
            parts = [s.value] if isinstance(s, cst.Index) else [p for p in (s.lower, s.upper, s.step) if p is not None]
            for part in parts:
                for n in names_in(part):
                    origin = fn.pcounters.get(n)
                    if isinstance(origin, str):
                        fn.index_uses.append((origin, self.value(node.value)))
                        return

    # comprehensions: `[l.item() for l in losses]`, `{k: v.cpu() for k, v in d.items()}`; their
    # targets are bound before the element is walked (libcst visits it first) and unbound after

    def _enter_comprehension(self, node) -> None:
        from hpulint.analysis.loops import clause_bindings

        fn = self._function
        saved = {}
        clause = node.for_in
        while clause is not None:  # a later clause's iterable may read an earlier target
            for name, val in clause_bindings(self, clause):
                if name not in saved:
                    saved[name] = fn.bindings.get(name, MISSING)
                fn.bindings[name] = val
            self.value_cache.clear()
            clause = clause.inner_for_in
        self._comprehensions.append(saved)

    def _leave_comprehension(self, node) -> None:
        fn = self._function
        for name, prior in self._comprehensions.pop().items():
            if prior is MISSING:
                fn.bindings.pop(name, None)
            else:
                fn.bindings[name] = prior
        self.value_cache.clear()

    def _enter_name(self, node: cst.Name) -> None:
        loop = self.loop
        if loop is not None and node.value not in loop.assigned and id(node) not in self._stores:
            loop.read_before_assign.add(node.value)


def _maybe_tensor(v) -> bool:
    """Structurally not a known non-tensor (decided for real when the project is linked)."""
    from hpulint.analysis.values import K

    if v is None:
        return False
    if isinstance(v, K):
        return v.kind in ("tensor", "mask")
    if isinstance(v, Join):
        return any(_maybe_tensor(p) for p in v.parts)
    return True


ENTER = {
    cst.Module: Walker._enter_module,
    cst.Import: Walker._enter_import,
    cst.ImportFrom: Walker._enter_import_from,
    cst.SimpleString: Walker._enter_string,
    cst.ClassDef: Walker._enter_class,
    cst.FunctionDef: Walker._enter_function,
    cst.Lambda: Walker._enter_lambda,
    cst.Return: Walker._enter_return,
    cst.Yield: Walker._enter_yield,
    cst.SimpleStatementLine: Walker._enter_statement,
    cst.With: Walker._enter_with,
    cst.Try: Walker._enter_try,
    cst.ExceptHandler: Walker._enter_handler,
    cst.If: Walker._enter_if,
    cst.IndentedBlock: Walker._enter_branch,
    cst.SimpleStatementSuite: Walker._enter_branch,
    cst.Else: Walker._enter_branch,
    cst.Finally: Walker._enter_branch,
    cst.For: Walker._enter_for,
    cst.While: Walker._enter_while,
    cst.Assign: Walker._enter_assign,
    cst.AnnAssign: Walker._enter_ann_assign,
    cst.AugAssign: Walker._enter_aug_assign,
    cst.NamedExpr: Walker._enter_named_expr,
    cst.Call: Walker._enter_call,
    cst.Attribute: Walker._enter_attribute,
    cst.Subscript: Walker._enter_subscript,
    cst.Name: Walker._enter_name,
    cst.ListComp: Walker._enter_comprehension,
    cst.SetComp: Walker._enter_comprehension,
    cst.DictComp: Walker._enter_comprehension,
    cst.GeneratorExp: Walker._enter_comprehension,
}
LEAVE = {
    cst.ListComp: Walker._leave_comprehension,
    cst.SetComp: Walker._leave_comprehension,
    cst.DictComp: Walker._leave_comprehension,
    cst.GeneratorExp: Walker._leave_comprehension,
    cst.Module: Walker._leave_module,
    cst.Assign: Walker._leave_assign,
    cst.AnnAssign: Walker._leave_ann_assign,
    cst.AugAssign: Walker._leave_aug_assign,
    cst.NamedExpr: Walker._leave_named_expr,
    cst.ClassDef: Walker._leave_class,
    cst.FunctionDef: Walker._leave_function,
    cst.Lambda: Walker._leave_lambda,
    cst.SimpleStatementLine: Walker._leave_statement,
    cst.With: Walker._leave_statement,
    cst.Try: Walker._leave_statement,
    cst.ExceptHandler: Walker._leave_handler,
    cst.If: Walker._leave_if,
    cst.IndentedBlock: Walker._leave_branch,
    cst.SimpleStatementSuite: Walker._leave_branch,
    cst.Else: Walker._leave_branch,
    cst.Finally: Walker._leave_branch,
    cst.For: Walker._leave_loop,
    cst.While: Walker._leave_loop,
}
