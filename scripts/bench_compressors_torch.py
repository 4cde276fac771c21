#!/usr/bin/python3
"""PyTorch baseline for `lowcomm bench compressors`: the same math as every built-in compressor's
round trip (encode, the collective's local work, decode, and error feedback where lowcomm has it
on by default), on GPT-2 small's tensor shapes, timed best-of-N after warm-up.

What lowcomm times (apps/lowcomm/bench/bench_compressors_command.cpp) is one
CompressedAllReduce::run per tensor: encode + the collectives + decode, per-tensor granularity,
the built-in defaults below, a fresh compressor per (codec, shape), step = iteration index, run 0
a warm-up, the slowest rank's best of `bench.iterations`. Here one process stands in for all W
ranks: every rank is taken to hold the same gradient, so each collective becomes its local work
on W copies of this process's buffer (all-reduce: a copy of the first, then W − 1 adds, in rank
order; all-gather: W references to the payload, concatenated by the decoder as DeMo's
batch_decompress does). Per codec (defaults as lib/compress/builtin/*.cpp):

  none      fp32 dense all-reduce, then / W.
  randomk   ratio 0.01, k = max(1, floor(ratio·n)) distinct coordinates shared by all ranks,
            error feedback on: c = g + e; all-reduce c[idx]; out[idx] = sum / W, 0 elsewhere;
            e = c with c[idx] = 0.
  topk      ratio 0.01, global top-k of |g + e| per tensor, error feedback on: values gathered
            with their indices, out = index_add of every rank's pairs (duplicates accumulate) / W,
            e = c with c[idx] = 0 (REFERENCE.md §2).
  quantize  8 bits, one fp32 scale per row (the last dimension): s = max|x| / 127,
            q = round-half-away-from-zero(x / s) clamped to ±127, code = q + 127 (uint8);
            gathered, out = Σ_w (code_w − 127)·s_w / W (include/lowcomm/kernels/quantize.hpp).
  powersgd  rank 2, the paper's reference code (REFERENCE.md §3), error feedback on:
            M = g + e (n × rest), P = M Q, all-reduce P, Gram-Schmidt (eps 1e-8), Q = Mᵀ P̂,
            all-reduce Q, Q /= W (kept: warm start), out = P̂ Qᵀ, e = M − out.
            1-D tensors: dense all-reduce mean.
  dct_topk  DeMo's reference code path (demo.py's TransformDCT / CompressDCT): block length =
            largest divisor ≤ chunk 64 per dimension, orthonormal DCT-II basis matrices
            (C[k][n] = sqrt((k==0?1:2)/c)·cos(π(2n+1)k/(2c)), float64 rounded to float32, as
            lowcomm's dct_basis), encode = einsum("...ijkl, jb, ld -> ...ikbd") with Cᵀ, top-32
            per block by |coefficient| (torch.topk, sorted=False) + gather, all-gather (int64
            indices, fp32 values), scatter_reduce_("mean", include_self=False), decode = einsum
            ("...ijkl, kb, ld -> ...ibjd") with C. No error feedback (lowcomm's default);
            DeMo's own-estimate IDCT (momentum update) is the optimizer's, not timed here.
  sparseloco  tplr-ai/templar's compress.py math at SparseLoCo's settings: e ← 0.95·e + g (error
            feedback with decay), blocks of the largest divisors ≤ 64 per dimension (no DCT),
            top-64 per block by |e| (torch.topk), 12-bit index packing (pack_12bit_indices) and
            unpacking, the 4-bin codebook (_quantize_values: shift = mean, scale = 6σ / 4,
            per-bin means) with its codes packed 4 to a byte and unpacked, all-gather, each rank's
            values clipped to the median norm, scatter_reduce_("mean", include_self=False),
            e ← e − own decoded values.

Output, one line per codec and shape (GB/s = fp32 input bytes / best time, as lowcomm):
  torch <codec> <shape> gbps=<x> ms=<x>
after header lines `# torch ...` that include the copy bandwidth and sgemm rate measured here at
the same thread count (copy: 2·256 MiB / best of 5 tensor copies, as lowcomm counts it; sgemm:
768³ torch.mm, best of 5).

Run: /usr/bin/python3 scripts/bench_compressors_torch.py --threads 2 --ranks 2 --iterations 3
     /usr/bin/python3 scripts/bench_compressors_torch.py --check   # small-input self-checks
(Debian's python3-torch; it uses the system's libblas.so.3, OpenBLAS when installed.)

Where torch cannot mirror lowcomm exactly: the collectives are the local work only (no MPI, no
second process contending for memory bandwidth); random-k draws its coordinates with torch's RNG
(a uniformly random k-subset, sorted) instead of lowcomm's SplitMix64 Floyd sampling, so the
indices differ but not their number or distribution; nothing is packed into byte payloads (DeMo
sends tensors); lowcomm's checks for non-finite values and payload sizes have no counterpart;
torch allocates its temporaries afresh each call (lowcomm keeps scratch buffers). Variants:
--round torch (torch.round, half to even: differs on exact ties only, fewer passes) and
--randomk-sampler randperm (GRACE's randperm(n)[:k], O(n)).

The checks (--check) compare these codecs with tests/fixtures/compressors.h5, the independent
reference that lowcomm's fixtures_test holds its compressors to.
"""
import argparse
import math
import re
import time
import warnings

import torch

F32 = torch.float32
SHAPES = [(768, 768), (768, 3072), (3072, 768), (50304, 768), (768,)]  # GPT-2 small, as lowcomm
CODECS = ["none", "randomk", "topk", "quantize", "powersgd", "dct_topk", "sparseloco"]  # lowcomm's registry order


def shape_name(shape):
    return "x".join(str(d) for d in shape)


# ------------------------------------------------------------------------------------------------
# The collectives' local work. `grads` lists the ranks this process holds: one in the benchmark
# (the others are taken to hold the same data), all W in the checks.
# ------------------------------------------------------------------------------------------------

class Ranks:
    def __init__(self, world, local):
        assert world % local == 0
        self.world = world
        self.copies = world // local

    def expand(self, per_rank):
        return list(per_rank) * self.copies

    def all_reduce(self, per_rank, out=None):
        """SUM over the W ranks, in rank order (into `out` when given)."""
        full = self.expand(per_rank)
        out = full[0].clone() if out is None else out.copy_(full[0])
        for x in full[1:]:
            out.add_(x)
        return out

    def all_gather(self, per_rank):
        return self.expand(per_rank)


# ------------------------------------------------------------------------------------------------
# Codecs. step(t, grads, out) returns the aggregate (the mean over ranks as the codec reconstructs
# it); `out` is a buffer of the tensor's shape that the caller keeps from step to step, as
# lowcomm's bench keeps its aggregate, and most codecs write into it. Error-feedback residuals are
# updated in place (e ← e + g, then the transmitted part removed), as the reference codes do.
# ------------------------------------------------------------------------------------------------

class NoneCodec:
    def __init__(self, shape, ranks, args, local):
        self.ranks = ranks

    def step(self, t, grads, out):
        return self.ranks.all_reduce(grads, out).div_(self.ranks.world)


def count(ratio, n):
    return min(max(int(ratio * n), 1), max(n, 1))  # lowcomm: clamp(floor(ratio·n), 1, n)


class RandomK:
    def __init__(self, shape, ranks, args, local):
        self.shape, self.ranks, self.args = shape, ranks, args
        self.n = math.prod(shape)
        self.k = args.randomk_k if args.randomk_k else count(args.ratio, self.n)
        self.residual = [torch.zeros(self.n) for _ in range(local)]
        self.generator = torch.Generator()

    def sample(self, t):
        """k distinct coordinates in increasing order, the same on every rank (one shared draw)."""
        if self.args.randomk_sampler == "lowcomm":
            return torch.tensor(lowcomm_randomk(self.args.seed, t, 0, self.n, self.k), dtype=torch.int64)
        self.generator.manual_seed(self.args.seed * 1000003 + t)
        if self.args.randomk_sampler == "randperm" or 2 * self.k > self.n:  # GRACE's RandomK: O(n)
            return torch.randperm(self.n, generator=self.generator)[: self.k].sort().values
        # O(k log k): the distinct values of k + margin uniform draws are a uniformly random
        # subset given their number; dropping a uniformly random excess of them leaves a uniformly
        # random k-subset, still sorted. (torch.unique is 4x slower than sort + unique_consecutive.)
        draws = self.k + self.k // 50 + 64
        while True:
            drawn = torch.randint(self.n, (draws,), generator=self.generator)
            chosen = torch.unique_consecutive(drawn.sort().values)
            if chosen.numel() >= self.k:
                break
            draws *= 2
        excess = chosen.numel() - self.k
        if excess:
            keep = torch.ones(chosen.numel(), dtype=torch.bool)
            keep[torch.randperm(chosen.numel(), generator=self.generator)[:excess]] = False
            chosen = chosen[keep]
        return chosen

    def step(self, t, grads, out):
        idx = self.sample(t)
        corrected = [e.add_(g.reshape(-1)) for g, e in zip(grads, self.residual)]  # e ← g + e
        total = self.ranks.all_reduce([c.index_select(0, idx) for c in corrected])
        flat = out.view(-1).zero_()
        flat.index_copy_(0, idx, total.div_(self.ranks.world))
        for c in corrected:
            c.index_fill_(0, idx, 0.0)  # e ← (g + e) with the transmitted coordinates removed
        return out


class TopK:
    def __init__(self, shape, ranks, args, local):
        self.shape, self.ranks = shape, ranks
        self.n = math.prod(shape)
        self.k = args.topk_k if args.topk_k else count(args.ratio, self.n)
        self.residual = [torch.zeros(self.n) for _ in range(local)]

    def step(self, t, grads, out):
        corrected = [e.add_(g.reshape(-1)) for g, e in zip(grads, self.residual)]  # e ← g + e
        pairs = []
        for c in corrected:
            idx = torch.topk(c.abs(), self.k, sorted=False).indices
            pairs.append((idx, c.index_select(0, idx)))
        gathered = self.ranks.all_gather(pairs)
        flat = out.view(-1).zero_()
        flat.index_add_(0, torch.cat([i for i, _ in gathered]), torch.cat([v for _, v in gathered]))
        flat.div_(self.ranks.world)
        for (idx, _), c in zip(pairs, corrected):
            c.index_fill_(0, idx, 0.0)  # e ← (g + e) with the transmitted entries removed
        return out


def round_half_away(y, sign_of):
    """std::round (half away from zero), exactly: trunc, plus one step away from zero where the
    fraction is ≥ 0.5 (y − trunc(y) is exact; floor(|y| + 0.5) is not). Overwrites y."""
    t = torch.trunc(y)
    step = y.sub_(t).abs_().ge_(0.5).copysign_(sign_of)
    return t.add_(step)


class Quantize:
    def __init__(self, shape, ranks, args, local):
        self.shape, self.ranks, self.args = shape, ranks, args
        self.n = math.prod(shape)
        self.group = args.quantize_group or (shape[-1] if shape else 1)
        self.levels = 2 ** (args.bits - 1) - 1
        assert 2 <= args.bits <= 8

    def grouped(self, x):
        """[groups, group] view; a short last group is padded with zeros (they change no maximum)."""
        x = x.reshape(-1)
        pad = (-self.n) % self.group
        if pad:
            x = torch.cat([x, x.new_zeros(pad)])
        return x.view(-1, self.group)

    def encode(self, g):
        L = self.levels
        x = self.grouped(g)
        scale = x.abs().amax(dim=1, keepdim=True).div_(L)
        y = x / torch.where(scale > 0, scale, torch.ones_like(scale))  # a true division
        q = round_half_away(y, x) if self.args.round == "exact" else y.round_()
        codes = q.clamp_(-L, L).add_(L).to(torch.uint8)
        return codes, scale

    def step(self, t, grads, out):
        gathered = self.ranks.all_gather([self.encode(g) for g in grads])
        total = self.grouped(out) if self.n % self.group else out.view(-1, self.group)
        total.zero_()
        for codes, scale in gathered:  # (code − L)·s rounded, then added: lowcomm's order
            total.add_(codes.to(F32).sub_(self.levels).mul_(scale))
        total.div_(self.ranks.world)
        if self.n % self.group:
            out.view(-1).copy_(total.view(-1)[: self.n])
        return out


def orthogonalize(matrix, eps=1e-8):
    """The PowerSGD paper's Gram-Schmidt, in place."""
    _, m = matrix.shape
    for i in range(m):
        col = matrix[:, i:i + 1]
        col /= torch.sqrt(torch.sum(col ** 2)) + eps
        if i + 1 < m:
            rest = matrix[:, i + 1:]
            rest -= torch.sum(col * rest, dim=0) * col
    return matrix


class PowerSgd:
    def __init__(self, shape, ranks, args, local):
        self.shape, self.ranks = shape, ranks
        self.dense = len(shape) < 2
        if self.dense:
            return
        self.n = shape[0]
        self.m = math.prod(shape) // self.n
        self.r = min(self.n, self.m, args.rank)
        self.residual = [torch.zeros(self.n, self.m) for _ in range(local)]
        if args.powersgd_q0 is not None:
            self.q = args.powersgd_q0.clone()
        else:  # the shared N(0, 1) start (every rank draws it alike)
            self.q = torch.randn(self.m, self.r, generator=torch.Generator().manual_seed(args.seed))

    def step(self, t, grads, out):
        W = self.ranks.world
        if self.dense:
            return self.ranks.all_reduce(grads, out).div_(W)
        ms = [e.add_(g.view(self.n, self.m)) for g, e in zip(grads, self.residual)]  # M = g + e
        p = orthogonalize(self.ranks.all_reduce([torch.mm(m, self.q) for m in ms]))
        self.q = self.ranks.all_reduce([torch.mm(m.t(), p) for m in ms]).div_(W)
        flat = out.view(self.n, self.m)
        torch.mm(p, self.q.t(), out=flat)
        for m in ms:
            m.sub_(flat)  # e ← M − P̂Qᵀ
        return out


def block_length(n, chunk):
    """Largest divisor of n that is ≤ chunk (n itself when n ≤ chunk): DeMo's _get_smaller_split."""
    if n <= chunk:
        return n
    return max(d for d in range(1, chunk + 1) if n % d == 0)


def dct_basis(c):
    """C[k][n] = sqrt((k==0?1:2)/c)·cos(π(2n+1)k/(2c)), in float64, rounded to float32."""
    k = torch.arange(c, dtype=torch.float64).unsqueeze(1)
    n = torch.arange(c, dtype=torch.float64).unsqueeze(0)
    scale = torch.full((c, 1), math.sqrt(2.0 / c), dtype=torch.float64)
    scale[0, 0] = math.sqrt(1.0 / c)
    return (scale * torch.cos(math.pi * (2 * n + 1) * k / (2.0 * c))).to(F32)


class DctTopK:
    """DeMo's TransformDCT + CompressDCT. f = _dct(I) = Cᵀ, b = _idct(I) = C."""

    def __init__(self, shape, ranks, args, local):
        self.shape, self.ranks = shape, ranks
        if len(shape) >= 2:  # leading dimensions fold into rows (Psyche; DeMo has 1-D and 2-D only)
            self.rows, self.cols = math.prod(shape[:-1]), shape[-1]
            self.h, self.w = block_length(shape[-2], args.chunk), block_length(shape[-1], args.chunk)
            self.f1, self.f2 = dct_basis(self.h).t().contiguous(), dct_basis(self.w).t().contiguous()
            self.b1, self.b2 = dct_basis(self.h), dct_basis(self.w)
            self.block = self.h * self.w
        else:
            self.n = shape[0] if shape else 1
            self.c = block_length(self.n, args.chunk)
            self.f, self.b = dct_basis(self.c).t().contiguous(), dct_basis(self.c)
            self.block = self.c
        self.k = min(max(args.dct_k, 1), self.block)

    def encode(self, x):
        if len(self.shape) >= 2:
            x = x.reshape(self.rows // self.h, self.h, self.cols // self.w, self.w)  # (y h) (x w) -> y h x w
            q = torch.einsum("...ijkl, jb, ld -> ...ikbd", x, self.f1, self.f2)
            return q.reshape(q.shape[0], q.shape[1], self.block)  # y x h w -> y x (h w)
        return torch.einsum("...ij, jb -> ...ib", x.reshape(self.n // self.c, self.c), self.f)

    def decode(self, q):
        if len(self.shape) >= 2:
            q = q.view(q.shape[0], q.shape[1], self.h, self.w)
            x = torch.einsum("...ijkl, kb, ld -> ...ibjd", q, self.b1, self.b2)
            return x.reshape(self.shape)  # y h x w -> (y h) (x w)
        return torch.einsum("...ij, jb -> ...ib", q, self.b).reshape(self.shape)

    def step(self, t, grads, out):  # returns the inverse transform's own result; `out` unused
        pairs = []
        for g in grads:
            q = self.encode(g)
            idx = torch.topk(q.abs(), k=self.k, dim=-1, largest=True, sorted=False).indices
            pairs.append((idx, torch.gather(q, dim=-1, index=idx)))
            shape = q.shape
        gathered = self.ranks.all_gather(pairs)
        idx = torch.cat([i for i, _ in gathered], dim=-1)  # batch_decompress
        val = torch.cat([v for _, v in gathered], dim=-1)
        z = torch.zeros(shape)
        z.scatter_reduce_(dim=-1, index=idx, src=val, reduce="mean", include_self=False)
        return self.decode(z)


class SparseLoco:
    BINS, RANGE, DECAY = 4, 6.0, 0.95

    def __init__(self, shape, ranks, args, local):
        self.ranks = ranks
        n = math.prod(shape)
        position = torch.arange(n).reshape(shape)
        if len(shape) == 2:
            h, w = block_length(shape[0], args.chunk), block_length(shape[1], args.chunk)
            self.cut = lambda t: t.reshape(shape[0] // h, h, shape[1] // w, w).permute(0, 2, 1, 3).reshape(-1, h * w)
        else:
            w = block_length(n, args.chunk)
            self.cut = lambda t: t.reshape(-1, w)
        self.position = self.cut(position)  # each block-major element's flat position
        k = max(min(args.sparseloco_k, self.position.shape[1]), 2)
        self.k = k - k % 2
        self.residual = [torch.zeros(shape) for _ in range(local)]

    @staticmethod
    def pack12(idx):
        pairs = idx.to(torch.int32).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        out = torch.empty(pairs.shape[0] * 3, dtype=torch.uint8)
        out[0::3] = (a & 0xFF).to(torch.uint8)
        out[1::3] = (((a >> 8) & 0x0F) | ((b & 0x0F) << 4)).to(torch.uint8)
        out[2::3] = ((b >> 4) & 0xFF).to(torch.uint8)
        return out

    @staticmethod
    def unpack12(packed):
        b0, b1, b2 = (packed[i::3].to(torch.int64) for i in range(3))
        return torch.stack([b0 | ((b1 & 0x0F) << 8), (b1 >> 4) | (b2 << 4)], dim=1).reshape(-1)

    def quantise(self, val):
        shift = val.mean()
        centred = val - shift
        scale = self.RANGE * (centred.norm() / math.sqrt(centred.numel() - 1)) / self.BINS
        if scale == 0 or not torch.isfinite(scale):
            scale = torch.tensor(1.0)
        codes = (centred / scale + self.BINS // 2).round().clamp(0, self.BINS - 1).to(torch.uint8)
        sums = torch.zeros(self.BINS).scatter_add_(0, codes.long(), centred)
        counts = torch.zeros(self.BINS).scatter_add_(0, codes.long(), torch.ones_like(centred))
        lookup = torch.where(counts > 0, sums / counts, torch.zeros_like(sums))
        packed = torch.nn.functional.pad(codes, (0, -codes.numel() % 4)).reshape(-1, 4)  # 2 bits a code
        packed = packed[:, 0] | (packed[:, 1] << 2) | (packed[:, 2] << 4) | (packed[:, 3] << 6)
        return packed, shift, lookup

    def decode(self, payload):
        packed_idx, packed_codes, shift, lookup = payload
        within = self.unpack12(packed_idx).reshape(-1, self.k)
        codes = torch.stack([(packed_codes >> s) & 3 for s in (0, 2, 4, 6)], dim=1).reshape(-1)[: within.numel()]
        return torch.gather(self.position, 1, within).reshape(-1), lookup[codes.long()] + shift

    def step(self, t, grads, out):
        payloads = []
        for g, e in zip(grads, self.residual):
            e.mul_(self.DECAY).add_(g)
            blocks = self.cut(e)
            within = torch.topk(blocks.abs(), self.k, dim=-1, sorted=False).indices
            values = torch.gather(blocks, 1, within).reshape(-1)
            packed_codes, shift, lookup = self.quantise(values)
            payloads.append((self.pack12(within.reshape(-1)), packed_codes, shift, lookup))
        decoded = [self.decode(p) for p in self.ranks.all_gather(payloads)]
        norms = torch.stack([v.norm() for _, v in decoded])
        median = torch.median(norms)
        flat = out.view(-1).zero_()
        positions = torch.cat([p for p, _ in decoded])
        values = torch.cat([v * torch.clamp(median / (norms[i] + 1e-8), max=1) for i, (_, v) in enumerate(decoded)])
        flat.scatter_reduce_(0, positions, values, reduce="mean", include_self=False)
        for (position, value), e in zip(decoded, self.residual):  # this process's ranks decode their own first
            e.view(-1).index_add_(0, position, value, alpha=-1.0)
        return out


CODEC_CLASSES = {"none": NoneCodec, "randomk": RandomK, "topk": TopK, "quantize": Quantize,
                 "powersgd": PowerSgd, "dct_topk": DctTopK, "sparseloco": SparseLoco}


# ------------------------------------------------------------------------------------------------
# lowcomm's shared random draws (lib/compress/builtin/shared_random.hpp), for the checks only.
# ------------------------------------------------------------------------------------------------

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class SharedRandom:
    def __init__(self, seed, step, unit):
        self.state = mix64(mix64(seed) ^ mix64((step + 0x632BE59BD9B4E019) & M64) ^
                           mix64((unit + 0x8CB92BA72F3D8DD7) & M64))

    def next(self):
        self.state = (self.state + GAMMA) & M64
        return mix64(self.state)

    def below_or_equal(self, bound):
        if bound == M64:
            return self.next()
        rng = bound + 1
        limit = M64 - M64 % rng
        x = self.next()
        while x >= limit:
            x = self.next()
        return x % rng


def lowcomm_randomk(seed, step, unit, n, k):
    """lowcomm's Floyd sampling (randomk.cpp): O(k) Python, for small checks."""
    random = SharedRandom(seed, step, unit)
    picked = set()
    for j in range(n - k, n):
        t = random.below_or_equal(j)
        picked.add(j if t in picked else t)
    return sorted(picked)


def lowcomm_powersgd_q0(seed, unit, m, r):
    """lowcomm's shared start (powersgd.cpp): Box-Muller on SplitMix64 uniforms, m × r row-major."""
    random = SharedRandom(seed, 0, unit)
    uniform = lambda: ((random.next() >> 11) + 0.5) * 2.0 ** -53
    size = m * r
    q = [0.0] * size
    for i in range(0, size, 2):
        radius = math.sqrt(-2.0 * math.log(uniform()))
        angle = 2.0 * math.pi * uniform()
        q[i] = radius * math.cos(angle)
        if i + 1 < size:
            q[i + 1] = radius * math.sin(angle)
    return torch.tensor(q, dtype=torch.float64).to(F32).view(m, r)


# ------------------------------------------------------------------------------------------------
# Benchmark
# ------------------------------------------------------------------------------------------------

def best_of(work, repeats):
    best = math.inf
    for i in range(repeats):
        start = time.perf_counter()
        work(i)
        best = min(best, time.perf_counter() - start)
    return best


def machine_rates():
    n = 64 << 20  # 256 MiB of floats, as lowcomm's copy probe
    src, dst = torch.ones(n), torch.zeros(n)
    copy = 2.0 * n * 4 / best_of(lambda i: dst.copy_(src), 5) / 1e9
    del src, dst
    a, b, c = torch.full((768, 768), 0.5), torch.full((768, 768), 0.25), torch.zeros(768, 768)
    torch.mm(a, b, out=c)
    gemm = 2.0 * 768 ** 3 / best_of(lambda i: torch.mm(a, b, out=c), 5) / 1e9
    return copy, gemm


def default_args(**overrides):
    args = argparse.Namespace(seed=0, ratio=0.01, topk_k=None, randomk_k=None, randomk_sampler="unique",
                              bits=8, quantize_group=None, round="exact", rank=2, powersgd_q0=None,
                              dct_k=32, chunk=64, sparseloco_k=64)
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def bench(args):
    warnings.filterwarnings("ignore", message="scatter_reduce")  # "in beta": DeMo's call, as it is
    torch.set_num_threads(args.threads)
    blas = re.search(r"BLAS_INFO=[^,\s]*", torch.__config__.show())
    blas = blas.group(0) if blas else "BLAS_INFO=?"
    print(f"# torch {torch.__version__}: 1 process x {torch.get_num_threads()} threads standing in for "
          f"{args.ranks} ranks; {blas}; best of {args.iterations} after {args.warmup} warm-up")
    copy, gemm = machine_rates()
    print(f"# torch copy_gbps={copy:.2f} sgemm_gflops={gemm:.1f}")
    codecs = CODECS if args.codecs == "all" else args.codecs.split(",")
    shapes = SHAPES if args.shapes == "transformer" else [(48, 48), (48,)]
    for name in codecs:
        for shape in shapes:
            generator = torch.Generator().manual_seed(args.seed + 1)
            grad = torch.randn(shape, generator=generator)
            codec = CODEC_CLASSES[name](shape, Ranks(args.ranks, 1), args, 1)
            out = torch.zeros(shape)  # kept across steps, as lowcomm's bench keeps its aggregate
            best = math.inf
            for i in range(args.warmup + args.iterations):
                start = time.perf_counter()
                codec.step(i, [grad], out)
                seconds = time.perf_counter() - start
                if i >= args.warmup:
                    best = min(best, seconds)
            gbps = grad.numel() * 4 / best / 1e9
            print(f"torch {name} {shape_name(shape)} gbps={gbps:.4g} ms={best * 1e3:.4g}", flush=True)


# ------------------------------------------------------------------------------------------------
# Checks on small inputs: against lowcomm's definitions and, when present, tests/fixtures/*.h5
# (whose values lowcomm's fixtures_test compares its compressors with).
# ------------------------------------------------------------------------------------------------

def check(args):
    import os
    warnings.filterwarnings("ignore", message="scatter_reduce")
    torch.set_num_threads(1)
    failures = []
    step = lambda codec, t, grads: codec.step(t, grads, torch.zeros(grads[0].shape))

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    # The basis against REFERENCE.md's check value and orthonormality.
    c4 = dct_basis(4)
    expect(torch.allclose(c4[:, 0], torch.tensor([0.5, 0.6533, 0.5, 0.2706]), atol=1e-4), "dct basis c=4 column 0")
    for c in (1, 7, 48, 64):
        basis = dct_basis(c).double()
        expect(torch.allclose(basis @ basis.t(), torch.eye(c, dtype=torch.float64), atol=1e-6), f"dct basis c={c} orthonormal")
    expect([block_length(n, 64) for n in (2048, 50304, 1000, 96, 30, 50257, 32001)] == [64, 64, 50, 48, 30, 29, 3],
           "block lengths (REFERENCE §1 examples)")

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "compressors.h5")
    try:
        import h5py
        fixtures = h5py.File(path, "r")
    except (ImportError, OSError) as error:
        print(f"skip fixture checks: {error}")
        fixtures = None
    if fixtures is not None:
        t = lambda d: torch.from_numpy(d[()])
        close = lambda got, want, tol: float((got - want).abs().max()) <= tol * max(1.0, float(want.abs().max()))
        # dct/: encode, per-block top-k and the decode of the selection.
        g = fixtures["dct"]
        for i in range(int(g.attrs["cases"])):
            case = g[f"case{i}"]
            shape = [int(s) for s in case.attrs["shape"]]
            codec = DctTopK(shape, Ranks(1, 1), default_args(dct_k=int(case.attrs["k"]), chunk=int(case.attrs["chunk"])), 1)
            q = codec.encode(t(case["input"]).view(shape))
            blocks = q.reshape(-1, codec.block)
            expect(close(blocks.reshape(-1), t(case["coefficients"]), 2e-5), f"dct case{i} {shape} coefficients")
            got = torch.topk(blocks.abs(), codec.k, dim=-1, sorted=True).indices
            want_idx = t(case["topk_indices"]).view(-1, codec.k)
            expect(torch.equal(got, want_idx), f"dct case{i} top-k indices")
            z = torch.zeros_like(blocks).scatter_(-1, want_idx, t(case["topk_values"]).view(-1, codec.k))
            expect(close(codec.decode(z.view(q.shape)).reshape(-1), t(case["decoded"]), 2e-5), f"dct case{i} decoded")
        # dct_topk/: the compressor, W = 3 ranks, one step.
        g = fixtures["dct_topk"]
        W, shape = int(g.attrs["world"]), [int(s) for s in g.attrs["shape"]]
        grads = t(g["grads"]).view(W, *shape)
        codec = DctTopK(shape, Ranks(W, W), default_args(dct_k=int(g.attrs["k"]), chunk=int(g.attrs["chunk"])), W)
        out = step(codec, 0, list(grads))
        expect(close(out.reshape(-1), t(g["aggregate"]), 2e-5), f"dct_topk W={W} {shape} aggregate")
        # topk_ef/: W = 3, k = 4, 4 steps with error feedback.
        g = fixtures["topk_ef"]
        W, k, steps = int(g.attrs["world"]), int(g.attrs["k"]), int(g.attrs["steps"])
        for i in range(int(g.attrs["tensors"])):
            case = g[f"tensor{i}"]
            shape = [int(s) for s in case.attrs["shape"]]
            n = math.prod(shape)
            grads = t(case["grads"]).view(steps, W, n)
            codec = TopK([n], Ranks(W, W), default_args(topk_k=k), W)
            agg_ok = res_ok = True
            for s in range(steps):
                out = step(codec, s, list(grads[s]))
                agg_ok &= close(out, t(case["aggregate"]).view(steps, n)[s], 1e-6)
                res_ok &= close(torch.stack(codec.residual), t(case["residual"]).view(steps, W, n)[s], 1e-6)
            expect(agg_ok and res_ok, f"topk + EF W={W} {shape} {steps} steps: aggregates and residuals")
        # quantize/: 8-bit cases (codes, scales, dequantised values).
        g = fixtures["quantize"]
        for i in range(int(g.attrs["cases"])):
            case = g[f"case{i}"]
            if int(case.attrs["bits"]) < 2:
                continue
            shape = [int(s) for s in case.attrs["shape"]]
            codec = Quantize(shape, Ranks(1, 1), default_args(bits=int(case.attrs["bits"]),
                                                                 quantize_group=int(case.attrs["group"])), 1)
            x = t(case["input"])
            codes, scales = codec.encode(x)
            n = x.numel()
            ok = torch.equal(codes.view(-1)[:n].to(torch.int64), t(case["codes"]).to(torch.int64))
            ok &= torch.equal(scales.view(-1), t(case["scales"]))
            ok &= torch.equal(step(codec, 0, [x]).reshape(-1), t(case["dequantized"]))
            expect(ok, f"quantize case{i} {shape} {int(case.attrs['bits'])} bits, group {int(case.attrs['group'])}: bitwise")
        # powersgd/: rank 2, W = 2, 4 steps, error feedback and warm start, Q0 given.
        g = fixtures["powersgd"]
        W, steps = int(g.attrs["world"]), int(g.attrs["steps"])
        for i in range(int(g.attrs["tensors"])):
            case = g[f"tensor{i}"]
            shape = [int(s) for s in case.attrs["shape"]]
            n = math.prod(shape)
            grads = t(case["grads"]).view(steps, W, *shape)
            q0 = t(case["q0"]).view(int(case.attrs["m"]), int(case.attrs["r"])) if "q0" in case else None
            codec = PowerSgd(shape, Ranks(W, W), default_args(rank=int(g.attrs["rank"]), powersgd_q0=q0), W)
            ok = True
            for s in range(steps):
                out = step(codec, s, list(grads[s]))
                ok &= close(out.reshape(-1), t(case["aggregate"]).view(steps, n)[s], 1e-5)
                if not codec.dense:
                    ok &= close(torch.stack(codec.residual).reshape(-1), t(case["residual"]).view(steps, W * n)[s], 1e-5)
                    ok &= close(codec.q.reshape(-1), t(case["q"]).view(steps, -1)[s], 1e-5)
            expect(ok, f"powersgd W={W} {shape} {steps} steps: aggregates, residuals, Q")
    # randomk with lowcomm's own draw: k coordinates, all-reduce mean, error feedback.
    n, W = 50, 2
    grads = torch.randn(3, W, n, generator=torch.Generator().manual_seed(7))
    codec = RandomK([n], Ranks(W, W), default_args(randomk_k=5, randomk_sampler="lowcomm"), W)
    e = torch.zeros(W, n)
    ok = True
    for s in range(3):
        idx = torch.tensor(lowcomm_randomk(0, s, 0, n, 5))
        c = grads[s] + e
        want = torch.zeros(n)
        want[idx] = c[:, idx].sum(0) / W
        e = c.clone()
        e[:, idx] = 0
        ok &= torch.equal(step(codec, s, list(grads[s])), want) and torch.equal(torch.stack(codec.residual), e)
    expect(ok and len(set(lowcomm_randomk(0, 0, 0, n, 5))) == 5, "randomk + EF (lowcomm's draw), 3 steps")
    # The fast sampler: k distinct sorted coordinates, roughly uniform.
    codec = RandomK([1000], Ranks(1, 1), default_args(randomk_k=100), 1)
    hits = torch.zeros(1000)
    ok = True
    for s in range(200):
        idx = codec.sample(s)
        ok &= idx.numel() == 100 and bool((idx[1:] > idx[:-1]).all())
        hits[idx] += 1
    expect(ok and float(hits.min()) > 0 and abs(float(hits.mean()) - 20.0) < 1e-6, "randomk sampler: distinct, sorted, covers")
    # sparseloco: one step from a zero residual is templar's clipped aggregate (tests/fixtures/
    # sparseloco.h5, make_sparseloco_fixture.py, the reference lowcomm's sparseloco_test holds it to).
    try:
        import h5py
        with h5py.File(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                                    "sparseloco.h5"), "r") as f:
            for name in ("matrix", "odd_blocks", "vector", "one_rank"):
                g = f[name]
                shape, W = tuple(int(d) for d in g.attrs["shape"]), int(g.attrs["W"])
                codec = SparseLoco(shape, Ranks(W, W), default_args(chunk=int(g.attrs["chunk"]),
                                                                    sparseloco_k=int(g.attrs["topk"])), W)
                out = step(codec, 0, [torch.from_numpy(x).view(shape) for x in g["input"][()]])
                want = torch.from_numpy(g["aggregate"][()])
                expect(float((out.reshape(-1) - want).abs().max()) <= 1e-5 * float(want.abs().max()),
                       f"sparseloco {name} {shape} W={W}: templar's aggregate")
    except (ImportError, OSError) as error:
        print(f"skip sparseloco fixture check: {error}")
    # The replicated-rank stand-in equals W explicit identical ranks.
    for name in CODECS:
        shape = (24, 40)
        grad = torch.randn(shape, generator=torch.Generator().manual_seed(3))
        a = CODEC_CLASSES[name](shape, Ranks(2, 1), default_args(dct_k=4, chunk=8), 1)
        b = CODEC_CLASSES[name](shape, Ranks(2, 2), default_args(dct_k=4, chunk=8), 2)
        if name == "powersgd":
            b.q = a.q.clone()
        ok = all(torch.equal(step(a, s, [grad]), step(b, s, [grad, grad])) for s in range(3))
        expect(ok, f"{name}: one process standing in for 2 identical ranks == 2 explicit ranks")
    print("checks: " + ("all passed" if not failures else f"{len(failures)} FAILED"))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--ranks", type=int, default=2, help="W, the ranks this process stands in for")
    parser.add_argument("--iterations", type=int, default=3, help="timed runs per codec and shape (best kept)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs first")
    parser.add_argument("--codecs", default="all", help="comma-separated: " + ",".join(CODECS))
    parser.add_argument("--shapes", default="transformer", choices=["transformer", "test"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ratio", type=float, default=0.01, help="topk and randomk: fraction kept")
    parser.add_argument("--rank", type=int, default=2, help="powersgd rank")
    parser.add_argument("--dct-k", dest="dct_k", type=int, default=32, help="dct_topk: coefficients per block")
    parser.add_argument("--chunk", type=int, default=64, help="dct_topk and sparseloco: largest block side")
    parser.add_argument("--sparseloco-k", dest="sparseloco_k", type=int, default=64, help="sparseloco: entries per block")
    parser.add_argument("--bits", type=int, default=8, help="quantize: bits per value (2..8)")
    parser.add_argument("--round", default="exact", choices=["exact", "torch"],
                        help="quantize: exact half-away-from-zero as lowcomm, or torch.round (half to even)")
    parser.add_argument("--randomk-sampler", dest="randomk_sampler", default="unique",
                        choices=["unique", "randperm", "lowcomm"],
                        help="unique: O(k log k) draw; randperm: GRACE's randperm(n)[:k]; lowcomm: its exact draw (slow)")
    parser.add_argument("--check", action="store_true", help="run the small-input checks and exit")
    args = parser.parse_args()
    args.topk_k = args.randomk_k = args.quantize_group = args.powersgd_q0 = None
    if args.check:
        raise SystemExit(check(args))
    bench(args)


if __name__ == "__main__":
    main()
