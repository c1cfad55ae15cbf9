"""Host copies that are what an inference loop produces, not a per-step cost a user can remove.

A loop that does not train (no backward(), no optimizer step in it, its nested loops or its
callees; an evaluation hook, `validation_step`, does not either) and whose passes each produce something for the world outside the program (an image
written to a file or shown on screen, tokens handed to a streamer, detections unpacked into the
rows a scorer reads) must copy that product to the host once per pass: the copy *is* the loop's
output. Such a copy is recognised by where its value goes, read from the code that follows it:

- straight into an output call: a file or array write (`np.save`, `img.save`, `f.write`,
  `json.dump`), a display (`st.image`, `plt.imshow`, `ax.hist`), a streamer or queue (`put`),
  or a `yield`;
- into names whose every later use in the pass is such a call, or a `for` loop over them whose
  body only builds host records (no `if`/`while` on what it reads);
- into an image (`Image.fromarray(a)`): the product itself, whatever is done with it next;
- into a string that goes out (`f"{example['index'][i]}-{digest}.jpg"` as the name of the image
  file the pass saves);
- through host work on the way: arithmetic, NumPy casts and layout, einops' `rearrange`, and
  functions that take it and return no device value (`put_watermark(img)`);
- returned whole by a helper (`def to_numpy(t): return t.cpu().numpy()`) that only inference
  loops reach (a returned `.item()` is a reading the caller uses, not an output).

A read of the copy's `.shape`, `.dtype` or `.ndim` on the way (in a message) is not a use of its
data.

Anything else keeps the copy a per-step cost: a value that goes back to the device, into a
condition, a print or a log, a running sum, or a collection the code could have kept on the device
and copied once after the loop (`np.append(preds, logits.cpu().numpy())`). A copy in a loop that
trains is never exempt.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import last_name
from hpulint.analysis.values import DATA, MASK, MODEL, SYM, TENSOR

# calls that send a host value out of the program: files and arrays, screens, streams
OUTPUT_CALLS = frozenset({
    "save", "savez", "savez_compressed", "savetxt", "tofile", "imwrite", "imsave", "write",
    "writelines", "dump", "put", "put_nowait", "image", "imshow", "hist", "pyplot", "savefig",
})
# host wrappers a copied value can pass through on its way to an output: element-wise Python
# iteration helpers, NumPy casts
_TRANSPARENT_CALLS = frozenset({"zip", "enumerate", "list", "tuple", "reversed"})
# an image built from the copy (`Image.fromarray(a)`): the product itself, whatever is done with
# it next (shown, saved, resized, collected): it only goes back to a device converted again
_IMAGE_CALLS = frozenset({"fromarray"})
_NUMPY_PREFIXES = ("numpy.", "np.")
# NumPy functions that only cast, lay out or clip an array (`np.transpose(a, (1, 2, 0))`), and
# einops' `rearrange(a, "c h w -> h w c")`: on a host copy they are host work on the same data
_NUMPY_LAYOUT = frozenset({"transpose", "moveaxis", "swapaxes", "squeeze", "expand_dims", "ascontiguousarray",
                           "asarray", "array", "clip", "round", "rint", "flip", "fliplr", "flipud", "rot90",
                           "concatenate", "stack", "hstack", "vstack", "reshape"})
# what an array says about itself, not its data (`print(arr.shape)`)
_METADATA = frozenset({"shape", "dtype", "ndim"})
# methods that put a host value back on the device
_TO_DEVICE = frozenset({"to", "cuda", "hpu", "xla"})


def _parents(root: cst.CSTNode) -> dict:
    out: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            out[id(child)] = node
            stack.append(child)
    return out


class _Flow:
    """Follows a copied value forward inside ``container`` (a step loop or a function)."""

    def __init__(self, an, container: cst.CSTNode) -> None:
        self.an = an
        self.container = container
        self.parents = _parents(container)
        self.order = {}
        for i, node in enumerate(_preorder(container)):
            self.order[id(node)] = i

    def value_use(self, node: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """Where the value of ``node`` ends up: "output", "return", or None (anything else)."""
        cur = node
        while True:
            parent = self.parents.get(id(cur))
            if parent is None:
                return None
            if type(parent) is cst.Attribute and parent.value is cur:
                call = self.parents.get(id(parent))
                if not (type(call) is cst.Call and call.func is parent):
                    if parent.attr.value in _METADATA:
                        return "meta"  # `cls_np.shape` in a message: nothing of the data
                    cur = parent  # `x.numpy().T`: still the host copy
                    continue
                if parent.attr.value in _TO_DEVICE:
                    return None  # back to the device: a round trip
                if parent.attr.value in OUTPUT_CALLS:
                    return "output"  # `arr.tofile(f)`
                cur = call  # a host method on the copy (`.numpy()`, `.transpose(...)`)
                continue
            if type(parent) in (cst.Subscript, cst.BinaryOperation, cst.UnaryOperation,
                                cst.List, cst.Tuple, cst.Element, cst.StarredElement,
                                cst.ListComp, cst.GeneratorExp, cst.SubscriptElement, cst.Index,
                                cst.FormattedStringExpression, cst.FormattedString):
                if type(parent) is cst.Subscript and parent.value is not cur:
                    return None  # used as an index: a host index into something
                cur = parent
                continue
            if type(parent) is cst.Arg:
                call = self.parents.get(id(parent))
                if type(call) is not cst.Call:
                    return None
                name = last_name(call.func) or ""
                qn = self.an.qualname(call.func) or ""
                if name in OUTPUT_CALLS or name in _IMAGE_CALLS:
                    return "output"
                if name in _TRANSPARENT_CALLS or qn.startswith("einops.") or (qn.startswith(_NUMPY_PREFIXES) and (
                        name.startswith(("float", "int", "uint")) or name in _NUMPY_LAYOUT)) or self._host_helper(call):
                    cur = call
                    continue
                return None
            if type(parent) is cst.Yield:
                return "output"
            if type(parent) is cst.Return:
                return "return"
            if type(parent) is cst.Assign and parent.value is cur:
                names = [n for t in parent.targets for n in _target_names(t.target)]
                if not names or depth > 2:
                    return None
                return self.names_use(names, parent, depth + 1)
            if type(parent) is cst.For and parent.iter is cur:
                return "output" if _builds_records(parent) else None
            return None

    def _host_helper(self, call: cst.Call) -> bool:
        """A function (of the project or imported) that takes the host copy and does not hand
        back a device value (`img = put_watermark(img, encoder)`): host work on the way to the
        output (the flow must still end in an output call)."""
        an = self.an
        site = an.call_sites.get(id(call))
        if site is None or an.resolver is None:
            return False
        callee = an.resolve(site.callee)
        if callee.kind != SYM or not callee.ref or callee.ref.startswith("torch."):
            return False  # not a plain function (a method, a builtin); torch's own are known
        return an.resolver.env.ret(callee.ref).kind not in (TENSOR, MASK, DATA, MODEL)

    def names_use(self, names: list, after: cst.CSTNode, depth: int) -> Optional[str]:
        """Every later read of ``names`` in the container goes out (None when one does not, or
        when there is none)."""
        # after the whole statement: `x = 255. * rearrange(x.cpu().numpy(), ...)` reads the old x
        start = max((self.order.get(id(n), -1) for n in _preorder(after)), default=-1)
        later = [n for n in _preorder(self.container)
                 if type(n) is cst.Name and n.value in names and self.order.get(id(n), -1) > start]
        stores = [n for n in later if self._is_store(n)]
        uses = [n for n in later if not self._is_store(n) and not self._rebound_before(n, stores)]
        if not uses:
            return None
        kinds = {self.value_use(n, depth) for n in uses} - {"meta"}
        return "output" if kinds == {"output"} else None

    def _rebound_before(self, use: cst.Name, stores: list) -> bool:
        """A store of the same name earlier in a block that holds ``use`` (straight-line code
        before it: `img = to_pil(x)` then `score(img)` reads the new value, not the copy)."""
        at = self.order.get(id(use), -1)
        ancestors = set()
        cur = self.parents.get(id(use))
        while cur is not None:
            ancestors.add(id(cur))
            cur = self.parents.get(id(cur))
        for s in stores:
            if s.value != use.value or self.order.get(id(s), -1) >= at:
                continue
            stmt = s
            while stmt is not None and type(stmt) not in (cst.SimpleStatementLine, cst.For):
                stmt = self.parents.get(id(stmt))
            if type(stmt) is cst.For:  # `for prompt, img in ...`: the target holds in the body
                if id(stmt.body) in ancestors:
                    return True
                continue
            block = self.parents.get(id(stmt)) if stmt is not None else None
            if block is not None and id(block) in ancestors and id(stmt) not in ancestors:
                return True
        return False

    def _is_store(self, name: cst.Name) -> bool:
        """A name being assigned (`a, b = ...`, `for a in ...`), not read."""
        cur, parent = name, self.parents.get(id(name))
        while type(parent) in (cst.Element, cst.StarredElement, cst.Tuple, cst.List):
            cur, parent = parent, self.parents.get(id(parent))
        return type(parent) in (cst.AssignTarget, cst.Param, cst.AsName) or (
                                type(parent) in (cst.For, cst.CompFor, cst.AugAssign, cst.AnnAssign) and parent.target is cur)


def _preorder(root: cst.CSTNode):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _target_names(target: cst.BaseExpression) -> list:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for el in target.elements for n in _target_names(el.value)]
    return []


def _builds_records(loop: cst.For) -> bool:
    """A `for` over host values whose body only stores what it reads (no test on it)."""
    return not any(type(n) in (cst.If, cst.While, cst.Assert, cst.IfExp, cst.Break, cst.Return)
                               for n in _preorder(loop.body))


def is_loop_output(an, here, node: cst.CSTNode) -> bool:
    """The host copy at ``node`` (after bind) is the product of a loop that does not train:
    see the module docstring."""
    step = next((lp for lp in here.loop.chain() if lp.is_step_loop), None) if here.loop is not None else None
    if step is not None:
        training = an.loop_training(step)
        if training["backward"] or training["opt_step"]:
            return False
        return _Flow(an, step.node).value_use(node) == "output"
    fn = here.function
    if fn.kind != "function" or an.facts is None or an.facts.ask(("trains", fn.fid)):
        return False
    use = _Flow(an, fn.node).value_use(node)
    # a converter hands back a whole array; a returned `.item()` is a reading its caller uses
    return use == "output" or (use == "return" and _is_bulk(an, node))


def run_output(an, v) -> bool:
    """What a model's `generate()` returns (or a part of it): the tokens of a whole decoding run,
    copied once per run, not once per step (the decoding steps run inside `generate()`)."""
    while v is not None:
        t = v.tag
        if t == "meth" and v.name == "generate":
            return an.is_model(v.base)
        if t not in ("meth", "attr", "elem", "named", "used"):
            return False
        v = v.base
    return False


def _is_bulk(an, node: cst.CSTNode) -> bool:
    """A copy of a whole tensor (`.cpu()`, `.numpy()`, `.tolist()`, `.to("cpu")`, `np.array(t)`),
    not the read of one number."""
    if type(node) is not cst.Call:
        return False
    if type(node.func) is cst.Attribute:
        return node.func.attr.value in ("cpu", "numpy", "tolist", "to")
    return (an.qualname(node.func) or "") in ("numpy.array", "numpy.asarray", "torch.tensor", "torch.as_tensor")
