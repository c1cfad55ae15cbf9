"""Registries: module-level dicts a decorator factory fills (`@register_policy_loss("clip_cov")`
stores the function in `POLICY_LOSS_REGISTRY`) and a getter reads (`return
POLICY_LOSS_REGISTRY[name]`). A call of what the getter returns may be any registered function.
The walk records both sides in the summaries (``registers``, ``registry_getter``)."""
from __future__ import annotations

from hpulint.analysis.values import Val


def registered(p, callee: Val) -> list:
    """`loss_fn = get_policy_loss_fn(mode); loss_fn(...)` where the getter returns
    `POLICY_LOSS_REGISTRY[mode]` and `@register_policy_loss("clip_cov")` fills that dict: every
    function registered there (the call may be any of them)."""
    while callee.tag in ("named", "used"):
        callee = callee.base
    if callee.tag not in ("ret", "retof"):
        return []
    sym = p.symbol(callee.ref)
    if sym is None or sym[0] != "fn":
        return []
    mod, f = p.functions[sym[1]]
    name = f.get("registry_getter")
    if not name:
        return []
    if p.registries is None:
        p.registries = {}
        for fid, (m, g) in p.functions.items():
            for d in g["decorators"]:
                # (a decorator defined in the same module is recorded by its bare name)
                hit = p.symbol(f"{m}:{d}") if "." not in d else None
                hit = hit or p.symbol(p._absolute(d, m))
                if hit is not None and hit[0] == "fn":
                    dm, df = p.functions[hit[1]]
                    if df.get("registers"):
                        p.registries.setdefault((dm, df["registers"]), []).append(fid)
    return p.registries.get((mod, name), [])
