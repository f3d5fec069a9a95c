#!/usr/bin/env python3
"""A trainer that misbehaves on its first attempt, for the runner's restart recovery tests.

--fail-rank R: on attempt 0, rank R exits with code 1 after step 5.
--hang-rank R: on attempt 0, rank R stops reporting after step 3 (sleeps).
Attempt 1 and later run all steps. Reports step events and train_start as the built-in
trainer does (docs/metrics-protocol.md).
"""
import argparse, json, os, socket, sys, time

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--fail-rank", type=int, default=-1)
p.add_argument("--hang-rank", type=int, default=-1)
args = p.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
attempt = int(os.environ.get("CHAOSBENCH_ATTEMPT", "0"))
sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ["CHAOSBENCH_METRICS"].removeprefix("unix:"))

def send(record):
    record.update(rank=rank, time=time.time())
    sock.sendall((json.dumps(record) + "\n").encode())

send({"type": "event", "name": "train_start",
      "fields": {"step": 0, "world": world, "generation": 0, "attempt": attempt,
                 "reason": "fresh" if attempt == 0 else "restored"}})
for step in range(1, args.steps + 1):
    time.sleep(0.02)
    send({"type": "event", "name": "step",
          "fields": {"step": step, "step_ms": 20.0, "samples": 8, "world": world, "generation": 0, "attempt": attempt}})
    if attempt == 0 and rank == args.fail_rank and step == 5:
        print(f"rank {rank}: failing on purpose", file=sys.stderr, flush=True)
        sys.exit(1)
    if attempt == 0 and rank == args.hang_rank and step == 3:
        time.sleep(600)
sock.close()
