#!/usr/bin/env python3
"""The load harness's key population: adds N enterprise keys to a tldsnap
keys file (the format `tldsnap keys add` writes: id, plan, SHA-256 of the raw key,
label) and writes the raw keys, one per line, with the file's first key (whose raw
value is given) first.

    keys.py KEYS_JSON FIRST_RAW_KEY N RAW_OUT
"""
import hashlib
import json
import os
import sys


def main():
    path, first, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(path) as f:
        records = json.load(f)
    raw = [first]
    for i in range(n):
        key = "tsk_" + os.urandom(24).hex()
        raw.append(key)
        records.append({"id": "key_" + os.urandom(6).hex(), "plan": "enterprise",
                        "key_sha256": hashlib.sha256(key.encode()).hexdigest(),
                        "label": f"loadtest population {i}"})
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(records, f, indent=1)
        f.write("\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    with open(out, "w") as f:
        f.write("\n".join(raw) + "\n")


if __name__ == "__main__":
    main()
