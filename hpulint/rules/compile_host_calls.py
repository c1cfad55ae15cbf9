"""Host-side Python calls Dynamo does not put in a graph, for HPU012: digests, ``max``/``min`` with a
``key`` over tensors, and ``tensor_split`` at offsets held in a tensor.

Every entry was measured on torch 2.13 (CPU, ``eager`` backend): inside a compiled region each one
is a graph break at its line, with the reason Dynamo logs quoted in the message.

- ``hashlib`` digests (``hashlib.md5(...)``, ``sha1``, ``sha256``... and ``hashlib.new``) and
  ``zlib.crc32``/``adler32`` (C builtins: "Attempted to call function marked as skipped"), also in a
  helper the compiled code calls (an A/B bucket picked from a hashed user id); when the hashed value
  is a string argument that changes per call, the code after the break is also guarded on what it
  got (a recompile per new value); hashing in the eager code and passing the result is no break;
- ``max(items, key=...)``/``min(items, key=...)`` whose items are tensors (a best-of-N pick by a
  reward): Dynamo's handler of ``max``/``min`` takes no ``key`` ("invalid call to builtin op
  handler": "Encountered TypeError when trying to handle op max"), whatever the key returns; over
  Python numbers or tuples of them the call is folded away (no break); scoring the candidates as one
  batch and keeping the best with ``argmax`` is traced;
- ``torch.tensor_split(x, offsets)``/``x.tensor_split(offsets)`` with ``offsets`` a tensor (the
  document starts of a packed row): the offsets are read to the host ("Data dependent operator":
  ``aten._local_scalar_dense``); an int number of sections or a list of ints is traced, and with
  ``torch._dynamo.config.capture_scalar_outputs = True`` there is no break.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import keyword
from hpulint.analysis.values import HOST, MASK, SEQ_TENSOR, TENSOR, TUPLE

DIGESTS = frozenset({"hashlib.md5", "hashlib.sha1", "hashlib.sha224", "hashlib.sha256", "hashlib.sha384",
                     "hashlib.sha512", "hashlib.blake2b", "hashlib.blake2s", "hashlib.sha3_256",
                     "hashlib.sha3_512", "hashlib.new", "zlib.crc32", "zlib.adler32"})
DIGEST_WHY = ("Dynamo does not trace `{name}()` (a C builtin: \"Attempted to call function marked as "
              "skipped\")")
FIX_DIGEST = ("Hash in the eager code around the compiled call (where the request or batch is prepared) and pass "
              "in what it decides, as a tensor when it is a number that changes per call")
KEYED_WHY = ("Dynamo's handler of `{name}()` takes no `key=` (\"invalid call to builtin op handler\": "
             "\"Encountered TypeError when trying to handle op {name}\"), whatever the key returns")
FIX_KEYED = ("Score the items as one batch (`torch.stack` or `torch.cat`) and keep the best with "
             "`argmax`/`argmin` and `index_select`, or pick it in the eager code from the returned scores")
SPLIT_WHY = ("`tensor_split` at offsets held in a tensor reads them to the host (\"Data dependent operator\": "
             "`aten._local_scalar_dense`)")
FIX_SPLIT = ("Pool by a per-token segment id instead (`cumsum` of a start indicator, then `index_add_` or "
             "`scatter_reduce` into a fixed number of slots), pass the offsets as a list of ints made in the "
             "eager code, or set `torch._dynamo.config.capture_scalar_outputs = True`")


def host_call(an, node: cst.Call, scalars: bool, is_tensor) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call in the list above, or None. ``scalars``: the file
    sets ``capture_scalar_outputs``; ``is_tensor(an, v)``: the region's test for a tensor."""
    func = node.func
    if type(func) is cst.Name and func.value in ("max", "min") and func.value not in an.bound_names():
        key = keyword(node, "key")
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        if key is None or len(positional) != 1:
            return None
        v = an.value(positional[0].value)
        name = func.value
        return (f"`{name}(..., key=...)` over tensors", KEYED_WHY.format(name=name), FIX_KEYED,
                lambda: _tensors(an, v))
    qn = an.qualname(func) or ""
    if qn in DIGESTS:
        return f"`{qn}(...)`", DIGEST_WHY.format(name=qn), FIX_DIGEST, lambda: True
    if scalars:
        return None
    if qn == "torch.tensor_split" and len(node.args) >= 2 and node.args[1].keyword is None:
        offsets = node.args[1].value
    elif type(func) is cst.Attribute and func.attr.value == "tensor_split" and qn != "torch.tensor_split" \
            and node.args and node.args[0].keyword is None:
        offsets = node.args[0].value
    else:
        return None
    if type(offsets) in (cst.Integer, cst.List, cst.Tuple):
        return None
    v = an.value(offsets)
    return "`tensor_split()` at offsets in a tensor", SPLIT_WHY, FIX_SPLIT, lambda: is_tensor(an, v)


def _tensors(an, v) -> bool:
    """A list or tuple of tensors (a comprehension of tensors, `x.split(...)`)."""
    res = an.resolve(v)
    if res.kind == SEQ_TENSOR:
        return True
    return res.kind == TUPLE and bool(res.parts) and all(p.kind in (TENSOR, MASK, HOST) for p in res.parts)
