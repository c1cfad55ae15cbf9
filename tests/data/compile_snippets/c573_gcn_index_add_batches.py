"""Graph classification with a GCN written without an extension library: each layer adds self-loops,
computes the symmetric degree normalization with `index_add_` and aggregates messages with
`index_add_`, and the readout mean-pools the nodes of each graph by its batch vector; the model is
compiled and trained on mini-batches of 8 molecule-sized graphs whose node and edge counts vary
from batch to batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NODE_FEATS, HIDDEN, CLASSES, GRAPHS = 16, 32, 4, 8


class GCNConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        n = x.shape[0]
        loops = torch.arange(n, device=x.device)
        row = torch.cat([edge_index[0], loops])
        col = torch.cat([edge_index[1], loops])
        deg = torch.zeros(n, device=x.device, dtype=x.dtype).index_add_(0, col, torch.ones_like(col, dtype=x.dtype))
        norm = deg.rsqrt()[row] * deg.rsqrt()[col]
        h = self.lin(x)
        return torch.zeros_like(h).index_add_(0, col, h[row] * norm.unsqueeze(-1))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(NODE_FEATS, HIDDEN)
        self.conv2 = GCNConv(HIDDEN, HIDDEN)
        self.classifier = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x, edge_index, batch):
        h = F.relu(self.conv1(x, edge_index))
        h = F.relu(self.conv2(h, edge_index))
        pooled = torch.zeros(GRAPHS, h.shape[1], device=h.device).index_add_(0, batch, h)
        counts = torch.zeros(GRAPHS, device=h.device).index_add_(0, batch, torch.ones_like(batch, dtype=h.dtype))
        return self.classifier(pooled / counts.unsqueeze(-1))


def collate_graphs(num_graphs):
    xs, edges, batch, offset = [], [], [], 0
    for g in range(num_graphs):
        n = int(torch.randint(5, 15, ()))
        e = int(torch.randint(n, 3 * n, ()))
        xs.append(torch.randn(n, NODE_FEATS))
        edges.append(torch.randint(0, n, (2, e)) + offset)
        batch.append(torch.full((n,), g))
        offset += n
    return torch.cat(xs), torch.cat(edges, dim=1), torch.cat(batch)


model = GCN()
compiled_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for it in range(5):
    x, edge_index, batch = collate_graphs(GRAPHS)
    loss = F.cross_entropy(compiled_model(x, edge_index, batch), torch.randint(0, CLASSES, (GRAPHS,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
