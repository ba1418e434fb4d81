#!/usr/bin/env python3
"""The report of tools/loadtest.d/native: CPU time per request, user space and kernel,
from `perf record -e cpu-clock` profiles of the servers.

    native.py RUNS WORKLOAD [--functions N]

RUNS holds one line per measurement: `ROUND SERVER REQUESTS PERF_DATA`. A profile's
event count is the CPU time (ns) the server ran while it was sampled; divided by the
requests wrk counted, the time of one request, everything included. Samples in the
kernel ([k]) are the kernel's time, the rest (the program, libc, the vDSO) user space.
Ratios are taken within a round, to the first server of RUNS; the medians are over
rounds. The N functions (default 16) whose time per request differs most between the
first two servers, in the median, close the report.
"""
import re
import statistics
import subprocess
import sys
from collections import defaultdict


def profile(path):
    """(total ns, {(symbol, 'k' or 'u'): ns}) of one perf.data file."""
    out = subprocess.run(
        ["perf", "report", "-i", path, "--no-children", "--sort", "sym", "-g", "none", "--stdio"],
        capture_output=True, text=True, check=True,
    ).stdout
    m = re.search(r"Event count \(approx\.\): (\d+)", out)
    total = int(m.group(1)) if m else 0
    funcs = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[(.)\]\s+(.*)$", line)
        if m:
            where = "k" if m.group(2) == "k" else "u"
            key = (m.group(3).strip(), where)
            funcs[key] = funcs.get(key, 0.0) + float(m.group(1)) / 100 * total
    return total, funcs


def main():
    args = sys.argv[1:]
    n_funcs = 16
    if "--functions" in args:
        i = args.index("--functions")
        n_funcs = int(args[i + 1])
        del args[i : i + 2]
    runs_path, workload = args
    rows = []  # (round, server, requests, ns, user, kernel, funcs per request)
    servers = []
    for line in open(runs_path):
        rnd, server, requests, path = line.split()
        requests = int(requests)
        if server not in servers:
            servers.append(server)
        total, funcs = profile(path)
        per = {k: v / requests for k, v in funcs.items()}
        kernel = sum(v for (s, w), v in per.items() if w == "k")
        ns = total / requests
        rows.append((int(rnd), server, requests, ns, ns - kernel, kernel, per))

    print(f"## CPU per request, natively: {workload}\n")
    print("`perf record -e cpu-clock` of each server (pinned to core 0) under wrk (core 1, 64")
    print("connections); ns of CPU per request, user space (program, libc, vDSO) and kernel.\n")
    print("| round | server | requests | ns/request | user | kernel |")
    print("|---:|---|---:|---:|---:|---:|")
    for rnd, server, requests, ns, user, kernel, _ in rows:
        print(f"| {rnd} | {server} | {requests} | {ns:,.0f} | {user:,.0f} | {kernel:,.0f} |")

    by_round = defaultdict(dict)
    for r in rows:
        by_round[r[0]][r[1]] = r
    first = servers[0]
    print()
    print(f"Medians over rounds, and each server's ratio to {first}'s in the same round (median, min-max):\n")
    print("| server | ns/request | user | kernel | x total | x user | x kernel |")
    print("|---|---:|---:|---:|---|---|---|")

    def spread(values):
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    for s in servers:
        mine = [r for r in rows if r[1] == s]
        med = [statistics.median(r[i] for r in mine) for i in (3, 4, 5)]
        ratios = [[], [], []]
        for rnd, got in by_round.items():
            if s in got and first in got:
                for j, i in enumerate((3, 4, 5)):
                    ratios[j].append(got[s][i] / got[first][i])
        cells = " | ".join(spread(v) if v else "" for v in ratios)
        print(f"| {s} | {med[0]:,.0f} | {med[1]:,.0f} | {med[2]:,.0f} | {cells} |")

    if len(servers) >= 2:
        a, b = servers[0], servers[1]

        def medians(server):
            mine = [r[6] for r in rows if r[1] == server]
            keys = set().union(*mine)
            return {k: statistics.median(p.get(k, 0.0) for p in mine) for k in keys}

        ma, mb = medians(a), medians(b)
        keys = set(ma) | set(mb)
        diff = sorted(keys, key=lambda k: -abs(ma.get(k, 0.0) - mb.get(k, 0.0)))
        print()
        print(f"The {n_funcs} functions whose time per request differs most, {a} against {b} (median ns per request):\n")
        print(f"| function | where | {a} | {b} | difference |")
        print("|---|---|---:|---:|---:|")
        for k in diff[:n_funcs]:
            va, vb = ma.get(k, 0.0), mb.get(k, 0.0)
            name = k[0].replace("|", "\\|")[:90]
            where = "kernel" if k[1] == "k" else "user"
            print(f"| `{name}` | {where} | {va:,.0f} | {vb:,.0f} | {va - vb:+,.0f} |")


if __name__ == "__main__":
    main()
