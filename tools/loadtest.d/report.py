#!/usr/bin/env python3
"""Turns the raw records of tools/loadtest (one JSON object a line) into
results.json and results.md: medians of the runs, ratios to the hyper baseline,
the hot-swap comparison, memory, and which targets hold (docs/PERFORMANCE.md).

usage: report.py RAW.jsonl OUT_DIR
"""
import json
import statistics
import sys
from collections import defaultdict

WORKLOADS = {
    "cheapest1": "cheapest, 1 TLD, limit 5",
    "public1": "cheapest, 1 TLD, limit 5, public, no key",
    "credits1": "cheapest, 1 TLD, limit 5, a plan with a credit limit",
    "cheapest10": "cheapest, 10 TLDs, limit 10",
    "prices3x3": "prices, 3 TLDs x 3 registrars",
    "prices10": "prices, 10 TLDs x every registrar",
    "registrars": "registrar listing with prices",
    "history": "history, com, every registrar, whole range",
    "overview": "overview, com",
    "tldpage": "web page /tld/com with its chart",
    "cheapest1sort": "cheapest, 1 TLD, limit 5, sort=total_3_year",
    "cheapest1eur": "cheapest, 1 TLD, limit 5, currency=EUR",
    "public1eur": "cheapest, 1 TLD, limit 5, public, currency=EUR, no key",
    "export": "export, com's rows as CSV",
}
SERVERS = ["tldsnap", "hyperct", "hyper", "nginx"]
DATASETS = ["real", "s", "l"]


def failed(r):
    return sum(r.get(k, 0) for k in ("err_connect", "err_read", "err_write", "err_status", "err_timeout"))


def median_of(runs):
    """The run with the median requests/s stands for the group; its latencies are
    reported with it (each percentile is also the median over runs)."""
    out = {
        "runs": len(runs),
        "rps": statistics.median(r["rps"] for r in runs),
        "p50_us": statistics.median(r["p50_us"] for r in runs),
        "p99_us": statistics.median(r["p99_us"] for r in runs),
        "p999_us": statistics.median(r["p999_us"] for r in runs),
        "failed": sum(failed(r) for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "rps_all": [r["rps"] for r in runs],
    }
    return out


def paired_all(groups, key, base_key):
    """Per-round ratios: run i of this server against run i of the baseline."""
    a = {r["run"]: r["rps"] for r in groups.get(key, [])}
    b = {r["run"]: r["rps"] for r in groups.get(base_key, [])}
    return [a[i] / b[i] for i in a if i in b and b[i]]


def paired(groups, key, base_key):
    ratios = paired_all(groups, key, base_key)
    return statistics.median(ratios) if ratios else None


def ms(us):
    return f"{us / 1000:.3f}"


def main():
    raw, out_dir = sys.argv[1], sys.argv[2]
    records = []
    with open(raw) as f:
        for line in f:
            line = line.strip()
            if line:
                records.append(json.loads(line))

    meta = next((r for r in records if r["kind"] == "meta"), {})
    groups = defaultdict(list)
    for r in records:
        if r["kind"] == "load":
            groups[(r["server"], r["dataset"], r["workload"], r["conns"])].append(r)
    load = {k: median_of(v) for k, v in groups.items()}
    for (server, dataset, workload, conns), m in load.items():
        base = load.get(("hyper", dataset, workload, conns))
        m["ratio_hyper"] = m["rps"] / base["rps"] if base and base["rps"] else None
        # Paired ratio: run i of this server against run i of the hyper baseline, made
        # seconds apart in the same round, then the median over rounds. Slow changes in
        # the machine's other load cancel out of each pair.
        m["paired_ratio_hyper"] = paired(groups, (server, dataset, workload, conns), ("hyper", dataset, workload, conns))
        m["paired_ratio_nginx"] = paired(groups, (server, dataset, workload, conns), ("nginx", dataset, workload, conns))
        # The ceiling: hyper on a current_thread runtime serving the same bytes. Median
        # and spread (min..max) of the per-round ratios.
        ct = paired_all(groups, (server, dataset, workload, conns), ("hyperct", dataset, workload, conns))
        m["paired_ratio_hyperct"] = statistics.median(ct) if ct else None
        m["spread_hyperct"] = [min(ct), max(ct)] if ct else None

    swaps = [r for r in records if r["kind"] == "swap"]
    rounds = [r for r in records if r["kind"] == "swap_round"]
    for sw in swaps:
        plain = [r for r in rounds if not r["swapping"]]
        swapping = [r for r in rounds if r["swapping"]]
        if swapping:
            sw.update({
                "rounds": len(swapping),
                "requests": sum(r["requests"] for r in swapping),
                "rps": statistics.median(r["rps"] for r in swapping),
                "p50_us": statistics.median(r["p50_us"] for r in swapping),
                "p99_us": statistics.median(r["p99_us"] for r in swapping),
                "p999_us": statistics.median(r["p999_us"] for r in swapping),
                "failed": sum(failed(r) for r in swapping),
            })
        if plain:
            sw["plain"] = {
                "requests": sum(r["requests"] for r in plain),
                "rps": statistics.median(r["rps"] for r in plain),
                "p99_us": statistics.median(r["p99_us"] for r in plain),
                "failed": sum(failed(r) for r in plain),
            }
    instructions = [r for r in records if r["kind"] == "instructions"]
    audits = [r for r in records if r["kind"] == "audit"]
    # Key population runs: tldsnap's, and the same requests sent to hyperct (which
    # ignores the key: the load generator's and the kernel's share). Records written
    # before the control existed carry no "server": they are tldsnap's.
    all_key_runs = [r for r in records if r["kind"] == "keys"]
    key_runs = [r for r in all_key_runs if r.get("server", "tldsnap") == "tldsnap"]
    control_runs = [r for r in all_key_runs if r.get("server") == "hyperct"]

    def key_table(runs):
        table = {}
        for n in sorted({r["keys"] for r in runs}):
            rs = [r for r in runs if r["keys"] == n]
            table[n] = {"dataset": rs[0]["dataset"], "runs": len(rs),
                        "rps": statistics.median(r["rps"] for r in rs),
                        "p50_us": statistics.median(r["p50_us"] for r in rs),
                        "p99_us": statistics.median(r["p99_us"] for r in rs),
                        "failed": sum(failed(r) for r in rs)}
        return table

    def per_round(runs, one, many):
        """many keys / one key, by round."""
        by_run = defaultdict(dict)
        for r in runs:
            by_run[r["run"]][r["keys"]] = r["rps"]
        return {run: v[many] / v[one] for run, v in by_run.items() if one in v and many in v and v[one]}

    keys = key_table(key_runs)
    key_control = key_table(control_runs)
    if len(keys) == 2:
        one, many = sorted(keys)
        rounds = per_round(key_runs, one, many)
        pairs = list(rounds.values())
        keys[many]["paired_ratio"] = statistics.median(pairs)
        keys[many]["spread"] = [min(pairs), max(pairs)]
        if len(key_control) == 2:
            control = per_round(control_runs, one, many)
            cpairs = list(control.values())
            key_control[many]["paired_ratio"] = statistics.median(cpairs)
            key_control[many]["spread"] = [min(cpairs), max(cpairs)]
            # tldsnap's ratio over the control's of the same round: what the key
            # population costs tldsnap beyond what it costs any server on this rig.
            net = [rounds[r] / control[r] for r in rounds if control.get(r)]
            if net:
                keys[many]["net_ratio"] = statistics.median(net)
                keys[many]["net_spread"] = [min(net), max(net)]
    audit = {}
    for conns in sorted({r["conns"] for r in audits}):
        rs = [r for r in audits if r["conns"] == conns]
        audit[conns] = {
            "domains": rs[0]["domains"], "dataset": rs[0]["dataset"], "runs": len(rs),
            "body_bytes": rs[0]["body_bytes"], "answer_bytes": rs[0]["answer_bytes"],
            "rps": statistics.median(r["rps"] for r in rs),
            "p50_us": statistics.median(r["p50_us"] for r in rs),
            "p99_us": statistics.median(r["p99_us"] for r in rs),
            "max_us": max(r["max_us"] for r in rs),
            "failed": sum(failed(r) for r in rs),
        }
    memory = [r for r in records if r["kind"] == "memory"]
    notes = [r["text"] for r in records if r["kind"] == "note"]

    targets = []

    def target(name, ok, detail):
        targets.append({"target": name, "holds": ok, "detail": detail})

    conns_seen = sorted({k[3] for k in load})
    for conns in conns_seen:
        t = load.get(("tldsnap", "real", "cheapest1", conns))
        h = load.get(("hyper", "real", "cheapest1", conns))
        n = load.get(("nginx", "real", "cheapest1", conns))
        ct = load.get(("hyperct", "real", "cheapest1", conns))
        if t and ct and t.get("paired_ratio_hyperct") is not None:
            ratio = t["paired_ratio_hyperct"]
            lo, hi = t["spread_hyperct"]
            target(f"cheapest 1 TLD >= 0.97x hyper current_thread ({conns} conns)", ratio >= 0.97,
                   f"paired median {ratio:.2f}x, spread {lo:.2f}-{hi:.2f} "
                   f"(medians {t['rps']:.0f} vs {ct['rps']:.0f} req/s)")
        if t and h:
            ratio = t["paired_ratio_hyper"]
            target(f"cheapest 1 TLD >= 0.95x hyper multi-thread ({conns} conns)", ratio >= 0.95,
                   f"paired median {ratio:.2f}x (medians {t['rps']:.0f} vs {h['rps']:.0f} req/s)")
        if t and n:
            ratio = t["paired_ratio_nginx"]
            target(f"cheapest 1 TLD >= 1.4x nginx static ({conns} conns)", ratio >= 1.4,
                   f"paired median {ratio:.2f}x (medians {t['rps']:.0f} vs {n['rps']:.0f} req/s)")
    for (server, dataset, workload, conns), m in sorted(load.items()):
        if server == "tldsnap" and workload == "public1" and m.get("paired_ratio_hyperct") is not None:
            # The public unkeyed answer, against its own fixed-body ceiling.
            lo, hi = m["spread_hyperct"]
            target(f"public cheapest 1 TLD, no key >= 0.97x hyper current_thread ({dataset}, {conns} conns)",
                   m["paired_ratio_hyperct"] >= 0.97,
                   f"paired median {m['paired_ratio_hyperct']:.2f}x, spread {lo:.2f}-{hi:.2f}")
        if server == "tldsnap" and workload in ("prices10", "registrars") \
                and m.get("paired_ratio_hyperct") is not None:
            # The large answers at >= 0.8x their own fixed-body ceiling.
            lo, hi = m["spread_hyperct"]
            target(f"{workload} >= 0.8x hyper current_thread ({dataset}, {conns} conns)",
                   m["paired_ratio_hyperct"] >= 0.8,
                   f"paired median {m['paired_ratio_hyperct']:.2f}x, spread {lo:.2f}-{hi:.2f}")
        if server == "tldsnap" and workload == "tldpage":
            # A page costs little more than an API answer.
            c = load.get(("tldsnap", dataset, "cheapest1", conns))
            if c:
                ratio = m["rps"] / c["rps"]
                target(f"/tld/com >= 1/3 of cheapest's req/s ({dataset}, {conns} conns)", ratio >= 1 / 3,
                       f"{m['rps']:.0f} vs {c['rps']:.0f} req/s = {ratio:.2f}x")
            target(f"/tld/com p99 < 5 ms ({dataset}, {conns} conns)", m["p99_us"] < 5000,
                   f"p99 {ms(m['p99_us'])} ms")
            continue
        if server == "tldsnap" and workload in ("history", "overview"):
            # History and overview: at least half of cheapest's req/s, p99 under 2 ms at 64 conns.
            c = load.get(("tldsnap", dataset, "cheapest1", conns))
            if c:
                ratio = m["rps"] / c["rps"]
                target(f"{workload} >= 1/2 of cheapest's req/s ({dataset}, {conns} conns)", ratio >= 0.5,
                       f"{m['rps']:.0f} vs {c['rps']:.0f} req/s = {ratio:.2f}x")
            if conns == 64:
                target(f"{workload} p99 < 2 ms at 64 conns ({dataset})", m["p99_us"] < 2000,
                       f"p99 {ms(m['p99_us'])} ms")
            continue
        if server == "tldsnap" and conns == 64:
            target(f"p99 <= 1 ms at 64 conns ({dataset}, {workload})", m["p99_us"] <= 1000,
                   f"p99 {ms(m['p99_us'])} ms")
    for (server, dataset, workload, conns), m in sorted(load.items()):
        if server == "tldsnap" and dataset == "l":
            s = load.get(("tldsnap", "s", workload, conns))
            if s:
                ratio = m["rps"] / s["rps"]
                target(f"L within 10% of S ({workload}, {conns} conns)", ratio >= 0.9,
                       f"L {m['rps']:.0f} vs S {s['rps']:.0f} req/s = {ratio:.2f}x")
    for sw in swaps:
        if "requests" not in sw:
            continue
        fails = sw["failed"]
        target(f"hot swap: 0 failed requests ({sw['dataset']}, {sw['conns']} conns)", fails == 0,
               f"{fails} failed of {sw['requests']}, {sw['swaps']} swaps, "
               f"reloads: {sw.get('reloads', 'n/a')} succeeded, {sw.get('reload_failures', 'n/a')} failed")
        target(f"hot swap: the new snapshot's answer is served ({sw['dataset']})",
               sw["changed"] == sw["odd"],
               f"{sw['swaps']} swaps ({'odd' if sw['odd'] else 'even'}), answer changed: {sw['changed']}")
        plain = sw.get("plain")
        if plain:
            ratio = sw["p99_us"] / plain["p99_us"] if plain["p99_us"] else float("inf")
            sw["p99_ratio_plain"] = ratio
            target(f"hot swap: p99 within 2x of the plain run ({sw['dataset']})", ratio <= 2.0,
                   f"p99 {ms(sw['p99_us'])} ms vs {ms(plain['p99_us'])} ms = {ratio:.2f}x")
    if len(keys) == 2:
        one, many = sorted(keys)
        k = keys[many]
        target(f"{many} keys within 5% of one key (cheapest 1 TLD, 64 conns)", k["paired_ratio"] >= 0.95,
               f"paired median {k['paired_ratio']:.2f}x, spread {k['spread'][0]:.2f}-{k['spread'][1]:.2f} "
               f"({k['rps']:.0f} vs {keys[one]['rps']:.0f} req/s)")
        if "net_ratio" in k:
            c = key_control[many]
            target(f"{many} keys within 5% of one key, net of the same requests to hyperct", k["net_ratio"] >= 0.95,
                   f"median {k['net_ratio']:.2f}x, spread {k['net_spread'][0]:.2f}-{k['net_spread'][1]:.2f} "
                   f"(hyperct itself: {c['paired_ratio']:.2f}x, spread {c['spread'][0]:.2f}-{c['spread'][1]:.2f})")
    if audits:
        one = audit.get(1)
        if one:
            # One connection: the client waits for each answer, so p50 is one audit's
            # server time plus a loopback round trip and wrk's parsing of the answer.
            target(f"portfolio audit of {one['domains']} domains < 20 ms (1 conn, p50)", one["p50_us"] < 20000,
                   f"p50 {ms(one['p50_us'])} ms, p99 {ms(one['p99_us'])} ms, {one['rps']:.1f} audits/s")
        # Bounded by the request, not growing: for each connection count, the VmRSS after
        # the last run against the one after the first (what requests in flight hold
        # comes and goes; a leak would climb run after run).
        growths, seqs = [], []
        for c in sorted({r["conns"] for r in audits}):
            rs = sorted((r for r in audits if r["conns"] == c), key=lambda r: r["run"])
            growths.append((rs[-1]["vmrss_kb"] - rs[0]["vmrss_kb"]) / 1024)
            seqs.append(f"{c} conn: " + " ".join(f"{r['vmrss_kb'] / 1024:.0f}" for r in rs))
        target("portfolio audit: memory does not grow across requests", max(growths) <= 8,
               f"VmRSS {audits[0]['vmrss_before_kb'] / 1024:.1f} MiB before; MiB after each run: "
               f"{'; '.join(seqs)} (last - first at most {max(growths):+.1f} MiB)")
    for m in memory:
        limit = m["snapshot_bytes"] + 30 * 1024 * 1024
        rss = m["vmrss_kb"] * 1024
        target(f"resident memory <= snapshot + 30 MB ({m['dataset']})", rss <= limit,
               f"VmRSS {rss / 2**20:.1f} MiB, snapshot {m['snapshot_bytes'] / 2**20:.1f} MiB")

    result = {
        "meta": meta,
        "load": [
            {"server": k[0], "dataset": k[1], "workload": k[2], "conns": k[3], **v}
            for k, v in sorted(load.items())
        ],
        "swap": swaps,
        "swap_rounds": rounds,
        "instructions": instructions,
        "audit": [{"conns": c, **v} for c, v in audit.items()],
        "audit_runs": audits,
        "keys": [{"keys": n, **v} for n, v in keys.items()],
        "keys_control": [{"keys": n, **v} for n, v in key_control.items()],
        "memory": memory,
        "targets": targets,
        "notes": notes,
    }
    with open(f"{out_dir}/results.json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    md = []
    md.append("# tldsnap load test results\n")
    if meta:
        md.append(f"- date: {meta.get('date')}; commit {meta.get('commit')}; mode: {meta.get('mode')}")
        md.append(f"- machine: {meta.get('nproc')} cores, {meta.get('cpu')}; {meta.get('kernel')}")
        md.append(f"- load generator: {meta.get('wrk')}, {meta.get('wrk_threads')} thread(s), "
                  f"{meta.get('duration')} s per run, {meta.get('runs')} run(s) per cell, median shown")
        md.append(f"- pinning: {meta.get('pinning')}")
        md.append(f"- load average (1/5/15 min) at start: {meta.get('loadavg_start')}; at end: {meta.get('loadavg_end')} "
                  "(anything above 0 before the run is other work competing for the 2 cores)")
        md.append(f"- nginx: {meta.get('nginx')}")
        md.append("")
    md.append("## Throughput and latency (median of runs)\n")
    md.append("`x hyper-ct` is the median over rounds of (this run's req/s / the req/s of hyper on a "
              "current_thread runtime serving the same bytes, measured in the same round), with the spread "
              "(min-max over rounds); `x hyper-mt` the same against hyper's multi-thread runtime. Pairing "
              "runs of one round (the servers in turn, in the reverse order every other round) cancels most of "
              "the machine's other load; req/s and latencies are medians.\n")
    md.append("| workload | dataset | server | conns | req/s | x hyper-ct (spread) | x hyper-mt | p50 ms | p99 ms | p99.9 ms | failed |")
    md.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = {w: i for i, w in enumerate(WORKLOADS)}
    for k in sorted(load, key=lambda k: (order.get(k[2], 99), DATASETS.index(k[1]) if k[1] in DATASETS else 9,
                                         k[3], SERVERS.index(k[0]) if k[0] in SERVERS else 9)):
        m = load[k]
        ratio = f"{m['paired_ratio_hyper']:.2f}" if m["paired_ratio_hyper"] is not None else "-"
        ct = m.get("paired_ratio_hyperct")
        spread = m.get("spread_hyperct")
        ct_text = f"{ct:.2f} ({spread[0]:.2f}-{spread[1]:.2f})" if ct is not None else "-"
        md.append(f"| {WORKLOADS.get(k[2], k[2])} | {k[1]} | {k[0]} | {k[3]} | {m['rps']:.0f} | {ct_text} | {ratio} | "
                  f"{ms(m['p50_us'])} | {ms(m['p99_us'])} | {ms(m['p999_us'])} | {m['failed']} |")
    md.append("")
    if swaps:
        md.append("## Hot swap under load\n")
        md.append("Rounds of a plain run and a run with a snapshot swap every 100 ms alternate on one "
                  "`serve --watch` server; medians over the rounds.\n")
        md.append("| dataset | workload | conns | rounds | swaps | reloads ok / failed | req/s plain | req/s swapping "
                  "| p99 ms plain | p99 ms swapping | failed plain | failed swapping |")
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for sw in swaps:
            if "requests" not in sw:
                continue
            plain = sw.get("plain", {})
            md.append(f"| {sw['dataset']} | {sw['workload']} | {sw['conns']} | {sw['rounds']} | {sw['swaps']} | "
                      f"{sw.get('reloads', 'n/a')} / {sw.get('reload_failures', 'n/a')} | "
                      f"{plain.get('rps', 0):.0f} | {sw['rps']:.0f} | {ms(plain.get('p99_us', 0))} | {ms(sw['p99_us'])} | "
                      f"{plain.get('failed', '-')} | {sw['failed']} |")
        md.append("")
    if keys:
        md.append("## Key population\n")
        md.append("cheapest 1 TLD at 64 connections on one server that loaded every key; each request carries "
                  "one key, or the next of all of them in turn (tools/loadtest.d/keys.lua: the same wrk work "
                  "either way), the two taking turns to go first from round to round. `x one key` is the median "
                  "of the per-round ratios, with the spread.\n")
        md.append("| keys sent | dataset | req/s | x one key (spread) | p50 ms | p99 ms | failed |")
        md.append("|---:|---|---:|---:|---:|---:|---:|")
        for n, k in keys.items():
            ratio = f"{k['paired_ratio']:.2f} ({k['spread'][0]:.2f}-{k['spread'][1]:.2f})" if "paired_ratio" in k else "1"
            md.append(f"| {n} | {k['dataset']} | {k['rps']:.0f} | {ratio} | {ms(k['p50_us'])} | {ms(k['p99_us'])} | "
                      f"{k['failed']} |")
        md.append("")
        if key_control:
            md.append("The same requests to hyperct, which ignores the key (what 10,000 distinct requests cost "
                      "wrk and the kernel on this rig); `net` is tldsnap's per-round ratio over hyperct's.\n")
            md.append("| keys sent | hyperct req/s | x one key (spread) | tldsnap net (spread) |")
            md.append("|---:|---:|---:|---:|")
            for n, c in key_control.items():
                ratio = (f"{c['paired_ratio']:.2f} ({c['spread'][0]:.2f}-{c['spread'][1]:.2f})"
                         if "paired_ratio" in c else "1")
                k = keys.get(n, {})
                net = (f"{k['net_ratio']:.2f} ({k['net_spread'][0]:.2f}-{k['net_spread'][1]:.2f})"
                       if "net_ratio" in k else "1")
                md.append(f"| {n} | {c['rps']:.0f} | {ratio} | {net} |")
            md.append("")
    if audit:
        md.append("## Portfolio audit (POST)\n")
        md.append("`POST /api/v1/client/portfolio/audit` with a JSON portfolio (tools/loadtest.d/portfolio.py: "
                  "subdomains, duplicates, stated prices, invalid names); medians over runs.\n")
        md.append("| domains | dataset | conns | body KB | answer KB | audits/s | p50 ms | p99 ms | max ms | failed |")
        md.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c, a in audit.items():
            md.append(f"| {a['domains']} | {a['dataset']} | {c} | {a['body_bytes'] / 1024:.0f} | "
                      f"{a['answer_bytes'] / 1024:.0f} | {a['rps']:.1f} | {ms(a['p50_us'])} | {ms(a['p99_us'])} | "
                      f"{ms(a['max_us'])} | {a['failed']} |")
        md.append("")
    if instructions:
        md.append("## Instructions per request (callgrind)\n")
        md.append("User-space instructions per request, everything included, one worker thread, 4 connections; "
                  "a syscall counts as one instruction. Independent of other load on the machine; "
                  "valgrind hides SHA-NI from the program.\n")
        md.append("| workload | dataset | tldsnap | hyper current_thread | tldsnap / hyper-ct |")
        md.append("|---|---|---:|---:|---:|")
        by = {(r["workload"], r["server"]): r for r in instructions}
        for wl in WORKLOADS:
            # The current_thread baseline is the reference; older records
            # have only the multi-thread one.
            t, h = by.get((wl, "tldsnap")), by.get((wl, "hyperct")) or by.get((wl, "hyper"))
            if t and h:
                md.append(f"| {WORKLOADS[wl]} | {t['dataset']} | {t['per_request']} | {h['per_request']} | "
                          f"{t['per_request'] / h['per_request']:.2f} |")
        md.append("")
    if memory:
        md.append("## Memory\n")
        md.append("| dataset | snapshot file MiB | VmRSS MiB (after the GET load, before the audit) | VmHWM MiB | RSS - snapshot MiB |")
        md.append("|---|---:|---:|---:|---:|")
        for m in memory:
            snap = m["snapshot_bytes"] / 2**20
            rss = m["vmrss_kb"] / 1024
            md.append(f"| {m['dataset']} | {snap:.1f} | {rss:.1f} | {m['vmhwm_kb'] / 1024:.1f} | {rss - snap:.1f} |")
        md.append("")
    if targets:
        md.append("## Targets\n")
        md.append("| target | holds | measured |")
        md.append("|---|---|---|")
        for t in targets:
            md.append(f"| {t['target']} | {'yes' if t['holds'] else '**no**'} | {t['detail']} |")
        md.append("")
    if notes:
        md.append("## Notes\n")
        for n in notes:
            md.append(f"- {n}")
        md.append("")
    with open(f"{out_dir}/results.md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
