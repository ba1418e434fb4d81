#!/usr/bin/env python3
"""Raises every `com` register price of a prices.csv by one dollar, in place, so that
the hot-swap run of tools/loadtest alternates between two snapshots whose cheapest-1
answers differ (every rank's price and 5-year total moves).

usage: bump_price.py PRICES_CSV
"""
import csv
import sys

path = sys.argv[1]
with open(path, newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
header = rows[0]
tld, reg = header.index("tld"), header.index("register")
bumped = 0
for row in rows[1:]:
    if row[tld] == "com" and row[reg].strip():
        whole, _, frac = row[reg].strip().partition(".")
        cents = int(whole) * 100 + int((frac + "00")[:2]) + 100
        row[reg] = f"{cents // 100}.{cents % 100:02d}"
        bumped += 1
if not bumped:
    sys.exit(f"{path}: no com row with a register price")
with open(path, "w", newline="", encoding="utf-8") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
