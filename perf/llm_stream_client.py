#!/usr/bin/env python3
"""A closed-loop streaming client for the built-in LLM server's benchmarks
(perf/workloads/llm_batching.sh, perf/workloads/llm_decode.sh): `concurrency` threads each keep one
streamed /v1/completions request in flight for `duration` seconds, and the run's
output tokens/s, TTFT and time per output token (after the first) are printed as one
JSON object. Only the standard library, so the benchmarks need nothing installed.
  llm_stream_client.py PORT CONCURRENCY DURATION_S PROMPT_BYTES MAX_TOKENS
"""
import http.client
import json
import sys
import threading
import time


def one_request(port, prompt, max_tokens):
    body = json.dumps({"model": MODEL, "prompt": prompt, "max_tokens": max_tokens, "stream": True,
                       "ignore_eos": True, "temperature": 0})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    sent = time.monotonic()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        resp.read()
        conn.close()
        return None
    first = last = None
    tokens = 0
    for line in resp:
        if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
            continue
        choice = json.loads(line[6:]).get("choices") or [{}]
        if choice[0].get("text"):
            last = time.monotonic()
            first = first or last
            tokens += 1
    conn.close()
    return sent, first, last, tokens


def percentile(values, q):
    """The q-quantile (q in [0, 1]) as numpy's default and chaosbench's (common/values/percentile.h)."""
    if not values:
        return float("nan")
    values = sorted(values)
    h = (len(values) - 1) * q
    i = int(h)
    return values[i] if i + 1 >= len(values) else values[i] + (h - i) * (values[i + 1] - values[i])


def main():
    port, concurrency, duration = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    prompt_bytes, max_tokens = int(sys.argv[4]), int(sys.argv[5])
    results, failures, lock = [], [0], threading.Lock()
    start = time.monotonic()
    end = start + duration

    def worker(i):
        n = 0
        while time.monotonic() < end:
            prompt = (f"client {i} request {n}: " + "lorem ipsum " * prompt_bytes)[:prompt_bytes]
            r = one_request(port, prompt, max_tokens)
            n += 1
            with lock:
                if r is None or r[1] is None:
                    failures[0] += 1
                else:
                    results.append(r)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    # Tokens counted over the whole run, the requests still going at `end` included.
    tokens = sum(r[3] for r in results)
    ttft = [r[1] - r[0] for r in results]
    tpot = [(r[2] - r[1]) / (r[3] - 1) for r in results if r[3] > 1]
    print(json.dumps({"concurrency": concurrency, "requests": len(results), "failures": failures[0],
                      "tokens_per_s": tokens / elapsed, "ttft_p50": percentile(ttft, 0.5),
                      "ttft_p99": percentile(ttft, 0.99), "tpot_p50": percentile(tpot, 0.5),
                      "decode_tokens_per_s": 1.0 / percentile(tpot, 0.5) if tpot else float("nan")}))


MODEL = "chaosbench-tiny"
if __name__ == "__main__":
    main()
