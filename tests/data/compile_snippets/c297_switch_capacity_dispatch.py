# A Switch-Transformer style MoE layer with a fixed expert capacity: each token goes to its
# top-1 expert, its slot in that expert's buffer is the running count of earlier tokens routed
# there (cumsum over a one-hot), tokens past the capacity are dropped, and dispatch and combine
# are dense einsums over a (tokens, experts, capacity) mask.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SwitchMoE(nn.Module):
    def __init__(self, dim=32, n_experts=4, hidden=64, capacity_factor=1.25):
        super().__init__()
        self.n_experts = n_experts
        self.capacity_factor = capacity_factor
        self.router = nn.Linear(dim, n_experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(n_experts, dim, hidden) * dim ** -0.5)
        self.w_out = nn.Parameter(torch.randn(n_experts, hidden, dim) * hidden ** -0.5)

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(b * t, d)
        capacity = int(self.capacity_factor * tokens.shape[0] / self.n_experts)
        probs = self.router(tokens).softmax(-1)
        gate, expert = probs.max(-1)
        expert_mask = F.one_hot(expert, self.n_experts)
        position = (torch.cumsum(expert_mask, dim=0) - 1) * expert_mask
        keep = (position < capacity) & expert_mask.bool()
        slot = F.one_hot(position.clamp(max=capacity - 1), capacity) * keep.unsqueeze(-1)
        dispatch = slot.to(x.dtype)
        combine = dispatch * gate[:, None, None]
        expert_in = torch.einsum("tec,td->ecd", dispatch, tokens)
        hidden = F.gelu(torch.einsum("ecd,edh->ech", expert_in, self.w_in))
        expert_out = torch.einsum("ech,ehd->ecd", hidden, self.w_out)
        out = torch.einsum("tec,ecd->td", combine, expert_out)
        aux_loss = self.n_experts * (expert_mask.float().mean(0) * probs.mean(0)).sum()
        return out.reshape(b, t, d), aux_loss


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.moe = SwitchMoE(dim)

    def forward(self, x):
        y, aux = self.moe(self.norm(x))
        return x + y, aux


block = Block()
compiled = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(4, 16, 32)
    y, aux = compiled(x)
    loss = y.pow(2).mean() + 0.01 * aux
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
