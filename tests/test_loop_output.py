"""HPU005 and host copies that are an inference loop's output (hpulint/analysis/outputs.py).

Each look-alike has a hazard twin of the same shape: the copy is reported when its value goes
back to the device, into a condition, a print or a collection that could stay on the device, or
when the loop trains.
"""
from __future__ import annotations

import textwrap

import pytest

from hpulint import Config, lint_source

HEAD = """
import numpy as np
import torch
from PIL import Image
"""


def found(src: str) -> list:
    src = textwrap.dedent(HEAD) + textwrap.dedent(src)
    return [f"{f.code}@{f.line}" for f in lint_source(src, path="case.py", config=Config())]


CASES = {
    "tokens handed to a streamer in a generation loop": (
        """
        def generate(model, ids, streamer, steps):
            for _ in range(steps):
                nxt = model(ids).argmax(-1)
                ids = torch.cat([ids, nxt[:, None]], -1)
                streamer.put(nxt.cpu())
        """,
        ["HPU003@9"],
    ),
    "the same copy in a training loop is reported": (
        """
        def train(model, loader, optimizer, streamer):
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                streamer.put(loss.detach().cpu())
        """,
        ["HPU005@11"],
    ),
    "an image written to a file per batch": (
        """
        def render(model, loader):
            for i, z in enumerate(loader):
                img = model(z)
                Image.fromarray(img[0].cpu().numpy().astype(np.uint8)).save(f"{i}.png")
                np.save(f"{i}.npy", img.cpu().numpy())
        """,
        [],
    ),
    "detections unpacked into host records for a scorer": (
        """
        def evaluate(model, loader, rows):
            for x, ids in loader:
                results = model(x)
                for img_id, result in zip(ids, results):
                    boxes, scores = [r.cpu().numpy() for r in result]
                    for box, score in zip(boxes, scores):
                        rows.append([img_id, box[0], box[1], score])
            return rows
        """,
        [],
    ),
    "a host copy tested or printed in the unpacking loop is reported": (
        """
        def evaluate(model, loader, rows):
            for x, ids in loader:
                results = model(x)
                for img_id, result in zip(ids, results):
                    boxes, scores = [r.cpu().numpy() for r in result]
                    for box, score in zip(boxes, scores):
                        if score > 0.5:
                            rows.append([img_id, box[0], box[1], score])
                    print(scores)
            return rows
        """,
        ["HPU005@10"],
    ),
    "predictions collected for a metric after the loop are reported": (
        """
        def evaluate(model, loader, device):
            preds, labels = [], []
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                out = model(x)
                preds.append(out.argmax(1).cpu().numpy())
                labels = np.append(labels, y.cpu().numpy())
            return np.concatenate(preds), labels
        """,
        ["HPU005@11", "HPU005@12"],
    ),
    "a round trip through the host is reported": (
        """
        def refine(model, z, steps):
            for _ in range(steps):
                z = model(z)
                q = np.round(z.cpu().numpy() * 127.5)
                z = torch.from_numpy(q).to(z.device)
            return z
        """,
        ["HPU005@9"],
    ),
    "a histogram drawn by a helper only an inference loop calls": (
        """
        def show(z, ax):
            flat = z.reshape(-1).cpu().numpy()
            ax.hist(flat, bins=40)

        def visualise(model, x, ax, steps):
            for _ in range(steps):
                x = model(x)
                show(x, ax)
        """,
        [],
    ),
    "the same helper called from a training loop too is reported": (
        """
        def show(z, ax):
            flat = z.reshape(-1).cpu().numpy()
            ax.hist(flat, bins=40)

        def visualise(model, x, ax, steps):
            for _ in range(steps):
                x = model(x)
                show(x, ax)

        def train(model, loader, optimizer, ax):
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                show(loss, ax)
        """,
        ["HPU005@7"],
    ),
    "a converter that returns the host copy to an indexing loop": (
        """
        def to_numpy(t):
            return t.detach().cpu().numpy()

        def build_index(model, loader, store):
            for ids, x in loader:
                emb = to_numpy(model(x))
                for i, e in zip(ids, emb):
                    store[i] = e
        """,
        [],
    ),
    "a number returned by a helper of an inference loop is a reading, not an output": (
        """
        def score(out):
            return out.max().item()

        def evaluate(model, loader):
            for x in loader:
                print(score(model(x)))
        """,
        ["HPU005@7"],
    ),
    "the converter called from a training loop is reported": (
        """
        def to_numpy(t):
            return t.detach().cpu().numpy()

        def train(model, loader, optimizer, history):
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                history.append(to_numpy(loss))
        """,
        ["HPU005@14"],  # at the call: the converter only returns the copy
    ),
    "images built from each output and collected by a preprocessing loop are its product": (
        """
        def upscale(model, images):
            out = []
            for image in images:
                y = model(image).clamp(0, 1).cpu().numpy()
                out.append(Image.fromarray((np.moveaxis(y, 0, -1) * 255).astype(np.uint8)))
            return out
        """,
        [],
    ),
    "the same arrays collected without becoming images could stay on the device": (
        """
        def upscale(model, images):
            out = []
            for image in images:
                y = model(image).clamp(0, 1).cpu().numpy()
                out.append(np.moveaxis(y, 0, -1))
            return out
        """,
        ["HPU005@9"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_case(name):
    src, expected = CASES[name]
    assert found(src) == expected
