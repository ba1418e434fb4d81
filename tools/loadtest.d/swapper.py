#!/usr/bin/env python3
"""Hot-swap driver of tools/loadtest: every INTERVAL seconds, writes a complete copy of
the next snapshot beside LIVE and renames it over LIVE (what `tldsnap build` does),
alternating between A and B, until SIGTERM. One process, no fork per swap, so that the
driver itself disturbs the measurement as little as possible. The number of swaps so
far is kept in COUNT (read at start, so that runs continue the alternation).

usage: swapper.py A B LIVE COUNT [INTERVAL]
"""
import os
import shutil
import signal
import sys
import time

a, b, live, count_path = sys.argv[1:5]
interval = float(sys.argv[5]) if len(sys.argv) > 5 else 0.1
tmp = os.path.join(os.path.dirname(live) or ".", ".live.tmp")
running = True


def stop(_sig, _frame):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
with open(count_path) as f:
    n = int(f.read().strip() or 0)
next_at = time.monotonic()
while running:
    shutil.copyfile(b if n % 2 == 0 else a, tmp)
    os.rename(tmp, live)
    n += 1
    with open(count_path, "w") as f:
        f.write(f"{n}\n")
    next_at += interval
    delay = next_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
