#!/usr/bin/python3
"""PyTorch peer benchmark for drun's character language models
(tools/bench/char_lm_bench.lua): windows of 64 tokens from a vocabulary of
96, batch 32, Adam lr 1e-3, cross-entropy from logits averaged over every
step of every example; float32.

--model lstm, as models/lstm_lm.lua: Embedding(96, 64) - nn.LSTM(64, 256,
batch_first) with every step's output - Linear(256, 96) at every step.
PyTorch's LSTM has two biases (input and recurrent) where Keras' (drun's) has
one: the recurrent one is held at zero and frozen, which leaves the
arithmetic as it is and the trainable parameters as drun's, 359,520.

--model transformer, as models/transformer_lm.lua: token Embedding(96, 128)
plus a learned position embedding (64, 128); 2 pre-norm blocks, each
x + MHA(LN(x)) (4 heads of 32, causal) then x + Linear(GELU(Linear(LN(x))))
(128 -> 512 -> 128, exact erf GELU); a final LayerNorm and Linear(128, 96).
LayerNorm eps 1e-5. 429,664 parameters, as drun's. The attention, as
nn.MultiheadAttention lays it out (one Linear(128, 384) for q, k and v, one
Linear(128, 128) after), runs F.scaled_dot_product_attention(is_causal=True),
PyTorch 2's fused CPU kernel, called directly: nn.MultiheadAttention
(need_weights=False, is_causal) around the same kernel was slower, 19-24 ms
against 17 ms per attention's forward and backward at these sizes (1 thread,
PyTorch 2.15, a busy 2-core machine). PyTorch 1.13 (Debian's) has no such
kernel: there it is nn.MultiheadAttention with a causal mask and no attention
weights.

Data: a pool of random token windows (uniform over the 96, 65 tokens each:
x the first 64, y the last 64), built once; each step gathers a batch of
random windows (torch_timing.py; the gather is timed, as drun's input
pipeline is).

Run in PyTorch's best configuration on this machine (torch_timing.py;
tools/bench/cpu.sh sets it). Prints one JSON line per --variants entry
(fp32 is the one that applies: channels_last changes nothing here);
"images_per_sec" is sequences per second:
  {"framework":"pytorch","model":"lstm_lm","threads":N,"batch":32,"steps":S,
   "images_per_sec":...,"seconds":...,"step_ms":...,"step_ms_median":...,
   "final_loss":...,"variant":"fp32","params":359520,"device":"cpu"}
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_timing  # noqa: E402

VOCABULARY, STEPS = 96, 64


def lstm_lm(embedding=64, units=256):
    import torch
    import torch.nn as nn

    class LstmLm(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCABULARY, embedding)
            self.lstm = nn.LSTM(embedding, units, batch_first=True)
            with torch.no_grad():
                self.lstm.bias_hh_l0.zero_()
            self.lstm.bias_hh_l0.requires_grad_(False)
            self.out = nn.Linear(units, VOCABULARY)

        def forward(self, x):
            h, _ = self.lstm(self.embed(x))
            return self.out(h)

    return LstmLm()


def transformer_lm(width=128, heads=4, blocks=2):
    import torch
    import torch.nn as nn

    import torch.nn.functional as F

    class CausalAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.out = nn.Linear(width, width)

        def forward(self, x, mask):
            b, t, _ = x.shape
            # (3, batch, heads, steps, key_dim)
            q, k, v = self.qkv(x).view(b, t, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.out(a.transpose(1, 2).reshape(b, t, width))

    class MaskedAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(width, heads, batch_first=True)

        def forward(self, x, mask):
            return self.mha(x, x, x, attn_mask=mask, need_weights=False)[0]

    Attention = CausalAttention if hasattr(F, "scaled_dot_product_attention") else MaskedAttention

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(width, eps=1e-5)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(width, eps=1e-5)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x, mask):
            x = x + self.attn(self.ln1(x), mask)
            return x + self.mlp(self.ln2(x))

    class TransformerLm(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCABULARY, width)
            self.position = nn.Parameter(torch.randn(STEPS, width) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(blocks))
            self.ln = nn.LayerNorm(width, eps=1e-5)
            self.out = nn.Linear(width, VOCABULARY)
            # True above the diagonal: a step attends to itself and earlier ones.
            self.register_buffer("mask", torch.ones(STEPS, STEPS, dtype=torch.bool).triu(1),
                                 persistent=False)

        def forward(self, x):
            h = self.embed(x) + self.position
            for block in self.blocks:
                h = block(h, self.mask)
            return self.out(self.ln(h))

    return TransformerLm()


def main():
    def model_options(ap):
        ap.add_argument("--model", choices=("lstm", "transformer"), default="lstm")
        ap.add_argument("--pool", type=int, default=2560, help="random windows to draw batches from")
    args = torch_timing.parse_args(steps=40, warmup=4, batch=32, add_options=model_options)
    torch = torch_timing.setup_torch(args.threads, args.seed, args.device,
                                     args.tf32, bool(args.cudnn_benchmark))
    import torch.nn.functional as F

    pool = max(args.pool, args.batch)
    # Drawn on the CPU whatever the device, so that the pool is the same.
    windows = torch.randint(0, VOCABULARY, (pool, STEPS + 1))
    x_all = windows[:, :-1].contiguous().to(args.device)
    y_all = windows[:, 1:].contiguous().to(args.device)

    build = lstm_lm if args.model == "lstm" else transformer_lm

    def make_model():
        return build().to(args.device)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, VOCABULARY), y.reshape(-1))

    probe = make_model()
    params = sum(p.numel() for p in probe.parameters() if p.requires_grad)
    del probe
    torch_timing.run_variants(
        torch, args, make_model,
        lambda m: torch.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=1e-3),
        loss_fn, x_all, y_all, model="%s_lm" % args.model, params=params)


if __name__ == "__main__":
    main()
