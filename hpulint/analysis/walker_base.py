"""Constants and helpers the walk's handlers share."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import string_value
from hpulint.analysis.values import Join, K

MISSING = object()
# parameter annotations that say what a value is ("": not a tensor, nothing more known)
_ANNOTATED = {"int": "scalar", "float": "scalar", "bool": "scalar", "str": "other", "bytes": "other",
              "list": "seq", "List": "seq", "tuple": "seq", "Tuple": "seq", "Sequence": "seq", "dict": "other",
              "Dict": "other", "Mapping": "other", "Any": "", "Optional": ""}
# attributes only a tensor has (methods count only when called: TENSOR_EVIDENCE)
TENSOR_ATTRIBUTE_EVIDENCE = frozenset({"shape", "grad", "is_cuda", "mT"})
_LIBRARY_PREFIXES = ("torch.", "numpy.", "math.", "os.", "sys.", "logging.", "re.", "json.", "time.",
                     "random.", "collections.", "itertools.", "functools.", "typing.", "dataclasses.",
                     "pathlib.", "argparse.", "copy.", "warnings.", "tqdm.", "shutil.", "subprocess.",
                     "pickle.", "glob.", "datetime.", "builtins.")
_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.nn.Parameter", "torch.FloatTensor",
                                 "torch.LongTensor", "torch.BoolTensor"})
COMPILE_BACKENDS = frozenset({"hpu_backend", "openxla", "aot_hpu_training_backend", "inductor"})


def _maybe_tensor(v) -> bool:
    """Structurally not a known non-tensor (decided for real when the project is linked)."""
    if v is None:
        return False
    if isinstance(v, K):
        return v.kind in ("tensor", "mask")
    if isinstance(v, Join):
        return any(_maybe_tensor(p) for p in v.parts)
    return True


def _off_flag(call: cst.Call) -> Optional[str]:
    """`parser.add_argument("--drop_last", action="store_true")`: the option's dest, False unless
    the option is given; None for any other option."""
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if string_value(kw.get("action")) != "store_true" or "default" in kw:
        return None
    dest = string_value(kw.get("dest")) if "dest" in kw else None
    if dest is None:
        longs = [string_value(a.value) for a in call.args if a.keyword is None]
        longs = [s for s in longs if s and s.startswith("--")]
        if not longs:
            return None
        dest = longs[0][2:].replace("-", "_")
    return dest
