"""Checks that each scenario of expected-failures.yml failed for its stated reason.

Usage: check.py EXPECTED_FAILURES_YML RESULTS_DIR

An entry reads `  - SCENARIO # TEXT`: every failed check of SCENARIO must have TEXT in
its error message, so a scenario listed because it calls a fixture cannot hide another
fault of the server. The suite itself has checked already that every listed scenario
failed and every other one passed.
"""

import json
import pathlib
import re
import sys


def main() -> int:
    listed = {}
    for line in pathlib.Path(sys.argv[1]).read_text().splitlines():
        m = re.match(r"^\s*-\s*([\w-]+)\s*#\s*(.+?)\s*$", line)
        if m:
            listed[m.group(1)] = m.group(2)
    results = pathlib.Path(sys.argv[2])
    seen = set()
    bad = []
    for checks in sorted(results.glob("server-*/checks.json")):
        # Directories are server-<scenario>-<ISO timestamp>.
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name)
        if scenario not in listed:
            continue
        seen.add(scenario)
        failed = [c for c in json.loads(checks.read_text()) if c.get("status") == "FAILURE"]
        if not failed:
            bad.append(f"{scenario}: no failed check")
        for c in failed:
            message = c.get("errorMessage") or ""
            if listed[scenario] not in message:
                bad.append(f"{scenario}: {c.get('id')} failed with {message!r}, not for {listed[scenario]!r}")
    for scenario in sorted(set(listed) - seen):
        bad.append(f"{scenario}: listed, but the suite ran no such scenario")
    for b in bad:
        print(f"mcp-conformance: {b}", file=sys.stderr)
    if not bad:
        print(f"mcp-conformance: the {len(listed)} listed scenarios failed for their stated reasons", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
