#!/usr/bin/env python3
"""Hot-swap driver of tools/loadtest: every INTERVAL seconds, a complete new snapshot
file is renamed over LIVE (what `tldsnap build` does), alternating between copies of A
and B, until SIGTERM. The number of swaps so far is kept in COUNT (read at start, so
that successive runs continue the alternation).

The copies are written before the swapping starts (PREWRITE of them, in LIVE's
directory), and READY is created once they are on disk: on a 2-core machine the
writing itself (23 MB/s for the real snapshot) disturbs the load generator and the
kernel more than the server's reload does, and what is measured is the server. A copy
is a distinct file with its own inode, as a freshly built snapshot would be. When the
prewritten copies run out, the driver writes each new copy just before renaming it.

usage: swapper.py A B LIVE COUNT INTERVAL PREWRITE READY
"""
import os
import shutil
import signal
import sys
import time

a, b, live, count_path = sys.argv[1:5]
interval = float(sys.argv[5])
prewrite = int(sys.argv[6])
ready = sys.argv[7]
directory = os.path.dirname(live) or "."
running = True


def stop(_sig, _frame):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
with open(count_path) as f:
    n = int(f.read().strip() or 0)


def source(i):
    # The first swap installs B (LIVE starts as A), then they alternate.
    return b if i % 2 == 0 else a


copies = []
for i in range(n, n + prewrite):
    path = os.path.join(directory, f".swap-{i:06d}")
    shutil.copyfile(source(i), path)
    copies.append(path)
os.sync()
open(ready, "w").close()

next_at = time.monotonic()
while running:
    if copies:
        path = copies.pop(0)
    else:
        path = os.path.join(directory, f".swap-{n:06d}")
        shutil.copyfile(source(n), path)
    os.rename(path, live)
    n += 1
    with open(count_path, "w") as f:
        f.write(f"{n}\n")
    next_at += interval
    delay = next_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
for path in copies:
    os.unlink(path)
