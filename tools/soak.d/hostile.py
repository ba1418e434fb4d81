#!/usr/bin/env python3
"""The hostile minority of tools/soak, against one tldsnap server on 127.0.0.1:

    hostile.py ADDR KEYS_FILE SECONDS [--live]

KEYS_FILE holds the raw keys of the hostile keys, one a line. Until SECONDS have passed:

- slow readers: 64 connections that ask for the whole catalogue (a large answer) and
  read it 512 bytes a second, reconnecting when the server closes them;
- test floods: every hostile key keeps a webhook subscription to a receiver here that
  accepts connections and never answers, and every 10 s fires 40 concurrent
  `POST .../test` at it from 40 connections, then drops them;
- pipelining: 8 connections that each send 200 pipelined requests at once and read the
  answers slowly (4 KiB every 100 ms);
- malformed and idle: 16 connections that send half a request head and go quiet;
- bulk availability at the limit (when the server runs --live, tools/soak.d/upstreams.py
  behind it): every hostile key keeps 4 requests of 100 new names each (the most one
  request takes) in flight, without pause, so that its share of the upstreams is always
  full and the rest waits.

Prints one JSON line at the end: what each kind of client saw (answers by status,
connections the server closed), for the report. Everything stays on loopback.
"""
import asyncio
import json
import socket
import sys
import time
from collections import Counter

ADDR, KEYS_FILE, SECONDS = sys.argv[1], sys.argv[2], float(sys.argv[3])
LIVE = "--live" in sys.argv[4:]
HOST, PORT = ADDR.rsplit(":", 1)[0], int(ADDR.rsplit(":", 1)[1])
KEYS = [k.strip() for k in open(KEYS_FILE) if k.strip()]
END = time.monotonic() + SECONDS
SEEN = {"slow": Counter(), "flood": Counter(), "pipeline": Counter(), "idle": Counter(),
        "bulk": Counter()}


def alive():
    return time.monotonic() < END


async def silent_receiver():
    """Accepts connections and never writes: a webhook receiver that hangs."""
    held = []

    async def hold(reader, writer):
        held.append(writer)
        try:
            await reader.read()  # until the server gives up
        finally:
            writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def request(method, target, key, body=b""):
    reader, writer = await asyncio.open_connection(HOST, PORT)
    head = (f"{method} {target} HTTP/1.1\r\nHost: soak\r\nX-API-Key: {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()
    writer.write(head + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, data.split(b"\r\n\r\n", 1)[-1]


async def slow_reader(i):
    while alive():
        try:
            reader, writer = await asyncio.open_connection(HOST, PORT)
            key = KEYS[i % len(KEYS)]
            writer.write((f"GET /api/v1/client/tlds?limit=500 HTTP/1.1\r\nHost: soak\r\n"
                          f"X-API-Key: {key}\r\n\r\n").encode())
            await writer.drain()
            while alive():
                chunk = await reader.read(512)
                if not chunk:
                    SEEN["slow"]["closed_by_server"] += 1
                    break
                SEEN["slow"]["chunks"] += 1
                await asyncio.sleep(1)
            writer.close()
        except OSError as e:
            SEEN["slow"][type(e).__name__] += 1
            await asyncio.sleep(1)


async def flooder(key, url):
    status, body = await request("POST", "/api/v1/client/webhooks", key,
                                 json.dumps({"url": url}).encode())
    if status != 201:
        SEEN["flood"][f"create_{status}"] += 1
        return
    hook = json.loads(body)["id"]
    while alive():
        async def one():
            try:
                status, _ = await asyncio.wait_for(
                    request("POST", f"/api/v1/client/webhooks/{hook}/test", key), 2)
                SEEN["flood"][str(status)] += 1
            except asyncio.TimeoutError:
                SEEN["flood"]["dropped_after_2s"] += 1  # the client leaves mid-test
            except OSError as e:
                SEEN["flood"][type(e).__name__] += 1
        await asyncio.gather(*(one() for _ in range(40)))
        await asyncio.sleep(10)


async def pipeliner(i):
    key = KEYS[i % len(KEYS)]
    one = (f"GET /api/v1/client/prices/cheapest?tlds=com,net,org&limit=5 HTTP/1.1\r\n"
           f"Host: soak\r\nX-API-Key: {key}\r\n\r\n").encode()
    while alive():
        try:
            reader, writer = await asyncio.open_connection(HOST, PORT)
            writer.write(one * 200)
            await writer.drain()
            got = b""
            while alive() and got.count(b"HTTP/1.1 ") < 200:
                chunk = await reader.read(4096)
                if not chunk:
                    SEEN["pipeline"]["closed_by_server"] += 1
                    break
                got += chunk
                await asyncio.sleep(0.1)
            SEEN["pipeline"]["answers"] += got.count(b"HTTP/1.1 200")
            writer.close()
        except OSError as e:
            SEEN["pipeline"][type(e).__name__] += 1
            await asyncio.sleep(1)


async def idler(i):
    while alive():
        try:
            reader, writer = await asyncio.open_connection(HOST, PORT)
            writer.write(b"GET /api/v1/prices/cheapest?tlds=com HTTP/1.1\r\nHost: so")
            await writer.drain()
            data = await reader.read()
            SEEN["idle"]["closed_by_server" if not data else "answered"] += 1
            writer.close()
        except OSError as e:
            SEEN["idle"][type(e).__name__] += 1
            await asyncio.sleep(1)


async def bulk(key, lane):
    n = 0
    while alive():
        n += 1
        names = [f"{'free' if j % 2 else 'taken'}{lane}x{n}x{j}.{'com' if j % 3 else 'net'}"
                 for j in range(100)]
        try:
            status, body = await asyncio.wait_for(request(
                "POST", "/api/v1/client/domains/availability", key,
                json.dumps({"domains": names}).encode()), 60)
            SEEN["bulk"][str(status)] += 1
            if status == 200:
                for verdict, count in json.loads(body)["meta"]["counts"].items():
                    SEEN["bulk"][verdict] += count
            elif status == 429:
                await asyncio.sleep(0.2)
        except asyncio.TimeoutError:
            SEEN["bulk"]["no_answer_in_60s"] += 1
        except (OSError, ValueError, KeyError) as e:
            SEEN["bulk"][type(e).__name__] += 1
            await asyncio.sleep(1)


async def main():
    receiver, port = await silent_receiver()
    url = f"http://127.0.0.1:{port}/hook"
    tasks = [slow_reader(i) for i in range(64)]
    tasks += [flooder(k, url) for k in KEYS[:4]]
    tasks += [pipeliner(i) for i in range(8)]
    tasks += [idler(i) for i in range(16)]
    if LIVE:
        tasks += [bulk(k, f"{i}{lane}") for i, k in enumerate(KEYS[:4]) for lane in range(4)]
    await asyncio.wait([asyncio.ensure_future(t) for t in tasks],
                       timeout=SECONDS + 30)
    receiver.close()
    print(json.dumps({k: dict(v) for k, v in SEEN.items()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
