"""Registries: module-level dicts a decorator factory fills (`@register_policy_loss("clip_cov")`
stores the function in `POLICY_LOSS_REGISTRY`, `@register_predictor(name="euler")` a class) and a
getter reads (`return POLICY_LOSS_REGISTRY[name]`). A call of what the getter returns may be any
registered function; a method of an instance of it (`get_predictor(name)(graph).update_fn(...)`)
that method of any registered class. The walk records both sides in the summaries
(``registers``, ``registry_getter``, the decorators of functions and classes)."""
from __future__ import annotations

from hpulint.analysis.values import Val


def _getter_registry(p, callee: Val):
    """(module, registry name) a getter call `get_x(name)` reads, or None."""
    while callee.tag in ("named", "used"):
        callee = callee.base
    if callee.tag not in ("ret", "retof"):
        return None
    sym = p.symbol(callee.ref)
    if sym is None or sym[0] != "fn":
        return None
    mod, f = p.functions[sym[1]]
    name = f.get("registry_getter")
    return (mod, name) if name else None


def _entries(p) -> dict:
    """(module, registry name) -> the ids of the functions and classes registered there."""
    if p.registries is None:
        p.registries = {}
        decorated = [(fid, m, g["decorators"]) for fid, (m, g) in p.functions.items()]
        decorated += [(cid, m, c.get("decorators", ())) for cid, (m, c) in p.classes.items()]
        for key, m, decorators in decorated:
            for d in decorators:
                # (a decorator defined in the same module is recorded by its bare name)
                hit = p.symbol(f"{m}:{d}") if "." not in d else None
                hit = hit or p.symbol(p._absolute(d, m))
                if hit is not None and hit[0] == "fn":
                    dm, df = p.functions[hit[1]]
                    if df.get("registers"):
                        p.registries.setdefault((dm, df["registers"]), []).append(key)
    return p.registries


def registered(p, callee: Val) -> list:
    """`loss_fn = get_policy_loss_fn(mode); loss_fn(...)` where the getter returns
    `POLICY_LOSS_REGISTRY[mode]` and `@register_policy_loss("clip_cov")` fills that dict: every
    function registered there (the call may be any of them)."""
    key = _getter_registry(p, callee)
    if key is None:
        return []
    return [fid for fid in _entries(p).get(key, []) if fid in p.functions]


def registered_methods(p, callee: Val) -> list:
    """`predictor = get_predictor(name)(graph, noise); predictor.update_fn(...)`: the method
    ``callee.name`` of every class registered where the getter reads."""
    if callee.tag != "attr":
        return []
    base = callee.base
    while base.tag in ("named", "used"):
        base = base.base
    if base.tag != "call":
        return []
    key = _getter_registry(p, base.base)
    if key is None:
        return []
    out = []
    for cid in _entries(p).get(key, []):
        if cid in p.classes:
            fid = p.method(cid, callee.name)
            if fid is not None and fid not in out:
                out.append(fid)
    return out
