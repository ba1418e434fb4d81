#!/usr/bin/env python3
"""Resident memory of a server holding many keep-alive connections.

    conns_memory.py PID URL HEADER [--conns N] [--rounds R] [--hold S]

Opens N connections (default 1,000) to URL's host and port, sends one GET of URL's path
with HEADER (e.g. "X-API-Key: tsk_...") on each, reads each whole answer (it must be a
200), and keeps every connection open. Then it reads the server's VmRSS and VmHWM from
/proc/PID/status and prints one JSON line. With --rounds R it sends R requests on every
connection (all connections busy at once, round after round) before reading. With
--hold S the connections stay open S seconds after the line is printed (to read
/proc/PID/smaps meanwhile).

Everything stays on loopback; the connections are closed when the script ends.
"""
import json
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    return out


def read_answer(sock, buf):
    """Reads one HTTP/1.1 answer with Content-Length; returns (status, rest of buf)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before the head")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    code = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed in the body")
        rest += chunk
    return code, rest[length:]


def main():
    args = sys.argv[1:]
    pid, url, header = args[0], args[1], args[2]
    conns = int(args[args.index("--conns") + 1]) if "--conns" in args else 1000
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 1
    hold = float(args[args.index("--hold") + 1]) if "--hold" in args else 0.0
    u = urlsplit(url)
    target = u.path + ("?" + u.query if u.query else "")
    request = (
        f"GET {target} HTTP/1.1\r\nHost: {u.netloc}\r\n{header}\r\n\r\n"
    ).encode()
    before = status(pid)
    socks = []
    started = time.monotonic()
    for _ in range(conns):
        s = socket.create_connection((u.hostname, u.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        socks.append(s)
    bufs = [b""] * conns
    codes = {}
    for _ in range(rounds):
        for s in socks:
            s.sendall(request)
        for i, s in enumerate(socks):
            code, bufs[i] = read_answer(s, bufs[i])
            codes[code] = codes.get(code, 0) + 1
    elapsed = time.monotonic() - started
    time.sleep(0.5)
    after = status(pid)
    print(json.dumps({
        "conns": conns,
        "rounds": rounds,
        "codes": codes,
        "seconds": round(elapsed, 2),
        "vmrss_kb_before": before["VmRSS"],
        "vmrss_kb_open": after["VmRSS"],
        "vmhwm_kb": after["VmHWM"],
        "per_connection_kb": round((after["VmRSS"] - before["VmRSS"]) / conns, 1),
    }))
    sys.stdout.flush()
    time.sleep(hold)
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
