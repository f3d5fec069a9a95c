#!/usr/bin/env python3
"""A stand-in training loop that reports through the chaosbench metrics protocol.

Shows what any program (PyTorch under torchrun included) needs to report: the
environment chaosbench sets, and one JSON line per sample or event on a Unix socket.
"""
import argparse, json, math, os, socket, time

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=40)
p.add_argument("--peer", default="")
args = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
print(f"rank {rank}/{world} local {os.environ['LOCAL_RANK']} node {os.environ['CHAOSBENCH_NODE']} "
      f"master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} peer {args.peer}", flush=True)

sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ["CHAOSBENCH_METRICS"].removeprefix("unix:"))

def send(record):
    record.update(rank=rank, time=time.time())
    sock.sendall((json.dumps(record) + "\n").encode())

for step in range(1, args.steps + 1):
    start = time.time()
    time.sleep(0.01)  # the "compute"
    loss = 2.0 * math.exp(-step / 10) + 0.05
    send({"type": "sample", "name": "train/loss", "value": loss, "unit": ""})
    send({"type": "sample", "name": "train/step_time", "value": (time.time() - start) * 1e3, "unit": "ms"})
    send({"type": "event", "name": "step", "fields": {"step": step}})
sock.close()
