#!/usr/bin/python3
"""A PyTorch reference of chaosbench's hybrid-parallel trainer, written for the test
(tests/e2e/hybrid_train_test.sh): tensor- and pipeline-parallel training of the trainer's MLP
on tp x pp processes, torch.distributed over gloo, float32 throughout.

  torch_reference.py --data DIR [--tp 2] [--pp 2] [--microbatches M] [--lr 0.05]
                     [--momentum 0.9] [--steps N] [--timeout 120]

DIR is what `chaosbench worker train-export` writes: params.f32 (the full model's initial
parameters: per layer weight [out x in], then bias [out]), x.f32 and y.f32 (the global
batches of steps 0..N-1) and meta.json. Prints {"step": loss, ...} for steps 1..N as one
JSON object: the loss of step s is the mean squared error over the global batch of the
forward pass of step s, before its update (as the trainer's `step` events report it).

How the model is cut, as bench/train/hybrid/stage_plan.h and parallel_layout.h say:
- rank = tp_rank + tp x stage (one replica: dp 1);
- layers split over stages contiguously, the first (layers % pp) stages taking one more;
- within a stage, layers pair from the stage's first layer as (column-parallel,
  row-parallel), Megatron-LM's MLP block: the column layer's output rows (of W and b)
  split over tp, rank t taking rows [t*out/tp, (t+1)*out/tp), ReLU on its slice; the row
  layer's input columns of W split the same way, the partial outputs summed by an
  allreduce in the TP group, then the whole bias added, then ReLU unless it is the
  model's last layer. A stage's trailing odd layer runs whole on every TP rank.
- The TP communication is Megatron's f and g operators (torch.autograd.Function): f is
  the identity forward and an allreduce of the input gradient backward (before a column
  layer), g an allreduce forward and the identity backward (after a row layer).
- Pipeline: GPipe; every microbatch's forward (activations dist.send to the same TP rank
  of the next stage), then every backward (the input gradients dist.send back). The
  gradients accumulate over microbatches; the loss gradient carries 1 / (batch x out),
  so they are the global batch's. Then SGD with momentum, PyTorch's (= the trainer's):
  m = momentum m + g; p -= lr m.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile

from rank_procs import RankProcs, RunFailed


def split_layers(layers, stages):
    """bench/train/hybrid/parallel_layout.h split_layers: contiguous [first, last) per stage."""
    base, extra = divmod(layers, stages)
    out, first = [], 0
    for s in range(stages):
        last = first + base + (1 if s < extra else 0)
        out.append((first, last))
        first = last
    return out


def stage_splits(first, last):
    """Per layer of the stage: "column", "row" (pairs from the stage's first layer), or
    "replicated" (a trailing odd layer)."""
    n = last - first
    return ["column" if i % 2 == 0 else "row" for i in range(n - n % 2)] + ["replicated"] * (n % 2)


def worker(rank, args, tmp):
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    torch.set_num_threads(1)
    tp, pp = args.tp, args.pp
    world = tp * pp
    tp_rank, stage = rank % tp, rank // tp
    dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=args.timeout))
    tp_groups = [dist.new_group(list(range(s * tp, (s + 1) * tp))) for s in range(pp)]  # every rank makes each
    group = tp_groups[stage]

    class CopyToTP(torch.autograd.Function):  # Megatron's f
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            grad = grad.contiguous().clone()
            dist.all_reduce(grad, group=group)
            return grad

    class ReduceFromTP(torch.autograd.Function):  # Megatron's g
        @staticmethod
        def forward(ctx, x):
            x = x.contiguous().clone()
            dist.all_reduce(x, group=group)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    with open(os.path.join(args.data, "meta.json")) as f:
        meta = json.load(f)
    widths, batch = meta["layers"], meta["batch"]
    steps = args.steps or meta["steps"]
    if steps > meta["steps"]:
        raise SystemExit(f"{args.data} holds {meta['steps']} steps' batches, not {steps}")
    flat = torch.from_numpy(np.fromfile(os.path.join(args.data, "params.f32"), dtype="<f4"))
    xs = torch.from_numpy(np.fromfile(os.path.join(args.data, "x.f32"), dtype="<f4")).view(-1, widths[0])
    ys = torch.from_numpy(np.fromfile(os.path.join(args.data, "y.f32"), dtype="<f4")).view(-1, widths[-1])
    layers = len(widths) - 1
    first, last = split_layers(layers, pp)[stage]
    splits = stage_splits(first, last)

    # This rank's shards of its stage's layers.
    offset = sum(widths[l] * widths[l + 1] + widths[l + 1] for l in range(first))
    shards = []  # (kind, weight, bias, relu)
    for l, kind in zip(range(first, last), splits):
        n_in, n_out = widths[l], widths[l + 1]
        w = flat[offset:offset + n_out * n_in].view(n_out, n_in)
        b = flat[offset + n_out * n_in:offset + n_out * n_in + n_out]
        offset += n_out * n_in + n_out
        if kind == "column":
            rows = slice(tp_rank * n_out // tp, (tp_rank + 1) * n_out // tp)
            w, b = w[rows], b[rows]
        elif kind == "row":
            w = w[:, tp_rank * n_in // tp:(tp_rank + 1) * n_in // tp]
        shards.append((kind, torch.nn.Parameter(w.clone().contiguous()), torch.nn.Parameter(b.clone().contiguous()),
                       l + 1 < layers))
    params = [p for _, w, b, _ in shards for p in (w, b)]
    opt = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum)

    def forward(h):
        for kind, w, b, relu in shards:
            if kind == "column":
                h = torch.relu(F.linear(CopyToTP.apply(h), w, b))  # a row layer follows: never the last
            elif kind == "row":
                h = ReduceFromTP.apply(F.linear(h, w)) + b
                h = torch.relu(h) if relu else h
            else:
                h = F.linear(h, w, b)
                h = torch.relu(h) if relu else h
        return h

    m = args.microbatches
    mb = batch // m
    prev_rank, next_rank = rank - tp, rank + tp  # the same TP rank of the neighbouring stages
    is_first, is_last = stage == 0, stage == pp - 1
    scale = 1.0 / (batch * widths[-1])
    losses = []
    for step in range(steps):
        saved = []  # per microbatch: (input, output or loss)
        sq = 0.0
        for k in range(m):
            lo = step * batch + k * mb
            if is_first:
                inp = xs[lo:lo + mb]
            else:
                inp = torch.empty(mb, widths[first], dtype=torch.float32)
                dist.recv(inp, src=prev_rank)
                inp.requires_grad_(True)
            out = forward(inp)
            if is_last:
                diff = out - ys[lo:lo + mb]
                sq += float((diff.detach().double() ** 2).sum())
                saved.append((inp, (diff * diff).sum() * scale))
            else:
                dist.send(out.detach().contiguous(), dst=next_rank)
                saved.append((inp, out))
        for inp, out in saved:
            if is_last:
                out.backward()
            else:
                grad = torch.empty_like(out)
                dist.recv(grad, src=next_rank)
                out.backward(grad)
            if not is_first:
                dist.send(inp.grad.contiguous(), dst=prev_rank)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(sq * scale)
    if is_last and tp_rank == 0:
        with open(os.path.join(tmp, "losses.json"), "w") as f:
            json.dump({str(s + 1): v for s, v in enumerate(losses)}, f)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a `chaosbench worker train-export` directory")
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--pp", type=int, default=2)
    ap.add_argument("--microbatches", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--steps", type=int, default=0, help="0: every step the data holds")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole run")
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # a worker process
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rank is not None:
        worker(args.rank, args, args.tmp)
        return 0

    with open(os.path.join(args.data, "meta.json")) as f:
        meta = json.load(f)
    widths = meta["layers"]
    for first, last in split_layers(len(widths) - 1, args.pp):
        if first == last:
            ap.error(f"{args.pp} stages for {len(widths) - 1} layers")
        for l, kind in zip(range(first, last), stage_splits(first, last)):
            width = widths[l + 1] if kind == "column" else widths[l] if kind == "row" else 0
            if width % args.tp:
                ap.error(f"tp {args.tp} does not divide width {width} of layer {l}")
    if meta["batch"] % args.microbatches:
        ap.error(f"{args.microbatches} microbatches do not divide the batch {meta['batch']}")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="cb-torchref-")
    procs = RankProcs(tmp)
    try:
        env = dict(os.environ, OMP_NUM_THREADS="1")
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
        for rank in range(args.tp * args.pp):
            procs.start([sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--rank", str(rank), "--tmp", tmp],
                        env)
        procs.wait(args.timeout)
        with open(os.path.join(tmp, "losses.json")) as f:
            print(f.read())
        return 0
    except RunFailed as e:
        print(f"torch_reference: {e}", file=sys.stderr)
        return 1
    finally:
        procs.kill_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
