"""HPU003 on a key/value cache extended by concatenation in code run every step: the cache passed
back in as a parameter, kept in a dict of saved states or in a streaming state of the module. Its
look-alikes stay quiet: a static cache written at a device position (the concatenation is then
the fallback for calls without a position), a mask kept with the cache, and a join of two pieces
of the current step.

A file that never keeps a returned cache for the next call, and a window of a fixed length kept
between video chunks, are look-alikes too.

The cases are written for these tests; none is copied from a repository.
"""
from __future__ import annotations

import textwrap

from hpulint.engine import lint_source


def found(src: str) -> list:
    return [(f.code, f.line) for f in lint_source(textwrap.dedent(src), "attn.py") if f.code == "HPU003"]


LAYER = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x, {PARAM}=None, token_idx=None):
        k, v = self.k(x), self.v(x)
        if {PARAM} is not None:
            past_key, past_value = {PARAM}
            {BODY}
        return k, v, (k, v)


def decode(layer, x, steps):
    past = None
    for _ in range(steps):
        x, _, past = layer(x, past)
    return x
"""

GROW = """k = torch.cat((past_key.type_as(k), k), dim=-2)
            v = torch.cat((past_value, v), dim=-2)"""

STATIC_OR_GROW = """if token_idx is not None:
                past_key.index_copy_(2, token_idx - 1, k)
                past_value.index_copy_(2, token_idx - 1, v)
                k, v = past_key, past_value
            else:
                k = torch.cat((past_key, k), dim=-2)
                v = torch.cat((past_value, v), dim=-2)"""


def test_a_cache_passed_back_in_and_extended_every_call_is_reported():
    src = LAYER.replace("{BODY}", GROW).replace("{PARAM}", "layer_past")
    assert found(src) == [("HPU003", 16), ("HPU003", 17)]


def test_a_static_cache_written_at_a_device_position_keeps_its_fallback_quiet():
    # Gaudi's static-shape decoders pass the position: the concatenation runs only without one
    assert found(LAYER.replace("{BODY}", STATIC_OR_GROW).replace("{PARAM}", "past_key_value")) == []


def test_an_encoder_whose_cache_argument_nothing_feeds_back_is_quiet():
    # the same layer in a file that never keeps the returned cache for the next call (a text
    # encoder written with Hugging Face's `past_key_value` argument): it stays None
    src = LAYER.replace("{BODY}", GROW).replace("{PARAM}", "layer_past")
    src = src.replace("x, _, past = layer(x, past)", "x, _, _ = layer(x)")
    assert found(src) == []


def test_a_mask_kept_with_the_cache_is_not_the_cache():
    # `past_mask`: the keys do not come from a key/value cache
    assert found(LAYER.replace("{BODY}", GROW).replace("{PARAM}", "past_mask")) == []


SAVED = """
import torch
from torch import nn


class MultiheadAttention(nn.Module):
    def forward(self, q, k, state):
        saved = state.get("attn")
        if saved is not None:
            prev_key = saved["prev_key"].view(k.size(0), -1, k.size(-1))
            k = torch.cat([prev_key, k], dim=1)
            {STORE}
        return q @ k.transpose(1, 2)


class VideoDecoderConv(nn.Module):
    def forward(self, x, feat_cache, idx):
        cache_x = x[:, :, -2:].clone()
        if feat_cache[idx] is not None:
            # one frame of the last chunk and the new ones: a window of a fixed length
            cache_x = torch.cat([feat_cache[idx][:, :, -1].unsqueeze(2), cache_x], dim=2)
        feat_cache[idx] = cache_x
        return x


class Streaming(nn.Module):
    def __init__(self):
        super().__init__()
        self._streaming_state = {}

    def forward(self, k):
        if self._streaming_state:
            pk = self._streaming_state["past_keys"]
            k = torch.cat([pk, k], dim=1)
        self._streaming_state["past_keys"] = k
        return k
"""


def test_keys_read_from_saved_states_or_a_streaming_state_are_a_cache():
    got = found(SAVED.replace("{STORE}", 'saved["prev_key"] = k'))
    # (the video decoder's causal window keeps its length: quiet)
    assert got == [("HPU003", 11), ("HPU003", 34)]


def test_a_join_of_two_pieces_of_the_current_step_is_no_cache():
    src = """
    import torch
    from torch import nn


    class Rotary(nn.Module):
        def forward(self, x, past_len):
            rot, keep = x[..., :8], x[..., 8:]
            return torch.cat((rot * 2, keep), dim=-1)
    """
    assert found(src) == []


CAUSAL = """
import torch
from torch import nn


class CausalPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.causal_cache = None

    def forward(self, x):
        if self.causal_cache is not None:
            x = torch.cat((self.causal_cache, x), dim=2)
        self.causal_cache = {KEEP}
        return x.mean(dim=2)


def decode(pool, chunks):
    for chunk in chunks:
        yield pool(chunk)
"""


def test_a_cache_that_keeps_only_the_last_frames_does_not_grow():
    # the decoder keeps the last frame of each chunk for the next one: a fixed length
    assert found(CAUSAL.replace("{KEEP}", "x[:, :, -1:].clone()")) == []


def test_a_cache_that_keeps_everything_it_joined_grows():
    assert found(CAUSAL.replace("{KEEP}", "x.clone()")) == [("HPU003", 13)]
