"""`torch_xla.compile` graph transformer for molecule-sized graphs with Laplacian positional
encodings: the compiled loss builds the symmetric normalized Laplacian of each graph's dense
adjacency and takes its `K` smallest eigenvectors with `torch.lobpcg(..., largest=False)`, flips
their signs at random (as in training with LapPE) and adds a projection of them to the node
features before the attention layers."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_step, device = torch_xla.compile, torch_xla.device()
except ImportError:  # CPU run without PyTorch/XLA
    torch_xla, compile_step, device = None, torch.compile, torch.device("cpu")

torch.manual_seed(0)
NODES, FEATS, DIM, K = 24, 16, 32, 4


def laplacian_pe(adj):
    deg = adj.sum(-1).clamp(min=1)
    norm = deg.rsqrt()
    lap = torch.eye(adj.shape[-1]) - norm[:, None] * adj * norm[None, :]
    _, vecs = torch.lobpcg(lap + 1e-3 * torch.eye(adj.shape[-1]), k=K, largest=False)
    return vecs * (torch.randint(0, 2, (1, K)) * 2 - 1)


class GraphTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATS, DIM)
        self.pe = nn.Linear(K, DIM)
        self.layer = nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=64, batch_first=True)
        self.out = nn.Linear(DIM, 1)

    def forward(self, feats, adj):
        h = self.inp(feats) + self.pe(laplacian_pe(adj))
        mask = adj == 0
        mask.fill_diagonal_(False)
        return self.out(self.layer(h[None], src_mask=mask)[0].mean(0))


model = GraphTransformer().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def compute_loss(feats, adj, target):
    return F.mse_loss(model(feats, adj), target)


loss_fn = compile_step(compute_loss)
for it in range(3):
    adj = (torch.rand(NODES, NODES) < 0.2).float().triu(1)
    adj = adj + adj.T
    loss = loss_fn(torch.randn(NODES, FEATS).to(device), adj.to(device), torch.randn(1).to(device))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
