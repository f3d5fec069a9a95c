#!/usr/bin/env python3
"""TTFT as the plainest client sees it: a streamed completion written on a raw socket,
timed from the send to the first `data: {` event. openai_sdk_test.sh runs it when the SDK's
TTFT disagrees with the engine, to tell a loaded machine (this disagrees too) from a fault
in the SDK's path (this agrees).

  raw_ttft.py --host 127.0.0.1 --port PORT --model NAME [--requests 6]

Sends --requests one after another, then twice --requests at once (max_tokens 1) and
prints the 90th percentile and the median TTFT in ms, then every TTFT (sorted).
"""
import argparse
import json
import socket
import statistics
import threading
import time


def ttft_ms(host, port, request):
    with socket.create_connection((host, port), timeout=10) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sent = time.perf_counter()
        s.sendall(request)
        seen = b""
        while b"data: {" not in seen:
            more = s.recv(65536)
            if not more:
                raise RuntimeError(f"closed before the first event: {seen[:200]!r}")
            seen += more
        first = time.perf_counter()
        while s.recv(65536):  # to the end (Connection: close)
            pass
    return (first - sent) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--requests", type=int, default=6)
    args = ap.parse_args()
    body = json.dumps({"model": args.model, "prompt": "raw", "max_tokens": 1, "stream": True}).encode()
    request = (f"POST /v1/completions HTTP/1.1\r\nHost: {args.host}:{args.port}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    times = [ttft_ms(args.host, args.port, request) for _ in range(args.requests)]
    for _ in range(2):
        out = []
        threads = [threading.Thread(target=lambda: out.append(ttft_ms(args.host, args.port, request)))
                   for _ in range(args.requests)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        times += out
    times.sort()
    p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
    print(f"{p90:.2f} {statistics.median(times):.2f}", " ".join(f"{t:.1f}" for t in times))


if __name__ == "__main__":
    main()
