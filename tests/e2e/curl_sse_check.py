#!/usr/bin/env python3
"""What `curl -N` sees from an OpenAI-compatible server (tests/e2e/openai_sdk_test.sh (curl) runs it
against `chaosbench worker llm-serve`).

  curl_sse_check.py --base-url http://127.0.0.1:PORT --model NAME --tokens 16
                    --first-token-ms 150 --cadence-ms 20 --context 2048

Streamed (completions and chat, with and without stream_options.include_usage):
  - the head says 200, Content-Type text/event-stream, Transfer-Encoding chunked;
  - the body is only `data: <payload>\\n\\n` events, each payload one line of JSON with the
    completion-chunk shape (id, object, created, model, choices[].index and text or delta,
    finish_reason), one id, model and created throughout, then `data: [DONE]` last;
  - the events come as the tokens are made: curl -N hands each on at once, so the first
    arrives no sooner than the first-token delay and the tokens spread over at least half
    their time at the cadence (a buffered answer comes all at once).
Refused (curl without -N is fine there): malformed JSON 400, unknown model 404
model_not_found, oversize prompt 400 context_length_exceeded, each with the OpenAI error
object {"error": {"message", "type", "param", "code"}} as application/json.
Prints what it checked, then "ok" or every failure; exits 1 on any failure.
"""
import argparse
import json
import subprocess
import sys
import time

WORDS = [" " + w for w in "the quick brown fox jumps over a lazy dog and runs far into green hills today".split()]

failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def curl_stream(url, body):
    """curl -N with the head on stderr's side (-D to a pipe is awkward): returns the head,
    the body and when each body line arrived (seconds since the request was sent)."""
    cmd = ["curl", "-sS", "-N", "--max-time", "20", "-D", "/dev/stderr", "-H", "Content-Type: application/json",
           "-d", json.dumps(body), url]
    sent = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    for raw in proc.stdout:  # curl -N writes each chunk as it comes; lines are timed as read
        lines.append((time.monotonic() - sent, raw))
    head = proc.stderr.read().decode("latin-1")
    rc = proc.wait()
    return rc, head, lines


def parse_head(head):
    status, fields = None, {}
    for line in head.split("\r\n"):
        if line.startswith("HTTP/"):
            status, fields = int(line.split()[1]), {}
        elif ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
    return status, fields


def check_chunk(name, j, endpoint, model):
    for key in ("id", "object", "created", "model", "choices"):
        if key not in j:
            return f"{name}: no {key!r}: {j}"
    obj = "chat.completion.chunk" if endpoint == "chat" else "text_completion"
    if j["object"] != obj:
        return f"{name}: object {j['object']!r}, expected {obj!r}"
    if not isinstance(j["id"], str) or not j["id"] or not isinstance(j["created"], int) or j["model"] != model:
        return f"{name}: id/created/model wrong: {j}"
    if not isinstance(j["choices"], list):
        return f"{name}: choices is not a list"
    for c in j["choices"]:
        if not isinstance(c, dict) or c.get("index") != 0 or "finish_reason" not in c:
            return f"{name}: a choice without index 0 or finish_reason: {c}"
        if c["finish_reason"] not in (None, "stop", "length"):
            return f"{name}: finish_reason {c['finish_reason']!r}"
        if endpoint == "chat":
            if not isinstance(c.get("delta"), dict) or not isinstance(c["delta"].get("content", ""), str):
                return f"{name}: chat choice without a delta object: {c}"
        elif not isinstance(c.get("text"), str):
            return f"{name}: completion choice without text: {c}"
    return None


def check_stream(args, endpoint, include_usage):
    name = f"{endpoint} stream (include_usage {str(include_usage).lower()})"
    path = "/v1/chat/completions" if endpoint == "chat" else "/v1/completions"
    body = {"model": args.model, "max_tokens": 64, "stream": True}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": "hello"}]
    else:
        body["prompt"] = "hello"
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    rc, head, lines = curl_stream(args.base_url + path, body)
    if rc != 0:
        return fail(f"{name}: curl exited {rc}")
    status, fields = parse_head(head)
    if status != 200:
        return fail(f"{name}: status {status}")
    if not fields.get("content-type", "").startswith("text/event-stream"):
        fail(f"{name}: Content-Type {fields.get('content-type')!r}")
    if fields.get("transfer-encoding", "").lower() != "chunked":
        fail(f"{name}: Transfer-Encoding {fields.get('transfer-encoding')!r}, not chunked")
    if "content-length" in fields:
        fail(f"{name}: a Content-Length on a stream")

    # Events: `data: ...` then an empty line; nothing else (no comments, no event: fields).
    raw = b"".join(l for _, l in lines)
    if b"\r" in raw:
        fail(f"{name}: CR in the SSE body")
    if not raw.endswith(b"\n\n"):
        fail(f"{name}: the body does not end with an empty line: {raw[-40:]!r}")
    events, at = [], []
    pending = None
    for t, l in lines:
        if l == b"\n":
            if pending is None:
                return fail(f"{name}: an empty line without an event before it")
            events.append(pending)
            pending = None
            continue
        if pending is not None:
            return fail(f"{name}: an event of more than one line: {pending!r} then {l!r}")
        if not l.startswith(b"data: ") or not l.endswith(b"\n"):
            return fail(f"{name}: a line that is not `data: ...`: {l!r}")
        pending = l[len(b"data: "):-1].decode("utf-8")
        at.append(t)
    if pending is not None:
        return fail(f"{name}: the last event has no empty line after it")
    if not events or events[-1] != "[DONE]" or events.count("[DONE]") != 1:
        return fail(f"{name}: the last event is {events[-1:]!r}, not the only [DONE]")

    chunks = []
    for k, e in enumerate(events[:-1]):
        try:
            j = json.loads(e)
        except json.JSONDecodeError as x:
            return fail(f"{name}: event {k} is not JSON ({x}): {e[:100]!r}")
        why = check_chunk(f"{name} event {k}", j, endpoint, args.model)
        if why:
            return fail(why)
        chunks.append(j)
    if len({(c["id"], c["created"], c["model"]) for c in chunks}) != 1:
        fail(f"{name}: id, created or model change within the stream")

    text_chunks = [c for c in chunks if c["choices"] and
                   (c["choices"][0].get("delta", {}).get("content") if endpoint == "chat" else c["choices"][0]["text"])]
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    usages = [c for c in chunks if c.get("usage")]
    text = "".join(c["choices"][0]["delta"]["content"] if endpoint == "chat" else c["choices"][0]["text"]
                   for c in text_chunks)
    want = "".join(WORDS[i % len(WORDS)] for i in range(args.tokens))
    if len(text_chunks) != args.tokens or text != want:
        fail(f"{name}: {len(text_chunks)} text chunks {text[:60]!r}..., expected {args.tokens} engine words")
    if finishes != ["stop"]:
        fail(f"{name}: finish reasons {finishes}, expected one 'stop'")
    if endpoint == "chat" and chunks[0]["choices"][0]["delta"].get("role") != "assistant":
        fail(f"{name}: the first delta has no role 'assistant'")
    if include_usage:
        if len(usages) != 1 or usages[0] is not chunks[-1] or usages[0]["choices"] != []:
            fail(f"{name}: expected one usage chunk with choices [] last before [DONE]")
        elif usages[0]["usage"].get("completion_tokens") != args.tokens:
            fail(f"{name}: usage {usages[0]['usage']}, expected {args.tokens} completion tokens")
    elif usages:
        fail(f"{name}: usage sent without stream_options.include_usage")

    # Streamed as made: curl -N passes each event on when it comes.
    first_ms = at[0] * 1000
    spread_ms = (at[args.tokens - 1] - at[0]) * 1000
    want_spread = (args.tokens - 1) * args.cadence_ms
    if first_ms < args.first_token_ms - 1 or spread_ms < 0.5 * want_spread:
        fail(f"{name}: events not streamed: first after {first_ms:.1f} ms, tokens over {spread_ms:.1f} ms "
             f"(the engine: {args.first_token_ms:g} ms, then over {want_spread:g} ms)")
    print(f"  {name}: {len(events)} events, first text after {first_ms:.1f} ms (curl -N, process start included), "
          f"tokens over {spread_ms:.1f} ms (engine {want_spread:g} ms)")


def check_refused(args, name, path, data, status, code):
    cmd = ["curl", "-sS", "--max-time", "10", "-o", "-", "-w", "\n%{http_code} %{content_type}",
           "-H", "Content-Type: application/json", "--data-binary", "@-", args.base_url + path]
    out = subprocess.run(cmd, input=data, capture_output=True, timeout=15)
    if out.returncode != 0:
        return fail(f"{name}: curl exited {out.returncode}: {out.stderr.decode()[:200]}")
    body, _, tail = out.stdout.decode("utf-8", "replace").rpartition("\n")
    got_status, _, ctype = tail.partition(" ")
    if int(got_status) != status:
        fail(f"{name}: status {got_status}, expected {status}")
    if not ctype.startswith("application/json"):
        fail(f"{name}: Content-Type {ctype!r}")
    try:
        j = json.loads(body)
    except json.JSONDecodeError:
        return fail(f"{name}: the body is not JSON: {body[:200]!r}")
    e = j.get("error") if isinstance(j, dict) else None
    if not isinstance(e, dict) or set(e) != {"message", "type", "param", "code"}:
        return fail(f"{name}: not the OpenAI error object: {body[:200]}")
    if not isinstance(e["message"], str) or not e["message"] or e["type"] != "invalid_request_error":
        fail(f"{name}: message {e['message']!r} type {e['type']!r}")
    if e["code"] != code:
        fail(f"{name}: code {e['code']!r}, expected {code!r}")
    print(f"  {name}: {got_status} {json.dumps(e)[:160]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--first-token-ms", type=float, required=True)
    ap.add_argument("--cadence-ms", type=float, required=True)
    ap.add_argument("--context", type=int, required=True)
    args = ap.parse_args()

    print("streamed, as curl -N sees them:")
    for endpoint in ("completions", "chat"):
        for include_usage in (False, True):
            check_stream(args, endpoint, include_usage)

    print("refused:")
    m = args.model
    check_refused(args, "malformed JSON", "/v1/completions",
                  b'{"model": "' + m.encode() + b'", "prompt": "hi", "max_tokens": ', 400, None)
    check_refused(args, "malformed JSON (chat)", "/v1/chat/completions", b"{not json", 400, None)
    check_refused(args, "unknown model", "/v1/completions",
                  json.dumps({"model": "no-such-model", "prompt": "hi", "max_tokens": 4}).encode(), 404,
                  "model_not_found")
    check_refused(args, "unknown model (chat, streamed)", "/v1/chat/completions",
                  json.dumps({"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}],
                              "stream": True}).encode(), 404, "model_not_found")
    big = "x" * (2 * args.context)
    check_refused(args, "oversize prompt", "/v1/completions",
                  json.dumps({"model": m, "prompt": big, "max_tokens": 4, "stream": True}).encode(), 400,
                  "context_length_exceeded")
    check_refused(args, "oversize prompt (chat)", "/v1/chat/completions",
                  json.dumps({"model": m, "messages": [{"role": "user", "content": big}]}).encode(), 400,
                  "context_length_exceeded")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
