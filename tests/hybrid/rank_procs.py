"""Processes of one multi-rank run, for the hybrid tests' drivers (run_ranks.py,
torch_reference.py): each rank in a session of its own with its output in a log file,
killed with the driver (PR_SET_PDEATHSIG) and by kill_all(); wait() until all have exited
0, one fails, or a deadline passes."""
import ctypes
import os
import signal
import subprocess
import time

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None)  # loaded here, not in the forked child


def _die_with_parent():
    _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


class RunFailed(RuntimeError):
    pass


def log_tail(path, lines=20):
    try:
        with open(path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
    except OSError:
        return "(no log)"


class RankProcs:
    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.procs, self.logs = [], []

    def start(self, argv, env):
        """Starts the next rank (numbered in start order)."""
        self.logs.append(os.path.join(self.log_dir, f"rank{len(self.procs)}.log"))
        with open(self.logs[-1], "wb") as log:
            self.procs.append(subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                               stderr=subprocess.STDOUT, start_new_session=True,
                                               preexec_fn=_die_with_parent))

    def wait(self, timeout):
        """Returns when every rank has exited 0; raises RunFailed, with the log's end, when one
        exits otherwise or `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in self.procs]
            failed = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                r = failed[0]
                raise RunFailed(f"rank {r} exited with {codes[r]}; its log ends:\n{log_tail(self.logs[r])}")
            if all(c == 0 for c in codes):
                return
            if time.monotonic() > deadline:
                running = [r for r, c in enumerate(codes) if c is None]
                raise RunFailed(f"timeout after {timeout:g} s, ranks {running} still running; rank "
                                f"{running[0]}'s log ends:\n{log_tail(self.logs[running[0]])}")
            time.sleep(0.05)

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # its session: the rank and whatever it started
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
