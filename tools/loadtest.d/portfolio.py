#!/usr/bin/env python3
"""The load harness's portfolio: N real-looking entries as the JSON body of
POST /api/v1/client/portfolio/audit, the same mix as benches/audit.rs: every TLD with a
seller in snapshots/source/prices.csv in turn, a registrar on most, a stated price on a
quarter, an expiry on a third, subdomains, upper case, duplicates and invalid names.

    portfolio.py PRICES_CSV N OUT_JSON
"""
import csv
import json
import sys


def main():
    prices, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tlds = []
    seen = set()
    with open(prices, newline="") as f:
        for row in csv.DictReader(f):
            t = row["tld"]
            if t not in seen and row["register"]:
                seen.add(t)
                tlds.append(t)
    regs = ["namecheap", "porkbun", "", "dynadot", "godaddy", "cloudflare", "openprovider"]
    items = []
    for i in range(n):
        t = tlds[i % len(tlds)]
        name = {0: f"www.brand{i}.{t}", 1: f"Brand{i - 1}.{t}", 9: f"bad..name{i}.{t}"}.get(
            i % 10, f"brand{i}.{t}")
        o = {"name": name}
        if regs[i % len(regs)]:
            o["registrar"] = regs[i % len(regs)]
        if i % 4 == 0:
            o["renew_price"] = 14.99
        if i % 3 == 0:
            o["expires"] = "2026-09-01"
        items.append(o)
    with open(out, "w") as f:
        json.dump({"domains": items}, f)


if __name__ == "__main__":
    main()
