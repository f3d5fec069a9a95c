#!/usr/bin/env python3
"""The system ping as a chaosbench workload: pings PEER COUNT times, INTERVAL seconds
apart, and reports every reply's round trip as a net/rtt sample (ms, labels peer) on the
metrics protocol (docs/metrics-protocol.md: JSON lines on the Unix socket named by
CHAOSBENCH_METRICS). Exits with ping's status, so a peer that never answers fails the run.

    ping_rtt.py PEER [COUNT] [INTERVAL]
"""
import json
import os
import re
import socket
import subprocess
import sys
import time


def main():
    peer = sys.argv[1]
    count = sys.argv[2] if len(sys.argv) > 2 else "40"
    interval = sys.argv[3] if len(sys.argv) > 3 else "0.25"
    rank = int(os.environ.get("CHAOSBENCH_RANK", "0"))
    address = os.environ.get("CHAOSBENCH_METRICS", "")
    sink = None
    if address.startswith("unix:"):
        sink = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sink.connect(address[5:])
    # -n: numbers only; -O: report replies that never came; -U: time each reply when ping
    # reads it, as an application sees it, not when the kernel took it off the wire (a
    # delay applied on the receiving host's INPUT hook, as chaosbench's delay line does
    # across hosts, comes after that stamp and would be missed).
    ping = subprocess.Popen(["ping", "-n", "-O", "-U", "-c", count, "-i", interval, peer],
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    for line in ping.stdout:
        sys.stdout.write(line)
        m = re.search(r"time=([0-9.]+) ms", line)
        if m and sink:
            record = {"type": "sample", "rank": rank, "time": time.time(), "name": "net/rtt",
                      "value": float(m.group(1)), "unit": "ms", "labels": {"peer": peer}}
            sink.sendall((json.dumps(record) + "\n").encode())
    return ping.wait()


if __name__ == "__main__":
    sys.exit(main())
