"""A webhook receiver for the schedule tests: verifies every delivery with the Standard
Webhooks reference library (PyPI `standardwebhooks`), answers, and logs one JSON line per
request to stdout. Control files beside the log (read on every request): `secrets`
(one `whsec_...` per line; a message verifies when any of them does) and `fail`
(while it exists, every request is answered 503). Usage: receiver.py PORT DIR"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

PORT, DIR = int(sys.argv[1]), sys.argv[2]


def secrets():
    with open(os.path.join(DIR, "secrets")) as f:
        return [s.strip() for s in f if s.strip()]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        headers = {k: v for k, v in self.headers.items()}
        verified_by = []
        for i, s in enumerate(secrets()):
            try:
                Webhook(s).verify(body, headers)
                verified_by.append(i)
            except WebhookVerificationError:
                pass
        failing = os.path.exists(os.path.join(DIR, "fail"))
        status = 503 if failing else (204 if verified_by else 400)
        try:
            event = json.loads(body)
        except ValueError:
            event = {}
        line = {
            "webhook_id": self.headers.get("webhook-id"),
            "signatures": len(self.headers.get("webhook-signature", "").split(" ")),
            "verified_by": verified_by,
            "status": status,
            "type": event.get("type"),
            "run_id": (event.get("data") or {}).get("id"),
            "run_status": (event.get("data") or {}).get("status"),
        }
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
