"""A webhook receiver that verifies every delivery with the `standardwebhooks` package
(PyPI, the reference implementation of the Standard Webhooks specification), not with
tldsnap's own code. tests/http_webhooks.rs runs it; docs/EVENTS.md shows it as the
example receiver.

    python webhook_receiver.py --secret-file FILE --log FILE [--fail-while FILE]

- Listens on 127.0.0.1, on a free port, and prints `listening on PORT` on stdout.
- For each POST: reads the secret (a `whsec_...` line) from --secret-file, so a test can
  write it after the subscription exists and rotate it; verifies the body against the
  webhook-id, webhook-timestamp and webhook-signature headers (`Webhook.verify` checks
  the HMAC and that the timestamp is within 5 minutes).
- Answers 204 to a verified delivery, 400 to one that does not verify, and 503 to every
  request while the --fail-while file exists (a receiver that is down for a while).
- Appends one JSON line per request to --log (flushed at once): the headers, whether it
  verified (and why not), the status answered, and the payload.
"""

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret-file", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--fail-while", type=Path)
    args = parser.parse_args()
    log = args.log.open("a", encoding="utf-8")

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            entry = {
                "webhook_id": headers.get("webhook-id"),
                "webhook_timestamp": headers.get("webhook-timestamp"),
                "signatures": len(headers.get("webhook-signature", "").split()),
                "path": self.path,
            }
            try:
                secret = args.secret_file.read_text().strip()
                entry["payload"] = Webhook(secret).verify(body, headers)
                entry["verified"] = True
            except (WebhookVerificationError, ValueError, OSError) as e:
                entry["verified"] = False
                entry["error"] = f"{type(e).__name__}: {e}"
            if args.fail_while is not None and args.fail_while.exists():
                status = 503
            else:
                status = 204 if entry["verified"] else 400
            entry["answered"] = status
            log.write(json.dumps(entry, sort_keys=True) + "\n")
            log.flush()
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
