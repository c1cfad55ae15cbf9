"""What an assignment says besides its value (a mixin of :class:`Walker`): registries filled by a
decorator factory, names bound to the host device, host index arrays, device objects."""
from __future__ import annotations

import libcst as cst

from hpulint.analysis import dead
from hpulint.analysis.build import is_cpu
from hpulint.analysis.names import HOST_INDEX_FUNCTIONS


class Notes:
    def _note_registry(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`POLICY_LOSS_REGISTRY[name] = func` in the decorator a decorator factory returns: the
        functions decorated with the factory are the registry's values (see Project.registered)."""
        fn = self.function
        if type(target) is not cst.Subscript or type(target.value) is not cst.Name or type(value) is not cst.Name \
                or fn.kind != "function" or value.value not in fn.params:
            return
        scope, outer = fn, fn
        while scope is not None and scope.kind == "function":
            if target.value.value in scope.bindings:
                return  # a local dict, not the module's registry
            outer, scope = scope, scope.parent
        if scope is not None and scope.kind == "module":
            outer.registers = target.value.value

    def _note_cpu_name(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`cpu = torch.device("cpu")`, `device = "cpu"` at a scope's top level: a later `.to(cpu)`
        copies to the host."""
        if type(target) is not cst.Name:
            return
        fn = self.function
        block = self.blocks[-1] if self.blocks else None
        top = block is None or (block.kind == "body" and block.scope is fn)
        (fn.cpu_names.add if top and is_cpu(self, value) else fn.cpu_names.discard)(target.value)

    def _note_host_index(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`indices = np.where(pos != 0)`, `rows, cols = np.nonzero(m)`: names that hold an index
        NumPy built from data (its length follows the data)."""
        names = self.function.host_index_names
        made = self.host_index_source(value)
        for el in (target.elements if type(target) in (cst.Tuple, cst.List) else (target,)):
            node = el.value if type(el) in (cst.Element, cst.StarredElement) else el
            if type(node) is cst.Name:
                (names.add if made else names.discard)(node.value)

    def host_index_source(self, node: cst.BaseExpression) -> bool:
        """An index NumPy builds from data (`np.where(m)[0]`, `np.nonzero(m)`, `np.flatnonzero(m)`),
        or a name bound to one in this function."""
        while type(node) is cst.Subscript:
            node = node.value
        if type(node) is cst.Name:
            return node.value in self.function.host_index_names
        if type(node) is cst.Call:
            return (self.qualname(node.func) or "") in HOST_INDEX_FUNCTIONS
        return False

    def _note_device_object(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`args.device = torch.device(args.device)`: from here on `args.device == "hpu"` is
        False (a torch.device never equals a string). Recorded when the assignment runs on every
        path (the scope's top level: any string), or under `if args.device == "hpu":` (that
        string: on the other path the name was never it)."""
        key = dead.dotted_key(target)
        if key is None:
            return
        table = self.function.device_objects
        if not dead.is_device_object(value):
            table.pop(key, None)
            return
        block = self.blocks[-1] if self.blocks else None
        if block is not None and block.kind == "body" and block.scope is self.function:
            table[key] = "*"
        elif self.if_frames and block is not None and block.kind == "if-body":
            lit = dead.equals_literal(self.if_frames[-1].node.test, key)
            if lit is not None:
                table[key] = lit
