#!/usr/bin/python3
"""PyTorch baseline for `lowcomm bench model`: the identical GPT-2 model (nanoGPT's structure,
as tests/fixtures/make_gpt_fixture.py: pre-LayerNorm blocks, fused c_attn, causal softmax
attention, tanh GELU, tied LM head, mean cross-entropy) trained with torch.optim.AdamW
(betas (0.9, 0.95), wd 0.1) on random tokens, same B, T and thread count; prints tokens/s of a full
step (forward + backward + AdamW) after warm-up, and which BLAS torch is using.

Run: /usr/bin/python3 scripts/bench_model_torch.py --preset gpt2-124m -B 4 -T 64 --threads 2
(Debian's python3-torch; with libopenblas0-pthread installed its GEMMs go to OpenBLAS.)
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # (vocab, context, layers, heads, width), as apps/gpt/config.cpp
    "tiny": (256, 128, 4, 4, 128),
    "small": (256, 256, 4, 4, 256),
    "gpt2-124m": (50257, 1024, 12, 12, 768),
}


class SelfAttention(nn.Module):
    def __init__(self, C, H, Tmax):
        super().__init__()
        self.H = H
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.register_buffer("mask", torch.tril(torch.ones(Tmax, Tmax)).view(1, 1, Tmax, Tmax))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.H, c // self.H).transpose(1, 2)
        k = k.view(b, t, self.H, c // self.H).transpose(1, 2)
        v = v.view(b, t, self.H, c // self.H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, C, H, Tmax):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C)
        self.attn = SelfAttention(C, H, Tmax)
        self.ln_2 = nn.LayerNorm(C)
        self.c_fc = nn.Linear(C, 4 * C)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * C, C)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(self.gelu(self.c_fc(self.ln_2(x))))


class Gpt(nn.Module):
    def __init__(self, V, Tmax, L, H, C):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(Tmax, C)
        self.h = nn.ModuleList([Block(C, H, Tmax) for _ in range(L)])
        self.ln_f = nn.LayerNorm(C)
        for name, p in self.named_parameters():  # GPT-2's initialisation (speed does not depend on it)
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for block in self.h:
            x = block(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def blas_in_use():
    """The BLAS library mapped into this process (torch links libblas.so.3, an alternative)."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if any(name in path for name in ("blas", "mkl", "openblas")):
                libs.add(path)
    import os
    return ", ".join(sorted(os.path.realpath(p) for p in libs)) or "none found"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="gpt2-124m", choices=PRESETS)
    parser.add_argument("-B", "--batch", type=int, default=4)
    parser.add_argument("-T", "--seq", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    V, Tmax, L, H, C = PRESETS[args.preset]
    model = Gpt(V, Tmax, L, H, C)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
    idx = torch.randint(0, V, (args.batch, args.seq))
    targets = torch.randint(0, V, (args.batch, args.seq))
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    mean = sum(times) / len(times)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads; BLAS mapped: {blas_in_use()}")
    config = torch.__config__.show()
    blas = [item.strip() for item in config.replace("\n", ",").split(",") if "BLAS_INFO" in item]
    print(f"# torch build: {'; '.join(blas) or 'BLAS_INFO not reported'}")
    print(f"torch {args.preset} params={n_params} B={args.batch} T={args.seq} threads={args.threads} "
          f"tokens_per_s={args.batch * args.seq / mean:.1f} step_ms={mean * 1e3:.1f} best_ms={min(times) * 1e3:.1f} "
          f"loss={loss.item():.4f}")


if __name__ == "__main__":
    main()
