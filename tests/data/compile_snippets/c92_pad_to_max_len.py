import torch

torch.manual_seed(0)
PAD = 0


@torch.compile
def pack_batch(tokens, lengths):
    max_len = int(lengths.max())
    rows = []
    for i in range(tokens.shape[0]):
        row = tokens[i, :max_len]
        row = torch.where(torch.arange(max_len) < lengths[i], row, PAD)
        rows.append(row)
    return torch.stack(rows)


for _ in range(3):
    lengths = torch.randint(3, 12, (4,))
    tokens = torch.randint(1, 100, (4, 12))
    print(pack_batch(tokens, lengths).shape)
