"""Operators, `raise` statements and tensor-subclass uses in a compiled region, for HPU012: the
node visits that feed compile_builtin_calls (`"..." % t`), compile_tensor_subclasses and
compile_raises (a mixin of the rule, which keeps the rule's module short)."""
from __future__ import annotations

import libcst as cst

from hpulint.rules.compile_builtin_calls import FIX_TEXT, percent_text
from hpulint.rules.compile_raises import FIX_RAISE, RAISE_WHY, Raises
from hpulint.rules.compile_tensor_subclasses import FIX_PLAIN, FIX_WRAPPER, PLAIN_WHY, WRAPPER_WHY, Subclasses
from hpulint.rules.compiled_region import compiled_why, is_tensor, not_traced


class RegionOperators:
    """Needs the rule's ``an`` and ``_report(node, what, fix, check, subject=...)``."""

    def _operators_init(self) -> None:
        self.subclasses = Subclasses()
        self.raises = Raises()
        self.subclass_uses: dict = {}  # id(function scope) -> operators and calls that may take a wrapper tensor

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        an = self.an
        fn = an.function
        if fn.kind != "function" or not_traced(an):
            return
        hit = percent_text(an, node, is_tensor)
        if hit is not None:
            said, why, fix, check = hit
            self._report(node, said, FIX_TEXT, check, subject=lambda: (said, why))
            return
        subs = self.subclasses
        if not subs.kinds:
            return
        left = node.left.expression if type(node.left) is cst.UnaryOperation else node.left
        if type(left) in (cst.Integer, cst.Float):
            def subject():
                op, cls = subs.reflected(fn, node)
                return f"`{op}` with a `{cls}` on its right", PLAIN_WHY.format(op=op, cls=cls)
            self._report(node, None, FIX_PLAIN, lambda: subs.reflected(fn, node) is not None, subject=subject)
        self._subclass_use(node)

    def _subclass_use(self, node: cst.CSTNode) -> None:
        """An operator or call that may take a wrapper subclass tensor: the function's first one breaks."""
        subs = self.subclasses
        an = self.an
        fn = an.function
        if not subs.kinds or fn.kind != "function" or not_traced(an):
            return
        uses = self.subclass_uses.setdefault(id(fn), [])
        uses.append(node)

        def check():
            first = next((u for u in uses if subs.wrapper_use(fn, u) is not None), None)
            return first is node

        def subject():
            cls = subs.wrapper_use(fn, node)
            return f"an operator on a `{cls}`", WRAPPER_WHY.format(cls=cls)
        self._report(node, None, FIX_WRAPPER, check, subject=subject)

    def visit_Raise(self, node: cst.Raise) -> None:
        an = self.an
        if node.exc is None or not_traced(an):
            return
        name = self.raises.raised(an, node)
        if name is None:
            return
        raises = self.raises

        def check():
            return raises.caught_outside(name, lambda scope: compiled_why(an, scope) is not None)
        said = f"`raise {name}`"
        self._report(node, said, FIX_RAISE, check, subject=lambda: (said, RAISE_WHY.format(cls=name)))
