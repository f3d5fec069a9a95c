#!/usr/bin/env python3
"""Runs N ranks of `chaosbench worker train` on 127.0.0.1 without the harness and returns
the loss of every step.

  run_ranks.py --binary build/bin/chaosbench --world 4 [--timeout 120] -- --layers 32,64,8 ...

Everything after `--` goes to each rank's command line; the driver adds --store (a fresh
file store), --prefix and --host, and sets CHAOSBENCH_RANK, CHAOSBENCH_WORLD_SIZE and
CHAOSBENCH_METRICS (a Unix socket it listens on: one thread per connection, reading the
newline-delimited JSON records of docs/metrics-protocol.md). The loss of step s is the
`loss` field of the `step` events; every rank must report every step from 1 to --steps
and all ranks the same loss (RanksDisagree otherwise). Prints {"step": loss, ...} as one
JSON object.

All in one temporary directory (store, socket, each rank's log), removed on every way
out; the ranks are killed when they fail, when the timeout passes and when the driver
ends, and die with it if it is killed (PR_SET_PDEATHSIG).
"""
import argparse
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading

from rank_procs import RankProcs, RunFailed


class RanksDisagree(RunFailed):
    pass


class _MetricsListener:
    """Accepts connections on a Unix socket; keeps every `step` event as (rank, fields)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.lock = threading.Lock()
        self.steps = []  # (rank, fields)
        self.loss_labels = {}  # rank -> the labels of its last train/loss sample
        self.bad_lines = []
        self.threads = []
        self.closing = False
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            t = threading.Thread(target=self._read, args=(conn,), daemon=True)
            with self.lock:
                if self.closing:
                    conn.close()
                    return
                self.threads.append(t)
            t.start()

    def _read(self, conn):
        buf = b""
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._record(line)
        if buf.strip():
            self._record(buf)

    def _record(self, line):
        if not line.strip():
            return
        try:
            rec = json.loads(line)
        except ValueError:
            with self.lock:
                self.bad_lines.append(line[:200])
            return
        if rec.get("type") == "event" and rec.get("name") == "step":
            with self.lock:
                self.steps.append((rec.get("rank"), rec.get("fields", {})))
        elif rec.get("type") == "sample" and rec.get("name") == "train/loss":
            with self.lock:
                self.loss_labels[rec.get("rank")] = rec.get("labels", {})

    def close(self):
        with self.lock:
            self.closing = True
            threads = list(self.threads)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for t in threads:
            t.join(timeout=5)


_COORDS = ("tp_rank", "pp_stage", "dp_rank")


def _check_layout(listener, world, layout):
    """Each rank must report the coordinates Megatron's order gives it,
    rank = tp_rank + tp x (dp_rank + dp x pp_stage), in its step events' fields or its
    train/loss samples' labels: proof that the trainer ran that layout."""
    tp, pp, dp = layout
    if tp * pp * dp != world:
        raise RunFailed(f"layout {layout} is not {world} ranks")
    reported = {}
    for rank, fields in listener.steps:
        reported.setdefault(rank, {}).update({k: fields[k] for k in _COORDS if k in fields})
    for rank, labels in listener.loss_labels.items():
        reported.setdefault(rank, {}).update({k: labels[k] for k in _COORDS if k in labels})
    for rank in range(world):
        want = {"tp_rank": rank % tp, "pp_stage": rank // (tp * dp), "dp_rank": rank // tp % dp}
        got = {k: int(v) for k, v in reported.get(rank, {}).items()}
        if got != want:
            raise RunFailed(f"rank {rank} reported coordinates {got or 'none'}, expected {want} for tp {tp}, "
                            f"pp {pp}, dp {dp} (step fields or train/loss labels {', '.join(_COORDS)})")


def run(binary, world, flags, steps, timeout=120.0, agree_rel=0.0, layout=None):
    """Starts `world` ranks with `flags`, waits for them; returns {step: loss} for steps
    1..steps. Raises RunFailed (a rank failed, the timeout passed, a step is missing, a
    rank's coordinates are not those of `layout` (tp, pp, dp) when given) or RanksDisagree
    (two ranks' losses of one step differ by more than agree_rel relative)."""
    tmp = tempfile.mkdtemp(prefix="cb-hybrid-")
    procs = RankProcs(tmp)
    listener = None
    try:
        store = os.path.join(tmp, "store")
        os.mkdir(store)
        sock_path = os.path.join(tmp, "m.sock")
        listener = _MetricsListener(sock_path)
        for rank in range(world):
            env = dict(os.environ, CHAOSBENCH_RANK=str(rank), CHAOSBENCH_WORLD_SIZE=str(world),
                       CHAOSBENCH_METRICS="unix:" + sock_path, OPENBLAS_NUM_THREADS="1")
            for name in ("CHAOSBENCH_ATTEMPT", "CHAOSBENCH_RESTART"):
                env.pop(name, None)
            procs.start([binary, "worker", "train", *flags, "--store", "file:" + store, "--prefix", "hybrid",
                         "--host", "127.0.0.1"], env)
        procs.wait(timeout)
        listener.close()
        if listener.bad_lines:
            raise RunFailed(f"malformed metrics lines: {listener.bad_lines[:3]}")
        if layout:
            _check_layout(listener, world, layout)
        per_step = {}
        for rank, fields in listener.steps:
            if "step" not in fields or "loss" not in fields:
                continue
            per_step.setdefault(int(fields["step"]), {})[rank] = float(fields["loss"])
        out = {}
        for s in range(1, steps + 1):
            got = per_step.get(s, {})
            missing = sorted(set(range(world)) - set(got))
            if missing:
                raise RunFailed(f"step {s}: no step event with a loss from ranks {missing}")
            values = [got[r] for r in range(world)]
            ref = values[0]
            spread = max(abs(v - ref) for v in values)
            if spread > agree_rel * abs(ref):
                raise RanksDisagree(f"step {s}: the ranks' losses differ: " +
                                    ", ".join(f"rank {r} {got[r]!r}" for r in range(world)))
            out[s] = ref
        return out
    finally:
        procs.kill_all()
        if listener is not None:
            listener.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" in argv:
        i = argv.index("--")
        own, flags = argv[:i], argv[i + 1:]
    else:
        own, flags = argv, []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the chaosbench binary")
    ap.add_argument("--world", type=int, required=True, help="ranks to start")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole run")
    ap.add_argument("--expect-layout", metavar="TP,PP,DP",
                    help="fail unless each rank reports these coordinates (tp_rank, pp_stage, dp_rank)")
    ap.add_argument("--agree-rel", type=float, default=0.0,
                    help="largest relative difference allowed between ranks' losses of a step (default 0: equal)")
    args = ap.parse_args(own)
    steps_at = [i for i, f in enumerate(flags) if f == "--steps"]
    if not steps_at or steps_at[-1] + 1 >= len(flags):
        ap.error("the rank flags after -- must include --steps N")
    steps = int(flags[steps_at[-1] + 1])
    # SIGTERM (ctest's, a user's) ends the driver through the finally that kills the ranks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        layout = tuple(int(v) for v in args.expect_layout.split(",")) if args.expect_layout else None
        losses = run(args.binary, args.world, flags, steps, args.timeout, args.agree_rel, layout)
    except RunFailed as e:
        print(f"run_ranks: {e}", file=sys.stderr)
        return 1
    print(json.dumps({str(k): v for k, v in losses.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
