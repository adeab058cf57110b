#!/usr/bin/env python3
"""Times one training step of the model zoo's GPT in PyTorch eager float32 on the GPU.

The baseline of `scripts/gpu-check`'s gpt step ratio: the same model as `ir-migrate build gpt`
(oldir/models/gpt.h: a pre-LayerNorm decoder, word + position embeddings, per block LayerNorm,
q/k/v/proj Linear, scaled scores plus the additive causal mask of -1e4 above the diagonal,
softmax, attention dropout (upscale in train), LayerNorm, fc1 -> exact gelu -> fc2, two
residuals; final LayerNorm, a head Linear without bias, softmax cross entropy averaged over the
tokens), trained by AdamW with the zoo's settings (oldir/optimizer.h: betas 0.9 / 0.999, epsilon
1e-8, weight decay 0.01, every parameter decayed). Linear weights and embeddings are Xavier
uniform and biases zero, as the zoo's startup draws them (not the same numbers: the timing does
not depend on them). Each step draws fresh tokens and labels on the host and copies them to the
GPU, as `ir-migrate run --random-feeds` feeds every step.

A step is forward, backward and the optimizer update, timed between two
torch.cuda.synchronize() calls after warm-up steps; the median over the timed steps is printed as

    torch_gpt_step: median 0.012345 s per step (20 steps after 3 warm-up) on NVIDIA H200, torch 2.11

TF32 is off (float32 matmuls in full precision, as ir-migrate's pedantic cuBLAS settings).
Exit 0 measured; 77 skipped (no PyTorch, or no CUDA device), with a line starting "SKIP".
"""

import argparse
import statistics
import sys
import time

SKIP = 77


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.hidden % args.heads != 0:
        p.error(f"--heads {args.heads} does not divide --hidden {args.hidden}")
    if args.steps < 1:
        p.error("--steps must be at least 1")
    return args


def build_model(torch, args):
    nn = torch.nn
    F = torch.nn.functional

    def linear(fan_in, fan_out, bias=True):
        layer = nn.Linear(fan_in, fan_out, bias=bias)
        nn.init.xavier_uniform_(layer.weight)
        if bias:
            nn.init.zeros_(layer.bias)
        return layer

    def embedding(num, dim):
        layer = nn.Embedding(num, dim)
        nn.init.xavier_uniform_(layer.weight)
        return layer

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            h = args.hidden
            self.ln1 = nn.LayerNorm(h, eps=1e-5)
            self.q, self.k, self.v, self.proj = (linear(h, h) for _ in range(4))
            self.ln2 = nn.LayerNorm(h, eps=1e-5)
            self.fc1 = linear(h, 4 * h)
            self.fc2 = linear(4 * h, h)

        def split_heads(self, t):
            b, s, _ = t.shape
            return t.reshape(b, s, args.heads, args.hidden // args.heads).transpose(1, 2)

        def forward(self, x, mask):
            b, s, h = x.shape
            y = self.ln1(x)
            q, k, v = (self.split_heads(f(y)) for f in (self.q, self.k, self.v))
            scores = torch.matmul(q, k.transpose(-1, -2)) * (args.hidden // args.heads) ** -0.5
            weights = F.dropout(F.softmax(scores + mask, dim=-1), args.dropout, training=True)
            context = torch.matmul(weights, v).transpose(1, 2).reshape(b, s, h)
            x = x + self.proj(context)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.word = embedding(args.vocab, args.hidden)
            self.pos = embedding(args.seq, args.hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
            self.final_ln = nn.LayerNorm(args.hidden, eps=1e-5)
            self.head = linear(args.hidden, args.vocab, bias=False)
            self.register_buffer("positions", torch.arange(args.seq).reshape(1, args.seq))
            self.register_buffer(
                "mask", torch.triu(torch.full((args.seq, args.seq), -1e4), diagonal=1))

        def forward(self, tokens, labels):
            x = self.word(tokens) + self.pos(self.positions)
            for block in self.blocks:
                x = block(x, self.mask)
            logits = self.head(self.final_ln(x))
            return F.cross_entropy(logits.reshape(-1, args.vocab), labels.reshape(-1))

    return Gpt()


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"SKIP torch_gpt_step: PyTorch not installed ({e})")
        return SKIP
    if not torch.cuda.is_available():
        print(f"SKIP torch_gpt_step: no CUDA device visible to torch {torch.__version__}")
        return SKIP
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    model = build_model(torch, args).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01)
    generator = torch.Generator().manual_seed(args.seed)

    def step():
        tokens = torch.randint(0, args.vocab, (args.batch_size, args.seq), generator=generator)
        labels = torch.randint(0, args.vocab, (args.batch_size, args.seq, 1), generator=generator)
        loss = model(tokens.to(device), labels.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    if not torch.isfinite(loss).item():
        print(f"FAIL torch_gpt_step: the loss is {loss.item()}")
        return 1
    print(f"torch_gpt_step: median {statistics.median(seconds):.6f} s per step ({args.steps} steps "
          f"after {args.warmup} warm-up) on {torch.cuda.get_device_name(device)}, "
          f"torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
