#!/usr/bin/env python3
"""A plain PyTorch DDP training job, as a user would bring it, run by chaosbench as a
`command` workload (scenarios/torch-ddp-node-kill.json) and by perf/workloads/torch_ddp_compare.sh.

Nothing in it knows about namespaces: it joins the process group from the torchrun
environment (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) with the gloo backend, as any
DDP script does. What chaosbench adds is optional: when CHAOSBENCH_METRICS is set it
reports the training events of docs/metrics-protocol.md (train_start, step,
checkpoint_saved, checkpoint_restored), so the run gets train/* and resilience/*.

The model is an MLP (ReLU between layers) trained with SGD (momentum) on a synthetic
regression set: inputs standard normal, targets from a fixed random teacher network, as
chaosbench's own trainer. With --checkpoint-dir, rank 0 saves every --checkpoint-every
steps (atomically) and every rank resumes from the newest one when restarted.
"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--layers", default="256,1024,1024,10", help="widths, input first")
p.add_argument("--batch-per-rank", type=int, default=64)
p.add_argument("--steps", type=int, default=200)
p.add_argument("--lr", type=float, default=0.01)
p.add_argument("--momentum", type=float, default=0.9)
p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
p.add_argument("--checkpoint-dir", default="")
p.add_argument("--checkpoint-every", type=int, default=0)
p.add_argument("--seed", type=int, default=42)
p.add_argument("--timeout", type=float, default=20.0, help="collective timeout, seconds")
args = p.parse_args()

torch.set_num_threads(args.threads)
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
attempt = int(os.environ.get("CHAOSBENCH_ATTEMPT", "0"))

metrics = None
if os.environ.get("CHAOSBENCH_METRICS", "").startswith("unix:"):
    metrics = socket.socket(socket.AF_UNIX)
    metrics.connect(os.environ["CHAOSBENCH_METRICS"][len("unix:"):])


def send(record):
    if metrics is not None:
        record.update(rank=rank, time=time.time())
        metrics.sendall((json.dumps(record) + "\n").encode())


def event(name, **fields):
    send({"type": "event", "name": name, "fields": fields})


widths = [int(w) for w in args.layers.split(",")]
torch.manual_seed(args.seed)  # the same initial weights on every rank, as DDP expects
layers = []
for i in range(len(widths) - 1):
    layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
    if i + 2 < len(widths):
        layers.append(torch.nn.ReLU())
model = torch.nn.Sequential(*layers)
teacher = torch.nn.Sequential(torch.nn.Linear(widths[0], 64), torch.nn.Tanh(), torch.nn.Linear(64, widths[-1]))
for t in teacher.parameters():
    t.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)

start_step = 0
restored = None
ckpt_path = os.path.join(args.checkpoint_dir, "torch_ddp.pt") if args.checkpoint_dir else ""
if ckpt_path:
    os.makedirs(args.checkpoint_dir, exist_ok=True)
if ckpt_path and os.path.exists(ckpt_path):
    t0 = time.time()
    state = torch.load(ckpt_path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start_step = state["step"]
    restored = (time.time() - t0) * 1e3

dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                        timeout=__import__("datetime").timedelta(seconds=args.timeout))
ddp = DDP(model)
print(f"rank {rank}/{world} on {socket.gethostname()} attempt {attempt} from step {start_step}", flush=True)

if restored is not None:
    event("checkpoint_restored", step=start_step, ms=restored, file=ckpt_path)
event("train_start", step=start_step, world=world, generation=0, attempt=attempt,
      reason="restored" if start_step > 0 else "fresh")

flops_per_sample = sum((2.0 if i == 0 else 3.0) * 2 * widths[i] * widths[i + 1] for i in range(len(widths) - 1))
generator = torch.Generator().manual_seed(args.seed * 1000 + rank)
def sample(name, value):
    send({"type": "sample", "name": name, "value": value, "unit": "ms"})


for step in range(start_step + 1, args.steps + 1):
    t0 = time.perf_counter()
    cpu0 = time.process_time()  # every thread of this process: DDP's and gloo's too
    x = torch.randn(args.batch_per_rank, widths[0], generator=generator)
    y = teacher(x)
    t1 = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    t2 = time.perf_counter()
    loss.backward()  # DDP allreduces the gradient buckets while backward runs, and waits for them
    t3 = time.perf_counter()
    optimizer.step()
    t4 = time.perf_counter()
    step_ms = (t4 - t0) * 1e3
    sample("train/step_time", step_ms)
    sample("train/data_time", (t1 - t0) * 1e3)
    sample("train/forward_time", (t2 - t1) * 1e3)
    sample("train/backward_time", (t3 - t2) * 1e3)
    sample("train/optimizer_time", (t4 - t3) * 1e3)
    sample("train/cpu_time", (time.process_time() - cpu0) * 1e3)
    event("step", step=step, step_ms=step_ms, samples=args.batch_per_rank, loss=float(loss),
          flops=flops_per_sample * args.batch_per_rank, world=world, generation=0, attempt=attempt)
    if ckpt_path and args.checkpoint_every > 0 and step % args.checkpoint_every == 0 and rank == 0:
        t1 = time.time()
        tmp = ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, tmp)
        os.replace(tmp, ckpt_path)
        ms = (time.time() - t1) * 1e3
        event("checkpoint_saved", step=step, kind="full", bytes=os.path.getsize(ckpt_path), blocking_ms=ms, write_ms=ms)

dist.destroy_process_group()
