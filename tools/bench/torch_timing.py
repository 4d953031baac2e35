"""Timing harness shared by the PyTorch peer benchmarks (seed_cnn_torch.py,
resnet20_torch.py, char_lm_torch.py): command-line options, the best-configuration check,
torch set-up, the timed training loop and the one JSON line of results.

--device cpu (the default). Best configuration (docs/benchmarks.md):
the caller must set, before the process starts,
  OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=1
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295
(tools/bench/peer.sh does); setup_torch calls torch.set_num_threads(N).

--device cuda (tools/bench/gpu.sh): model and data on GPU 0; the CPU thread
and malloc settings do not apply and are neither checked nor set. The
arithmetic is full float32 by default, as drun's CUDA kernels do theirs
(cuDNN CUDNN_FMA_MATH, no TF32): TF32 is off for cuDNN and cuBLAS unless
--tf32. cudnn.benchmark is on (PyTorch's best for fixed shapes) unless
--cudnn-benchmark 0. The clock is read after torch.cuda.synchronize() at
both ends of the timed region; per-step times come from CUDA events, so the
loop never waits for the GPU inside the timed region.

--variants (default fp32) runs several configurations of the same model in
one process, each on a freshly built model, one JSON line each with its
"variant": fp32 (NCHW, PyTorch's default), channels_last (model and batches
in NHWC memory), amp_bf16 and amp_fp16 (torch.autocast to bfloat16 /
float16 around forward and loss, channels_last, fp32 weights; fp16 with a
GradScaler), compile (torch.compile(mode="reduce-overhead"), fp32: on CUDA
it replays the step's kernels as CUDA graphs). A variant that fails (e.g.
torch.compile without a working compiler) prints a line with its "error"
and the others still run.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

WANT_GLIBC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"
VARIANTS = ("fp32", "channels_last", "amp_bf16", "amp_fp16", "compile")


def parse_args(steps, warmup, batch, add_options=None):
    """--threads --steps --warmup --batch --device --tf32 --cudnn-benchmark,
    the model's own options, --seed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (--device cpu)")
    ap.add_argument("--steps", type=int, default=steps, help="timed steps")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--tf32", action="store_true",
                    help="--device cuda: allow TF32 in cuDNN and cuBLAS (default: full float32, as drun)")
    ap.add_argument("--cudnn-benchmark", type=int, choices=(0, 1), default=1,
                    help="--device cuda: torch.backends.cudnn.benchmark (default 1)")
    ap.add_argument("--variants", default="fp32",
                    help="comma-separated: " + ",".join(VARIANTS) + " (one JSON line each)")
    if add_options is not None:
        add_options(ap)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.variants = args.variants.split(",")
    for v in args.variants:
        if v not in VARIANTS:
            ap.error("unknown variant %r (valid: %s)" % (v, ", ".join(VARIANTS)))
    return args


def check_env(threads):
    want = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1",
            "GLIBC_TUNABLES": WANT_GLIBC}
    for k, v in want.items():
        got = os.environ.get(k)
        if got != v:
            print("warning: %s=%r, best configuration wants %r (set it before starting python)"
                  % (k, got, v), file=sys.stderr)


def setup_torch(threads, seed, device="cpu", tf32=False, cudnn_benchmark=True):
    """Imports torch, seeded, and returns the module. On the CPU: warns about
    a configuration other than the best and uses `threads` intra-op threads.
    On cuda: exits with an error unless a GPU is usable, then sets the TF32
    and cudnn.benchmark switches."""
    if device == "cpu":
        check_env(threads)
    import torch
    if device == "cpu":
        torch.set_num_threads(threads)
    else:
        if not torch.cuda.is_available():
            sys.exit("error: --device cuda: torch %s sees no usable GPU (torch.version.cuda=%s)"
                     % (torch.__version__, torch.version.cuda))
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = cudnn_benchmark
    torch.manual_seed(seed)
    return torch


def device_info(torch, device):
    """The JSON fields that say where the benchmark ran."""
    info = {"device": device}
    if device == "cuda":
        info.update(gpu_name=torch.cuda.get_device_name(0), torch=torch.__version__,
                    cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                    tf32=torch.backends.cudnn.allow_tf32,
                    cudnn_benchmark=torch.backends.cudnn.benchmark)
    return info


def time_training(torch, model, opt, loss_fn, x_all, y_all, batch_size, warmup, steps,
                  channels_last=False, autocast_dtype=None, scaler=None):
    """Runs `warmup` untimed then `steps` timed SGD steps on batches gathered
    from a fresh random permutation of (x_all, y_all), reshuffled when it runs
    out, all on the device of x_all; returns (seconds, final loss as a float,
    median step time in seconds). Batches are made channels_last when asked
    (the gather itself returns NCHW); forward and loss run under autocast to
    `autocast_dtype` when given, and backward through `scaler` when given."""
    n = x_all.shape[0]
    B = batch_size
    dev = x_all.device
    cuda = dev.type == "cuda"
    # The permutation lives with the data, so a GPU gather needs no copy.
    perm = torch.randperm(n, device=dev)
    pos = [0]

    def batch():
        if pos[0] + B > n:
            perm.copy_(torch.randperm(n, device=dev))
            pos[0] = 0
        idx = perm[pos[0]:pos[0] + B]
        pos[0] += B
        xb = x_all[idx]
        # Token ids (a sequence model's batch) have no channels to move.
        if channels_last and xb.dim() == 4:
            xb = xb.contiguous(memory_format=torch.channels_last)
        return xb, y_all[idx]

    def step(xb, yb):
        opt.zero_grad()
        # No autocast context at all for float32: nothing added to PyTorch's step.
        with (contextlib.nullcontext() if autocast_dtype is None
              else torch.autocast(dev.type, dtype=autocast_dtype)):
            loss = loss_fn(model(xb), yb)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return loss

    for _ in range(warmup):
        step(*batch())
    # On the GPU the host only queues work: the clock means something only
    # once the queue is drained, at both ends. Per-step marks are CUDA events
    # (recorded in the stream, read after the loop) so that measuring a step
    # does not make the host wait for it; on the CPU, the clock itself.
    if cuda:
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        torch.cuda.synchronize()
    else:
        marks = [0.0] * (steps + 1)
    # Batch gathering counts in the timed loop, as in a real epoch.
    t0 = time.perf_counter()
    loss = torch.zeros((), device=dev)
    for i in range(steps):
        if cuda:
            marks[i].record()
        else:
            marks[i] = time.perf_counter()
        loss = step(*batch())
    if cuda:
        marks[steps].record()
        torch.cuda.synchronize()
    else:
        marks[steps] = time.perf_counter()
    loss = float(loss.detach())
    dt = time.perf_counter() - t0
    if cuda:
        step_times = [marks[i].elapsed_time(marks[i + 1]) / 1000 for i in range(steps)]
    else:
        step_times = [marks[i + 1] - marks[i] for i in range(steps)]
    step_median = statistics.median(step_times) if step_times else 0.0
    return dt, loss, step_median


def print_result(threads, batch, steps, seconds, loss, model=None, step_median=None, **extra):
    """Prints the one JSON line: framework, model (if given), threads, batch,
    steps, images_per_sec, seconds, step_ms (mean), step_ms_median (if
    given), final_loss, then `extra` in order."""
    result = {"framework": "pytorch"}
    if model is not None:
        result["model"] = model
    result.update(threads=threads, batch=batch, steps=steps,
                  images_per_sec=round(steps * batch / seconds, 1) if seconds > 0 else 0,
                  seconds=round(seconds, 4),
                  step_ms=round(seconds * 1000 / steps, 4) if steps > 0 else 0)
    if step_median is not None:
        result["step_ms_median"] = round(step_median * 1000, 4)
    result["final_loss"] = round(loss, 4)
    result.update(extra)
    print(json.dumps(result, separators=(",", ":")))


def run_variants(torch, args, make_model, make_opt, loss_fn, x_all, y_all, **fields):
    """Times each of args.variants on a model from make_model() (on the
    device) and its optimizer from make_opt(model); prints one JSON line per
    variant with `fields` (e.g. model, params) and the device's."""
    info = device_info(torch, args.device)
    for variant in args.variants:
        torch.manual_seed(args.seed)
        model = make_model()
        model.train()
        channels_last = variant in ("channels_last", "amp_bf16", "amp_fp16")
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        opt = make_opt(model)
        dtype = {"amp_bf16": torch.bfloat16, "amp_fp16": torch.float16}.get(variant)
        try:
            scaler = torch.amp.GradScaler(args.device) if variant == "amp_fp16" else None
            if variant == "compile":
                model = torch.compile(model, mode="reduce-overhead")
            dt, loss, step_median = time_training(
                torch, model, opt, loss_fn, x_all, y_all, args.batch, args.warmup, args.steps,
                channels_last=channels_last, autocast_dtype=dtype, scaler=scaler)
        except Exception as e:  # a variant this machine cannot run: said, not fatal
            print(json.dumps({"framework": "pytorch", "variant": variant, **fields,
                              "error": "%s: %s" % (type(e).__name__, str(e)[:300])}))
            continue
        print_result(args.threads, args.batch, args.steps, dt, loss, step_median=step_median,
                     variant=variant, **fields, **info)
        sys.stdout.flush()
