#!/usr/bin/env python3
"""tools/cluster's accounting: nginx's access log, wrk's counts and Redis's credit hashes.

    check.py reconcile STATE_JSON T     polls Redis (at most 20 s) until every key's total
                                        covers the keyed 200s nginx delivered up to T (the
                                        Redis restart: the answers of the outage are only
                                        in the replicas until they write them back); prints
                                        the totals before and after and the seconds it took
    check.py report STATE_JSON OUT_DIR  the summary table and every final check; writes
                                        OUT_DIR/results.json and results.md; exit 1 when a
                                        check failed

STATE_JSON (written by tools/cluster) holds the paths, ports, key ids, replica fields and
the timestamps of each phase.
"""
import json
import subprocess
import sys
import time
from collections import defaultdict

def load(path):
    with open(path) as f:
        return json.load(f)


def nginx_lines(state):
    """Every request nginx logged: (msec, key label, status, [upstreams], [upstream statuses], uri)."""
    out = []
    with open(state["access_log"]) as f:
        for line in f:
            parts = line.rstrip("\n").split("|")
            if len(parts) != 6:
                continue
            msec, label, status, ups, ustatus, uri = parts
            out.append((float(msec), label, int(status),
                        [u.strip() for u in ups.split(",") if u.strip()],
                        [s.strip() for s in ustatus.split(",") if s.strip()], uri))
    return out


def keyed(line):
    return line[5].startswith("/api/")


def redis_fields(state):
    """{key label: {field: credits}} from the month hashes."""
    out = {}
    for label, key_id in state["key_ids"].items():
        name = "tldsnap:credits:%s:%s" % (state["month"], key_id)
        raw = subprocess.run(["redis-cli", "-p", str(state["redis_port"]), "--raw", "HGETALL", name],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        raw = [r for r in raw if r != ""]
        out[label] = {raw[i]: int(raw[i + 1]) for i in range(0, len(raw) - 1, 2)}
    return out


def redis_totals(state):
    fields = redis_fields(state)
    return {label: sum(fields[label].values()) for label in state["key_ids"]}


def reconcile(state, up):
    # Redis first, sampled from now on (the log is long to read); then what nginx had
    # delivered up to the restart, and the first sample that covers it.
    samples = []
    start = time.time()
    while time.time() - start < 6:
        samples.append((time.time(), redis_totals(state)))
        time.sleep(0.1)
    delivered = defaultdict(int)
    for l in nginx_lines(state):
        if keyed(l) and l[2] == 200 and l[0] <= up:
            delivered[l[1]] += 1
    deadline = up + 30
    while True:
        for t, totals in samples:
            if all(totals[label] >= delivered[label] for label in totals):
                print(json.dumps({"seconds": round(t - up, 2), "delivered": delivered,
                                  "first": samples[0][1], "first_s": round(samples[0][0] - up, 2),
                                  "covered": totals}))
                return 0
        if time.time() > deadline:
            print(json.dumps({"seconds": None, "delivered": delivered, "first": samples[0][1],
                              "first_s": round(samples[0][0] - up, 2), "last": samples[-1][1]}))
            return 1
        samples = [(time.time(), redis_totals(state))]
        time.sleep(0.1)


def wrk_results(state):
    out = {}
    for phase in state["phases"]:
        with open(phase["wrk_out"]) as f:
            line = next((l for l in f if l.startswith("CLUSTER ")), None)
        if line is None:
            raise SystemExit("wrk printed no result for phase %s" % phase["name"])
        out[phase["name"]] = json.loads(line[len("CLUSTER "):])
    return out


def failures(w):
    return (sum(k["bad"] for k in w["keys"]) + w["err_connect"] + w["err_read"] + w["err_write"]
            + w["err_timeout"])


def report(state, out_dir):
    lines = nginx_lines(state)
    wrk = wrk_results(state)
    fields = redis_fields(state)
    labels = list(state["key_ids"])
    port_of = {r["name"]: "127.0.0.1:%d" % r["port"] for r in state["replicas"]}
    name_of = {v: k for k, v in port_of.items()}
    killed = state["killed"]
    checks = []

    def check(ok, what):
        checks.append({"ok": bool(ok), "what": what})

    # ---- phases
    phase_rows = []
    for phase in state["phases"]:
        w = wrk[phase["name"]]
        t0, t1 = phase["start"], phase["end"]
        in_phase = [l for l in lines if t0 <= l[0] <= t1]
        retried = [l for l in in_phase if len(l[3]) > 1]
        n_bad = failures(w)
        keyed_ok = sum(k["ok"] for k in w["keys"])
        phase_rows.append({
            "phase": phase["name"], "what": phase["what"], "requests": w["requests"],
            "rps": w["requests"] / w["duration_s"], "keyed_200": keyed_ok,
            "failures": n_bad, "statuses": " ".join(k["statuses"] for k in w["keys"]).strip(),
            "p50_ms": w["p50_us"] / 1000, "p99_ms": w["p99_us"] / 1000, "max_ms": w["max_us"] / 1000,
            "retried_by_nginx": len(retried),
            "nginx_non_200": sum(1 for l in in_phase if l[2] != 200),
        })
        check(n_bad == 0, "%s: 0 failed requests (wrk: %d; first statuses: %s)" % (
            phase["name"], n_bad, phase_rows[-1]["statuses"] or "-"))

    # ---- convergence
    conv = state["convergence"]
    for r in conv["replicas"]:
        check(r["seconds"] is not None and r["seconds"] <= conv["bound_s"],
              "publish: %s serves %s after %s s (bound %.1f s = watch interval x 1.2 + %.0f s)" % (
                  r["name"], conv["hash"][:12],
                  "never" if r["seconds"] is None else "%.2f" % r["seconds"], conv["bound_s"],
                  conv["margin_s"]))

    # ---- redis outage
    ro = state["redis_outage"]
    during = [l for l in lines if keyed(l) and l[2] == 200 and ro["down"] <= l[0] <= ro["up"]]
    check(len(during) > 0, "redis down %.1f s: %d keyed answers served on local counts meanwhile" % (
        ro["up"] - ro["down"], len(during)))
    rec = ro["reconcile"]
    check(rec["seconds"] is not None,
          "redis back (restarted from its append-only file): every key's total covers the answers "
          "delivered up to the restart %s s after it (k1: %s delivered; in Redis %s at +%.1f s, %s then)" % (
              "never" if rec["seconds"] is None else "%.1f" % rec["seconds"],
              rec["delivered"].get("k1"), rec["first"].get("k1"), rec["first_s"],
              (rec.get("covered") or rec.get("last") or {}).get("k1")))
    for r in ro["logs"]:
        check(r["went_away"] and r["back"],
              "%s logged the outage and the reconciliation (went away: %s, back: %s)" % (
                  r["name"], r["went_away"], r["back"]))

    # ---- credits
    # Each replica run has its own field; the killed replica has two runs: the one
    # killed (its field set to what it spent by the restarted run) and the restarted one.
    kill = state["kill"]

    def run_of(name, t):
        if name != killed:
            return name
        return killed + (" killed" if t < kill["restart"] else " restarted")

    runs = []                               # (run name, field)
    for r in state["replicas"]:
        if r["name"] == killed:
            runs += [(killed + " killed", kill["field"]), (killed + " restarted", r["field"])]
        else:
            runs.append((r["name"], r["field"]))
    window = (kill["at"] - 1, kill["ready"] + 3)
    delivered = defaultdict(int)            # label -> keyed 200s nginx delivered
    via = defaultdict(int)                  # (label, run) -> keyed 200s that run answered
    cut = defaultdict(int)                  # label -> requests nginx took away from the killed replica
    for l in lines:
        if not keyed(l):
            continue
        if l[2] == 200:
            delivered[l[1]] += 1
            via[(l[1], run_of(name_of.get(l[3][-1], l[3][-1]), l[0]))] += 1
        if window[0] <= l[0] <= window[1] and any(name_of.get(a) == killed for a in l[3][:-1]):
            cut[l[1]] += 1
    # nginx's own account of the requests in flight on the killed replica when it died:
    # an attempt that had reached it and got no answer (refused connections excluded).
    killed_addr = "http://%s/" % port_of[killed]
    in_flight = 0
    with open(state["error_log"]) as f:
        for line in f:
            # One [error] line per attempt (a [warn] line follows when nginx marks the
            # replica down).
            if (killed_addr not in line or " [error] " not in line
                    or "while connecting to upstream" in line):
                continue
            try:
                t = time.mktime(time.strptime(line[:19], "%Y/%m/%d %H:%M:%S"))
            except ValueError:
                continue
            if int(window[0]) <= t <= window[1]:
                in_flight += 1
    credit_rows = []
    twice_total = 0
    for i, label in enumerate(labels):
        seen = sum(w["keys"][i]["ok"] for w in wrk.values())
        credits = sum(fields[label].values())
        row = {"key": label, "wrk_200": seen, "nginx_200": delivered[label], "credits": credits,
               "runs": {}}
        check(seen == delivered[label],
              "%s: the 200s wrk saw (%d) are the keyed 200s nginx delivered (%d)" % (label, seen, delivered[label]))
        twice = 0
        for name, field in runs:
            f = fields[label].get(field, 0)
            answered = via[(label, name)]
            row["runs"][name] = {"credits": f, "answered": answered}
            if name == killed + " killed":
                twice = f - answered
                claimed = kill["claimed_at_kill"][label]
                row["runs"][name]["claimed_at_kill"] = claimed
                check(kill["handed_back"][label] == f and claimed >= f,
                      "%s: %s's field claimed %d credits at the kill; the restarted run set it to the %d "
                      "it spent (%d unspent credits handed back before it served)" % (
                          label, killed, claimed, f, claimed - f))
                check(0 <= twice <= cut[label],
                      "%s: the killed run spent %d credits for %d answers delivered: %d charged for requests "
                      "the kill cut off (nginx took %d request(s) away from %s around the kill)" % (
                          label, f, answered, twice, cut[label], killed))
            else:
                check(f == answered,
                      "%s: %s (clean shutdown) recorded %d credits for %d answers" % (label, name, f, answered))
        row["charged_twice"] = twice
        twice_total += twice
        check(credits == seen + twice,
              "%s: credits in Redis (%d) = 200s seen (%d)%s" % (
                  label, credits, seen,
                  "" if twice == 0 else " + %d answered twice: charged by %s, cut off by the kill, retried "
                  "and charged again" % (twice, killed)))
        credit_rows.append(row)
    check(twice_total <= in_flight,
          "requests charged by %s and cut off by the kill: %d, of the %d nginx saw in flight on it when it died" % (
              killed, twice_total, in_flight))

    results = {"phases": phase_rows, "convergence": conv, "redis_outage": {
        k: v for k, v in ro.items() if k != "logs"}, "credits": credit_rows,
        "kill": dict(kill, in_flight_at_kill=in_flight), "checks": checks,
        "memory": state.get("memory", {}), "snapshot_bytes": state.get("snapshot_bytes"),
        "loadavg": state.get("loadavg")}
    with open("%s/results.json" % out_dir, "w") as f:
        json.dump(results, f, indent=1)

    md = []
    md.append("| phase | event | requests | req/s | keyed 200 | failed | p50 ms | p99 ms | max ms | retried by nginx |")
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in phase_rows:
        md.append("| %s | %s | %d | %.0f | %d | %d | %.2f | %.2f | %.1f | %d |" % (
            r["phase"], r["what"], r["requests"], r["rps"], r["keyed_200"], r["failures"],
            r["p50_ms"], r["p99_ms"], r["max_ms"], r["retried_by_nginx"]))
    md.append("")
    md.append("| replica | converged on the new snapshot after |")
    md.append("|---|---:|")
    for r in conv["replicas"]:
        md.append("| %s | %s |" % (r["name"], "never" if r["seconds"] is None else "%.2f s" % r["seconds"]))
    md.append("")
    names = [name for name, _ in runs]
    md.append("| key | 200s seen (wrk) | delivered (nginx) | credits (Redis) | %s | charged twice (cut off by the kill) |" % " | ".join(
        "%s: claimed at the kill → spent / answers" % n if n == killed + " killed" else "%s credits / answers" % n
        for n in names))
    md.append("|---|---:|---:|---:|%s|---:|" % "|".join("---:" for _ in names))
    for row in credit_rows:
        cells = []
        for n in names:
            r = row["runs"][n]
            if "claimed_at_kill" in r:
                cells.append("%d → %d / %d" % (r["claimed_at_kill"], r["credits"], r["answered"]))
            else:
                cells.append("%d / %d" % (r["credits"], r["answered"]))
        md.append("| %s | %d | %d | %d | %s | %d |" % (
            row["key"], row["wrk_200"], row["nginx_200"], row["credits"], " | ".join(cells),
            row["charged_twice"]))
    md.append("")
    for c in checks:
        md.append("- %s %s" % ("ok  " if c["ok"] else "FAIL", c["what"]))
    text = "\n".join(md) + "\n"
    with open("%s/results.md" % out_dir, "w") as f:
        f.write(text)
    print(text)
    return 0 if all(c["ok"] for c in checks) else 1


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "reconcile":
        sys.exit(reconcile(load(sys.argv[2]), float(sys.argv[3])))
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        sys.exit(report(load(sys.argv[2]), sys.argv[3]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
