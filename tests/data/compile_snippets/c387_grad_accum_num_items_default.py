"""Causal-LM fine-tuning with gradient accumulation, token-count normalized loss.

As in recent Hugging Face Trainer versions, the loss of every micro-batch is summed over tokens
and divided by `num_items_in_batch`, the number of label tokens in the whole accumulated batch
(counted on the host before the micro-batches run). The trainer compiles its `compute_loss`
once, with the `dynamic` setting taken from its config, which leaves it to Dynamo (None).
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, SEQ = 200, 32, 16


@dataclass
class TrainConfig:
    grad_accum: int = 2
    lr: float = 1e-3
    compile_dynamic: bool | None = None


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.block = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        h = self.embed(ids)
        return self.lm_head(h + self.block(h))


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.compute_loss = torch.compile(self.compute_loss, dynamic=cfg.compile_dynamic)

    def compute_loss(self, ids, labels, num_items_in_batch):
        logits = self.model(ids)[:, :-1]
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels[:, 1:].reshape(-1),
                               ignore_index=-100, reduction="sum")
        return loss / num_items_in_batch

    def train_step(self, micro_batches):
        num_items = sum(int((labels[:, 1:] != -100).sum()) for _, labels in micro_batches)
        for ids, labels in micro_batches:
            self.compute_loss(ids, labels, num_items).backward()
        self.opt.step()
        self.opt.zero_grad()


def micro_batch():
    ids = torch.randint(0, VOCAB, (4, SEQ))
    labels = ids.clone()
    labels[:, : torch.randint(2, 8, ()).item()] = -100  # prompt tokens are not trained on
    return ids, labels


cfg = TrainConfig()
trainer = Trainer(TinyLM(), cfg)
for step in range(10):
    trainer.train_step([micro_batch() for _ in range(cfg.grad_accum)])
print("done")
