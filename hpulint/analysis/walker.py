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

import builtins
import re
from typing import Optional

import libcst as cst

from hpulint.analysis import build, guards
from hpulint.analysis.names import STAR_CONVENTIONS, STEP_MARKERS
from hpulint.analysis.syntax import code, dotted, last_name, names_in
from hpulint.analysis.state import Block, ClassInfo, Loop, Scope
from hpulint.analysis.values import MAX_SIZE, LoaderAt, Named, Sym, V_NONE, V_SCALAR, V_UNKNOWN, Val, size
from hpulint.analysis.walk_imports import Imports
from hpulint.analysis.walk_notes import Notes
from hpulint.analysis.walk_bind import Bindings
from hpulint.analysis.walk_uses import Uses
from hpulint.analysis.walk_defs import Definitions
from hpulint.analysis.walk_flow import Flow
from hpulint.analysis.walker_base import MISSING, _maybe_tensor

_BUILTINS = frozenset(dir(builtins))


class Walker(Definitions, Flow, Bindings, Uses, Notes, Imports):
    def __init__(self, module: str = "<string>", is_package: bool = False, target: str = "auto",
                 extra_markers: tuple = ()) -> None:
        self.module = module
        self.is_package = is_package
        self.configured_target = target
        self.extra_markers = frozenset(extra_markers)
        self.aliases: dict = {}  # local name -> dotted name it imports
        self.evidence: dict = {}  # target ("hpu", "xla", "compile") -> what in this file says so
        self.off_flags: set = set()  # argparse options that are False unless given (store_true)
        self.module_scope: Optional[Scope] = None
        self.scopes: list = []
        self.all_functions: list = []  # function scopes (and the module's), in source order
        self.classes: dict = {}  # id(ClassDef) -> ClassInfo
        self.classes_by_cid: dict = {}  # cid -> ClassInfo
        self.loops: list = []
        self.all_loops: list = []
        self.statements: list = []
        self.blocks: list = []
        self.if_frames: list = []
        self.if_branches: list = []  # guards.Branch of the branches enclosing the current node
        # (IfExp, (device, positive)) of the `a if use_tpu else b` enclosing the current node
        self.ifexps: list = []
        # per branch above: (function, source texts known not to be tensors there) or None
        self.not_tensors: list = []
        self._branch_of: dict = {}  # id(node) -> (kind, IfFrame or None)
        self.call_order: dict = {}  # id(Call) -> rank in source order
        self.call_sites: dict = {}  # id(Call) -> its CallSite (the calls the walk filed)
        self.call_statement: dict = {}  # id(Call) -> statement, for backward/step/marker calls
        self.value_cache: dict = {}
        self.default_device_set = False
        self.wraps_step: set = set()  # ids of Ifs whose body runs an optimizer step
        self.compiled: list = []  # (Val compiled, how, under an `if`): torch.compile(x), x.compile()
        self.swapped: list = []  # (Val, function name): `setattr(model, name, QLinear(mod))`, a module swapped in
        self.installed: list = []  # (method Val, receiver Val): `types.MethodType(Mixin._sample, model)`
        self._ids: dict = {}  # id(def node) -> fid/cid
        self._stores: set = set()  # ids of Name nodes that are assignment targets
        self._attr_names: set = set()  # ids of the Name after a dot (`torch.linalg.norm`): no variable read
        self._store_bases: set = set()  # ids of the names a subscript store writes into
        self._called_attrs: set = set()  # ids of Attribute nodes that are a call's callee
        self._arg_lambdas: set = set()  # ids of lambdas passed straight to a call (they run inside it)
        self._lambda_ids: dict = {}  # id(lambda node) -> the id of its function (see lambda_id)
        self._qualnames: dict = {}  # id(node) -> qualified name (cleared when an import adds a name)
        self._function: Optional[Scope] = None
        self.call_sites: dict = {}  # id(Call) -> its CallSite
        self._comprehensions: list = []
        self.comp_elems: dict = {}  # id(list/set comprehension or generator) -> its element's value
        self.star_imports: list = []  # modules `from m import *` reads
        self.set_globals: set = set()  # names a module-level function declares `global`
        self.unit_names: frozenset = frozenset()  # module-level names bound once, to 1
        self._qual_count: dict = {}
        self.int_seq_fns: dict = {}  # fid -> arity of the host int sequence every return of it gives
        self.loader_sites: dict = {}  # DataLoader(...) Call -> its LoaderAt (see loader_site)

    # --- queries used while walking --------------------------------------------------------

    def loader_site(self, call: cst.Call) -> LoaderAt:
        """The loader a `DataLoader(...)` call makes, named by the file's count of such calls."""
        site = self.loader_sites.get(call)
        if site is None:
            site = self.loader_sites[call] = LoaderAt(f"{self.module}#{len(self.loader_sites)}")
        return site

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

    def known_not_tensor(self, node: cst.BaseExpression) -> bool:
        """An `isinstance(x, torch.Tensor)` test around the point says ``node`` is not a tensor
        (see guards.not_tensor_exprs)."""
        fn = self.function
        text = None
        for entry in self.not_tensors:
            if entry is not None and entry[0] is fn and entry[1]:
                text = text if text is not None else code(node)
                if text in entry[1]:
                    return True
        return False

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
        if self.star_imports and name not in _BUILTINS and name not in self.aliases:
            # `from models.recsys_model import *` then `RecSys(...)`: a name the module's star
            # imports may bind, resolved through them when the project is linked (a name none
            # of them binds stays a symbol nobody defines: unknown when called)
            return Sym(f"{self.module}.{name}")
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
            resolved = self.aliases.get(head)
            if resolved is None:
                resolved = head
                if self.star_imports and head in STAR_CONVENTIONS and head not in self.module_scope.bindings:
                    # `from utils import *` where utils.py has `import numpy as np`: the star
                    # import brings the alias along (a module's names are resolved per file,
                    # before the project is linked; the usual spelling is taken at its word)
                    resolved = STAR_CONVENTIONS[head]
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

    def _bind(self, name: str, val: Val, merged: bool = False) -> None:
        if size(val) > MAX_SIZE:
            val = V_UNKNOWN  # too big to follow (a name extended in many branches): see `size`
        scope = self.scope if self.scope.kind == "class" else self.function
        if scope is self.module_scope and name in self.set_globals \
                and (val is V_NONE or (type(val) is Named and val.base is V_NONE)):
            # `model = None` at module level, set by a function's `global model; model = load()`:
            # a placeholder, not what the functions that read it get: its name decides
            val = Named(V_UNKNOWN, name)
        block = self.blocks[-1] if self.blocks else None
        if block is not None and block.scope is scope:
            if name not in block.prior:
                block.prior[name] = scope.bindings.get(name, MISSING)
            block.defs.add(name)
        scope.bindings[name] = val
        fn = self.function
        if fn.const_bools:
            fn.const_bools.pop(name, None)
        if name in fn.pcounters and scope is fn:
            del fn.pcounters[name]
        # `x = torch.tensor(x)` in the branch: x is one now (a merge of an inner `if` only brings
        # back what was bound before it or in it, already accounted for)
        for entry in self.not_tensors if not merged else ():
            if entry is not None and entry[0] is fn and _maybe_tensor(val):
                entry[1].difference_update([k for k in entry[1] if re.match(rf"{re.escape(name)}\b", k)])
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
            if type(stmt) is cst.FunctionDef:
                fid = self._ids[id(stmt)] = self._new_id(stmt.name.value)
                scope.bindings[stmt.name.value] = Sym(fid)
                self.set_globals |= _global_names(stmt)
            elif type(stmt) is cst.ClassDef:
                cid = self._ids[id(stmt)] = self._new_id(stmt.name.value)
                scope.bindings[stmt.name.value] = Sym(cid)
        self.unit_names = guards.unit_names(node, self.set_globals)
        self.blocks.append(Block("body", scope))

    def _leave_module(self, node: cst.Module) -> None:
        self.close_flags(self.scopes[-1])
        self.blocks.pop()
        self._pop_scope()

    def close_flags(self, scope) -> None:
        """Every `if` on a flag that also guards an optimizer step is gradient accumulation, not a
        logging interval (known once the whole body is walked)."""
        for if_id, name in scope.flag_ifs:
            if name in scope.accumulation_flags:
                self.wraps_step.add(if_id)


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
    cst.IfExp: Walker._enter_ifexp,
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
    cst.IfExp: Walker._leave_ifexp,
    cst.IndentedBlock: Walker._leave_branch,
    cst.SimpleStatementSuite: Walker._leave_branch,
    cst.Else: Walker._leave_branch,
    cst.Finally: Walker._leave_branch,
    cst.For: Walker._leave_loop,
    cst.While: Walker._leave_loop,
}


def _global_names(fn: cst.FunctionDef) -> set:
    """The names a module-level function declares `global` in its own body's top statements."""
    out = set()
    body = fn.body.body if type(fn.body) is cst.IndentedBlock else ()
    for stmt in body[:8]:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Global:
                    out.update(n.name.value for n in small.names)
    return out
