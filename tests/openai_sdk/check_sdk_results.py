#!/usr/bin/env python3
"""Judges stream_client.mjs's JSON lines against what `chaosbench worker llm-serve` was told
to do (its synthetic engine is the ground truth) and against the server's own counters.

  check_sdk_results.py RESULTS --first-token-ms 150 --cadence-ms 20 --tokens 24
      --max-tokens 64 --short-max-tokens 8 [--metrics-url http://127.0.0.1:PORT/metrics]

Checks:
  TTFT   over the requests alone on the wire (one after another, and the short ones), the
         SDK's median time to the first text chunk agrees with the engine's first-token
         delay within 2 ms or 5 % (whichever is wider); requests sent at once each get
         their first token before two first-token delays (answered side by side; their
         extra time is the SDK's own event loop, printed); the median inter-token gap
         agrees with the cadence within 2 ms or 5 %.
  tokens chunks carrying text == usage.completion_tokens == the tokens the engine was told
         to make (min(tokens, max_tokens)); finish_reason "stop" or "length" to match.
  text   the engine's deterministic words, in order.
  models client.models.list() (GET /v1/models) lists the one served model.
  errors unknown model: the SDK raises NotFoundError (an APIError), status 404, code
         model_not_found; oversize prompt: BadRequestError, status 400, code
         context_length_exceeded; both carry the OpenAI error object (message, type,
         param, code).
  server /metrics' vllm:generation_tokens_total and vllm:request_success_total equal what
         the SDK received; where it has vllm:time_to_first_token_seconds, that histogram
         (read before and after the streamed requests) counted each of them, and its mean
         agrees with the engine's first-token delay within 2 ms or 5 %.
Prints the figures, then "ok" or every failure; exits 1 on any failure, 3 when only the
timing judgments (TTFT, gap) failed.
"""
import argparse
import json
import re
import statistics
import sys
import urllib.request

# The synthetic engine's words (bench/llm/synthetic_engine.cc), token i being WORDS[i % 16].
WORDS = [" " + w for w in "the quick brown fox jumps over a lazy dog and runs far into green hills today".split()]


def expected_text(n):
    return "".join(WORDS[i % len(WORDS)] for i in range(n))


def agrees(measured, truth, abs_ms=2.0, rel=0.05):
    return abs(measured - truth) <= max(abs_ms, rel * truth)


def snapshots(lines):
    return {m["phase"]: m for m in lines if m.get("kind") == "metrics"}


def check_server_ttft(snaps, timed, truth, fail, timing):
    """The server's own TTFT (vllm:time_to_first_token_seconds, a histogram read before and
    after the streamed requests): it counted every request the SDK timed, and its mean
    agrees with the engine's first-token delay within 2 ms or 5 %."""
    def series(phase, suffix):
        for l in snaps.get(phase, {}).get("lines", []):
            m = re.match(rf"vllm:time_to_first_token_seconds_{suffix}(?:{{[^}}]*}})? (\S+)$", l)
            if m:
                return float(m.group(1))
        return None

    before = (series("before", "sum"), series("before", "count"))
    after = (series("after", "sum"), series("after", "count"))
    if None in before + after:
        print("server /metrics has no vllm:time_to_first_token_seconds: no server-side TTFT to compare with")
        return
    n = after[1] - before[1]
    server_mean = (after[0] - before[0]) / n * 1000 if n else float("nan")
    print(f"server /metrics TTFT mean over {n:g} requests: {server_mean:.2f} ms vs the engine's {truth:g} ms")
    if n != timed:
        fail(f"the server's TTFT histogram counted {n:g} requests, the SDK timed {timed}")
    elif not agrees(server_mean, truth):
        fail(f"the server's TTFT mean {server_mean:.2f} ms disagrees with the engine's {truth:g} ms "
             "by more than 2 ms or 5 %", timing)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--first-token-ms", type=float, required=True)
    ap.add_argument("--cadence-ms", type=float, required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--max-tokens", type=int, required=True)
    ap.add_argument("--short-max-tokens", type=int, required=True)
    ap.add_argument("--metrics-url")
    args = ap.parse_args()

    failures = []
    timing = []  # the TTFT and gap judgments: a loaded machine misses these alone

    def fail(msg, kind=failures):
        kind.append(msg)

    tokens_received = 0  # what the SDK got, to compare with the server's counters
    answered = 0
    lines = []
    with open(args.results, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError as e:
                fail(f"line {n} is not JSON ({e}): {raw[:200]}")
    meta = next((l for l in lines if l.get("kind") == "meta"), {})
    streams = [l for l in lines if l.get("kind") == "stream"]
    wholes = [l for l in lines if l.get("kind") == "whole"]
    refused = [l for l in lines if l.get("kind") == "refused"]
    models = next((l for l in lines if l.get("kind") == "models"), {})
    if "error" in models or not models.get("ids"):
        fail(f"GET /v1/models through the SDK: {models.get('error', 'no models')}")
    elif len(models["ids"]) != 1:
        fail(f"GET /v1/models lists {models['ids']}, expected the one served model")
    for w in (l for l in lines if l.get("kind") == "warmup"):  # untimed; its tokens count on the server
        if "error" in w:
            fail(f"the warm-up request failed: {w['error']}")
        else:
            tokens_received += w["chunks"]
            answered += 1
    print(f"openai SDK {meta.get('sdk_version')} on node {meta.get('node_version')}: "
          f"{len(streams)} streamed, {len(wholes)} whole, {len(refused)} refused requests")
    if not streams or not wholes or len(refused) != 8:
        fail(f"expected streamed, whole and 8 refused requests, got {len(streams)}, {len(wholes)}, {len(refused)}")

    def tokens_wanted(line, name):
        """The tokens the engine makes for this request; None (and a failure) when it failed."""
        nonlocal answered
        if "error" in line:
            fail(f"{name}: the request failed: {line['error']}")
            return None
        answered += 1
        return min(args.tokens, line["max_tokens"]) if args.tokens > 0 else line["max_tokens"]

    ttfts = {}
    itls = []
    for s in streams:
        name = f"{s['endpoint']} {s['mode']} #{s['i']}"
        want = tokens_wanted(s, name)
        if want is None:
            continue
        usage = s.get("usage") or {}
        tokens_received += s["chunks"]
        if not (s["chunks"] == usage.get("completion_tokens") == want):
            fail(f"{name}: {s['chunks']} text chunks, usage.completion_tokens {usage.get('completion_tokens')}, "
                 f"the engine makes {want}")
        if usage.get("total_tokens") != usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0):
            fail(f"{name}: usage does not add up: {usage}")
        if s["text"] != expected_text(want):
            fail(f"{name}: text {s['text'][:80]!r}... is not the engine's words")
        reason = "length" if want == s["max_tokens"] else "stop"
        if s.get("finish_reason") != reason:
            fail(f"{name}: finish_reason {s.get('finish_reason')!r}, expected {reason!r}")
        obj = "chat.completion.chunk" if s["endpoint"] == "chat" else "text_completion"
        if s.get("object") != obj:
            fail(f"{name}: object {s.get('object')!r}, expected {obj!r}")
        if s.get("ttft_ms") is None:
            fail(f"{name}: no chunk carried text")
            continue
        ttfts.setdefault((s["endpoint"], s["mode"]), []).append(s["ttft_ms"])
        if s.get("itl_ms_median") is not None:
            itls.append(s["itl_ms_median"])

    truth = args.first_token_ms
    for (endpoint, mode), group in sorted(ttfts.items()):
        med = statistics.median(group)
        print(f"  TTFT {endpoint:11s} {mode:10s} n={len(group):2d} median {med:8.2f} ms "
              f"(min {min(group):.2f}, max {max(group):.2f}), {med - truth:+.2f} ms from the engine's {truth:g} ms")
    # Requests alone on the wire (one after another, and the short ones) time the server
    # plus one request's worth of the SDK's own work: they must agree with the engine.
    alone = [t for (_, mode), group in ttfts.items() if mode != "concurrent" for t in group]
    if alone:
        med = statistics.median(alone)
        tol = max(2.0, 0.05 * truth)
        print(f"TTFT median over {len(alone)} requests alone on the wire: {med:.2f} ms vs ground truth {truth:g} ms: "
              f"{med - truth:+.2f} ms (tolerance {tol:.2f} ms)")
        if not agrees(med, truth):
            fail(f"SDK TTFT median {med:.2f} ms disagrees with the engine's {truth:g} ms by more than 2 ms or 5 %",
                 timing)
    # Requests sent at once share the SDK's one event loop, which builds, sends and parses
    # them in turn: their TTFT carries that client-side queue (printed). The server must
    # still answer them side by side: a server that took them one at a time would give the
    # k-th a TTFT of k first tokens or more.
    together = [t for (_, mode), group in ttfts.items() if mode == "concurrent" for t in group]
    if together:
        med = statistics.median(together)
        print(f"TTFT of {len(together)} requests sent at once: median {med:.2f} ms, max {max(together):.2f} ms: "
              f"the client side (the SDK's one event loop) adds {med - truth:+.2f} ms")
        if max(together) >= 2 * truth:
            fail(f"a request sent with others waited {max(together):.2f} ms for its first token, two of the "
                 f"engine's first-token delays or more: were they answered one at a time?", timing)
    if itls:
        med = statistics.median(itls)
        print(f"inter-token gap median: {med:.2f} ms vs cadence {args.cadence_ms:g} ms: {med - args.cadence_ms:+.2f} ms")
        if not agrees(med, args.cadence_ms):
            fail(f"median inter-token gap {med:.2f} ms disagrees with the cadence {args.cadence_ms:g} ms", timing)
    check_server_ttft(snapshots(lines), len(alone) + len(together), truth, fail, timing)

    for w in wholes:
        name = f"{w['endpoint']} non-streamed"
        want = tokens_wanted(w, name)
        if want is None:
            continue
        tokens_received += (w.get("usage") or {}).get("completion_tokens", 0)
        if (w.get("usage") or {}).get("completion_tokens") != want or w.get("text") != expected_text(want):
            fail(f"{name}: usage {w.get('usage')} text {str(w.get('text'))[:60]!r}: expected {want} engine words")
        obj = "chat.completion" if w["endpoint"] == "chat" else "text_completion"
        if w.get("object") != obj:
            fail(f"{name}: object {w.get('object')!r}, expected {obj!r}")

    expect = {"unknown_model": (404, "is_not_found", "model_not_found"),
              "oversize_prompt": (400, "is_bad_request", "context_length_exceeded")}
    for r in refused:
        name = f"{r['case']} ({r['endpoint']}, stream {str(r['stream']).lower()})"
        status, typed, code = expect[r["case"]]
        if not r.get("raised"):
            fail(f"{name}: the SDK raised nothing")
            continue
        if not (r.get("is_api_error") and r.get(typed)):
            fail(f"{name}: the SDK raised {r.get('class')}, not the typed APIError ({typed[3:]})")
        if r.get("status") != status or r.get("code") != code:
            fail(f"{name}: status {r.get('status')} code {r.get('code')!r}, expected {status} {code!r}")
        obj = r.get("error_object") or {}
        if set(obj) != {"message", "type", "param", "code"}:
            fail(f"{name}: the error object has fields {sorted(obj)}, expected message, type, param, code")
        if not (isinstance(obj.get("message"), str) and obj["message"] and r.get("type") == "invalid_request_error"):
            fail(f"{name}: message {obj.get('message')!r} type {r.get('type')!r}")
        if not str(r.get("message", "")).startswith(f"{status} "):
            fail(f"{name}: the SDK's message {r.get('message')!r} does not carry the status")
    print(f"refused requests: {sum(1 for r in refused if r.get('raised'))} raised typed APIErrors")

    if args.metrics_url:
        text = urllib.request.urlopen(args.metrics_url, timeout=5).read().decode()

        def counter(name):
            m = re.search(rf"^{re.escape(name)}{{[^}}]*}} (\d+)$", text, re.M)
            return int(m.group(1)) if m else None

        gen, ok = counter("vllm:generation_tokens_total"), counter("vllm:request_success_total")
        print(f"server /metrics: generation_tokens_total {gen} (SDK received {tokens_received}), "
              f"request_success_total {ok} (SDK answered {answered})")
        if gen != tokens_received or ok != answered:
            fail(f"the server counted {gen} tokens / {ok} answers, the SDK received {tokens_received} / {answered}")

    print("\n".join([f"FAIL: {f}" for f in failures] + [f"FAIL (timing): {f}" for f in timing]) or "ok")
    return 1 if failures else 3 if timing else 0


if __name__ == "__main__":
    sys.exit(main())
