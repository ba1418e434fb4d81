#!/usr/bin/env python3
"""The live lookups' upstreams for tools/soak, on 127.0.0.1: a DNS resolver (UDP) and a
registry's RDAP server (HTTPS), so that bulk availability does its real outbound work
without leaving the machine.

    upstreams.py DIR

DIR receives ca.pem (the root to pass as --tls-roots), bootstrap.json (IANA's dns.json
format: `com` and `net` at the RDAP server here), and ports.json ({"dns": P, "rdap": P})
once both listen. Names whose first label starts with "free" are unknown to both (RDAP
404, NXDOMAIN): available; every other name is registered (an RFC 9083 domain object,
NS records). The RDAP server waits 20 ms before each answer, as a registry on the other
side of a network would. Runs until killed.
"""
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]


def certificates():
    """A CA and a leaf for localhost signed by it (webpki takes no self-signed leaf)."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    p = lambda name: os.path.join(DIR, name)  # noqa: E731
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2", "-subj", "/CN=soak CA")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", p("leaf.key"), "-out", p("leaf.csr"), "-subj", "/CN=localhost")
    with open(p("leaf.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", p("leaf.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"),
        "-CAcreateserial", "-out", p("leaf.pem"), "-days", "2", "-extfile", p("leaf.ext"))
    return p("leaf.pem"), p("leaf.key")


class Rdap(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's name)
        time.sleep(0.02)
        name = self.path.rsplit("/", 1)[-1].lower()
        if not self.path.startswith("/rdap/domain/") or name.startswith("free"):
            status, body = 404, {"errorCode": 404, "title": "Not Found"}
        else:
            status, body = 200, {
                "objectClassName": "domain", "ldhName": name.upper(),
                "rdapConformance": ["rdap_level_0"],
                "status": ["client transfer prohibited"],
                "events": [
                    {"eventAction": "registration", "eventDate": "2001-02-03T04:05:06Z"},
                    {"eventAction": "expiration", "eventDate": "2030-02-03T04:05:06Z"}],
                "nameservers": [{"objectClassName": "nameserver", "ldhName": "ns1.soak.net"}]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/rdap+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def dns_answer(query):
    """NXDOMAIN for free*, else an NS record (RFC 1035 wire format, one question)."""
    ident, flags = struct.unpack(">HH", query[:4])
    i, labels = 12, []
    while query[i]:
        labels.append(query[i + 1:i + 1 + query[i]].decode("ascii", "replace"))
        i += 1 + query[i]
    question = query[12:i + 5]
    rd = flags & 0x0100
    if labels and labels[0].lower().startswith("free"):
        return struct.pack(">HHHHHH", ident, 0x8083 | rd, 1, 0, 0, 0) + question
    target = b"".join(bytes([len(x)]) + x for x in (b"ns1", b"soak", b"net")) + b"\0"
    record = struct.pack(">HHHIH", 0xC00C, 2, 1, 300, len(target)) + target
    return struct.pack(">HHHHHH", ident, 0x8080 | rd, 1, 1, 0, 0) + question + record


def serve_dns(sock):
    while True:
        query, peer = sock.recvfrom(4096)
        try:
            sock.sendto(dns_answer(query), peer)
        except (IndexError, struct.error):
            pass  # not a query: no answer, as a resolver would drop it


def main():
    cert, key = certificates()
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind(("127.0.0.1", 0))
    threading.Thread(target=serve_dns, args=(dns,), daemon=True).start()
    rdap = ThreadingHTTPServer(("127.0.0.1", 0), Rdap)
    rdap.daemon_threads = True
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    rdap.socket = tls.wrap_socket(rdap.socket, server_side=True)
    rdap_port = rdap.server_address[1]
    with open(os.path.join(DIR, "bootstrap.json"), "w") as f:
        json.dump({"version": "1.0", "publication": "2026-01-01T00:00:00Z",
                   "services": [[["com", "net"], [f"https://localhost:{rdap_port}/rdap/"]]]}, f)
    with open(os.path.join(DIR, "ports.json.tmp"), "w") as f:
        json.dump({"dns": dns.getsockname()[1], "rdap": rdap_port}, f)
    os.rename(os.path.join(DIR, "ports.json.tmp"), os.path.join(DIR, "ports.json"))
    rdap.serve_forever()


if __name__ == "__main__":
    main()
