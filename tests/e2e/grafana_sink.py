#!/usr/bin/env python3
"""A stand-in for Grafana's annotations API that records what it is sent.

Usage: grafana_sink.py PORT_FILE LOG_FILE [--fail-first N] [--fail-all]

Listens on 127.0.0.1 (a free port, written to PORT_FILE once listening) and appends one
JSON line per request to LOG_FILE: method, path, headers, body (parsed when JSON). It
answers as Grafana does: POST /api/annotations -> {"id": N, "message": "Annotation added"},
PATCH /api/annotations/N -> {"message": "Annotation patched"}; anything else 404.
--fail-first N answers the first N requests 500; --fail-all answers every request 500.
Stops on SIGTERM.
"""
import argparse
import http.server
import json
import os
import re
import signal
import sys
import threading


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port_file")
    ap.add_argument("log_file")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--fail-all", action="store_true")
    args = ap.parse_args()
    lock = threading.Lock()
    state = {"seen": 0, "next_id": 100}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            with lock:
                state["seen"] += 1
                failing = args.fail_all or state["seen"] <= args.fail_first
                entry = {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                         "body": body, "answered": 500 if failing else 200}
                with open(args.log_file, "a") as f:
                    f.write(json.dumps(entry) + "\n")
                if failing:
                    return self.reply(500, {"message": "failing on purpose"})
                if self.command == "POST" and self.path == "/api/annotations":
                    state["next_id"] += 1
                    return self.reply(200, {"id": state["next_id"], "message": "Annotation added"})
                if self.command == "PATCH" and re.fullmatch(r"/api/annotations/\d+", self.path):
                    return self.reply(200, {"message": "Annotation patched"})
            return self.reply(404, {"message": "not found"})

        def reply(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_PATCH = do_GET = do_PUT = do_DELETE = handle_any

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))

    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
