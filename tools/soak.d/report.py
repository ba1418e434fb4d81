#!/usr/bin/env python3
"""tools/soak's report: the well-behaved keys' p99 and errors with and without the
hostile minority, and the server's memory minute by minute.

    report.py RESULTS_JSONL HOSTILE_JSON
"""
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
try:
    hostile = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    hostile = {}


def summary(name):
    mine = [r for r in rows if r["run"] == name]
    w = [r["wrk"] for r in mine]
    reqs = sum(x["requests"] for x in w)
    errs = sum(x["err_connect"] + x["err_read"] + x["err_write"] + x["err_status"]
               + x["err_timeout"] for x in w)
    p99 = [x["p99_us"] / 1000 for x in w]
    rss = [r["rss_kib"] / 1024 for r in mine]
    return {"minutes": len(mine), "requests": reqs, "errors": errs,
            "rps": statistics.mean(x["rps"] for x in w) if w else 0,
            "p99_median": statistics.median(p99) if p99 else 0,
            "p99_max": max(p99) if p99 else 0,
            "rss_first": rss[0] if rss else 0, "rss_last": rss[-1] if rss else 0,
            "rss_max": max(rss) if rss else 0}


q, h = summary("quiet"), summary("hostile")
print("# Soak: well-behaved keys with and without a hostile minority\n")
print("| run | minutes | requests | errors | req/s | p99 median of minutes (ms) | "
      "p99 worst minute (ms) | RSS first / last / max (MiB) |")
print("|---|---|---|---|---|---|---|---|")
for name, s in (("quiet", q), ("hostile", h)):
    print(f"| {name} | {s['minutes']} | {s['requests']:,} | {s['errors']} | {s['rps']:,.0f} | "
          f"{s['p99_median']:.3f} | {s['p99_max']:.3f} | "
          f"{s['rss_first']:.1f} / {s['rss_last']:.1f} / {s['rss_max']:.1f} |")
if q["p99_median"]:
    print(f"\nhostile / quiet: p99 (median of minutes) {h['p99_median'] / q['p99_median']:.2f}x, "
          f"throughput {h['rps'] / q['rps']:.2f}x" if q["rps"] else "")
print("\nWhat the hostile clients saw:\n")
for kind, seen in hostile.items():
    print(f"- {kind}: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())))
