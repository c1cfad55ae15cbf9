"""Node classification with a two-layer graph convolutional network on an XLA device: the
normalised adjacency is built once as a sparse matrix and stored on each layer; the training
step is compiled with torch_xla.compile."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


def normalized_adjacency(edge_index, n):
    loops = torch.arange(n).repeat(2, 1)
    ei = torch.cat([edge_index, loops], dim=1)
    deg = torch.zeros(n).index_add_(0, ei[0], torch.ones(ei.shape[1]))
    w = deg[ei[0]].rsqrt() * deg[ei[1]].rsqrt()
    return torch.sparse_coo_tensor(ei, w, (n, n)).coalesce()


class GraphConv(nn.Module):
    def __init__(self, adj, d_in, d_out):
        super().__init__()
        self.adj = adj
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x):
        return torch.sparse.mm(self.adj, self.lin(x))


n = 20
edges = torch.randint(0, n, (2, 60))
adj = normalized_adjacency(torch.cat([edges, edges.flip(0)], dim=1), n).to(device)
gcn = nn.ModuleList([GraphConv(adj, 8, 16), GraphConv(adj, 16, 3)]).to(device)
opt = torch.optim.Adam(gcn.parameters(), lr=0.01)
feats, labels = torch.randn(n, 8, device=device), torch.randint(0, 3, (n,), device=device)
train_mask = (torch.rand(n, device=device) < 0.5).float()


def train_step():
    h = F.relu(gcn[0](feats))
    out = gcn[1](F.dropout(h, 0.5))
    per_node = F.cross_entropy(out, labels, reduction="none")
    return (per_node * train_mask).sum() / train_mask.sum()


step = torch_xla.compile(train_step)
for epoch in range(4):
    loss = step()
    loss.backward()
    opt.step()
    opt.zero_grad()
    xm.mark_step()
print(loss.detach())
