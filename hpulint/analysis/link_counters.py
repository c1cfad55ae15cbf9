"""The link's facts about counters (a mixin of :class:`hpulint.analysis.link.Linked`): which
parameters of which functions receive a step loop's counter from their callers, transitively
(`p_sample(x, index=total - i - 1)`), and which parameters index a device tensor.
"""
from __future__ import annotations

from typing import Optional

ROUNDS = 12  # passes over the call sites at most (twice the link's rounds)


class CounterFacts:
    """Fills ``counter_params``; needs ``project``, ``sites``, ``step_loops`` and ``where`` from
    the class it is mixed into."""

    # --- counters carried into callees ---------------------------------------------------

    def _counters(self) -> None:
        p = self.project
        changed = True
        rounds = 0
        while changed and rounds < ROUNDS:
            changed = False
            rounds += 1
            for fid, sites in self.sites.items():
                for loop, cls, args, kwargs, tainted, deferred, callee, _ in sites:
                    if not tainted or cls is None or cls[1] is None or cls[1] not in p.functions:
                        continue
                    target = cls[1]
                    params = p.functions[target][1]["params"]
                    for key, origin in tainted.items():
                        reason = self._taint_reason(fid, origin)
                        if reason is None:
                            continue
                        if isinstance(key, int) or key.isdigit():  # positional (JSON keeps keys as str)
                            idx = int(key) + cls[2]
                            if idx >= len(params) or params[idx].startswith("*"):
                                continue
                            name = params[idx]
                        else:
                            name = key
                        got = self.counter_params.setdefault(target, {})
                        if name not in got:
                            got[name] = reason
                            changed = True

    def _taint_reason(self, fid: str, origin: str) -> Optional[str]:
        kind, _, rest = origin.partition(":")
        if kind == "loop":
            if (fid, int(rest)) in self.step_loops:
                return f"the counter of the step loop in {self.where(fid)}"
            return None
        return self.counter_params.get(fid, {}).get(rest)

    # --- values fed back through a callee ------------------------------------------------

    def _fed_back(self) -> None:
        """``fed_params``: fid -> {param: reason} for a parameter whose argument a step loop of a
        caller assigns the call's result back to (`ids, logits = update(ids, ...)`): what the
        callee returns for it comes back on the next step."""
        p = self.project
        for fid, (_, f) in p.functions.items():
            for k, keys in f.get("fed", ()):
                loop = f["calls"][k][1] if k < len(f["calls"]) else -1
                step = None
                while loop is not None and loop != -1 and step is None:
                    step = self.step_loops.get((fid, loop))
                    loop = f["loops"][loop]["parent"]
                if step is None:
                    continue
                targets = self.call_targets.get(fid, [])
                for t in targets[k] if k < len(targets) else ():
                    if t is None or t[1] is None or t[1] not in p.functions:
                        continue
                    params = p.functions[t[1]][1]["params"]
                    for key in keys:
                        idx = key + t[2] if isinstance(key, int) else None
                        name = params[idx] if idx is not None and idx < len(params) else key
                        if isinstance(name, str) and name in params and not name.startswith("*"):
                            self.fed_params.setdefault(t[1], {}).setdefault(
                                name, f"the step loop in {self.where(fid)} passes the result back in")

    # --- parameters used as indices -----------------------------------------------------

    def tensor_index_params(self, fid: str) -> list:
        """Parameters of ``fid`` that index a device tensor (`alphas[index]`)."""
        p = self.project
        mod, f = p.functions[fid]
        out = []
        for name, j in f.get("index_uses", ()):
            if name not in out and p.resolve(p.val(j, mod)).kind in ("tensor", "mask"):
                out.append(name)
        return out
