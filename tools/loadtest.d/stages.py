#!/usr/bin/env python3
"""Instructions per request by stage, from a callgrind profile of `tldsnap serve` or of
the fixed-body baseline (tools/loadtest.d/callgrind).

    stages.py PROFILE REQUESTS [PROFILE REQUESTS ...] [--functions N [--match TEXT]] [--callees TEXT]

Reads the callgrind file itself (not callgrind_annotate's text) and computes every
function's inclusive cost: its own instructions plus everything its calls cost, as
callgrind recorded them (each function is one entry however many files its inlined code
came from). The stages are inclusive costs of the functions that do them, in the order
a request meets them; several profiles print side by side (tldsnap and a baseline):

| stage | what | functions (inclusive) |
|---|---|---|
| parse | read the request from the socket, parse the head, build the `Request` | hyper `Conn::poll_read_head` (where it is inlined: the head's `parse`, the socket read, `te_is_trailers`) |
| route | the route table and the method | `router::find`, `Route::allows` |
| auth | find the `X-API-Key` header, the key cache, the key table | `api::admit_now` (or `admit`) minus `rate` |
| rate | the clock and the key's rate bucket | `Bucket::check`, `AddressLimiter::check`, `SystemClock::now_ms` |
| credits | spend one credit | `Access::spend_now` / `spend_n` (or their inlined parts) |
| query | parameters, plan check, the snapshot lookup, the body's pre-rendered bytes; or the kept answer | the endpoint's `answer` minus `render`, `answers::get` / `put` |
| render | JSON written at request time, the response headers | `json::write_*`, `itoa`, `answer_headers`, `Cached::with_elapsed` |
| write | encode the head, write head and body to the socket | hyper `Server::encode`, `Buffered::poll_flush` |
| the rest | the event loop, waking and polling tasks, hyper's dispatcher; the service's glue: its futures, dropping the request, the snapshot `Arc`, the latency clock, metrics (the baseline's service: drop the request, make the fixed response) | the total minus the stages above |

A stage's functions are matched by name (Rust paths as callgrind writes them); a
function that is not there costs 0. `--functions N` also lists the N costliest
functions inclusive (with `--match`, only names containing TEXT).
"""
import re
import sys
from collections import defaultdict


def parse(path):
    """Returns (total, self_cost, calls): calls[caller][callee] = [count, inclusive]."""
    names = {"fn": {}, "fl": {}, "ob": {}}
    self_cost = defaultdict(int)
    calls = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    fn = None
    pending = None  # (callee, count) awaiting its cost line
    cfn = None
    total = 0
    compressed = re.compile(r"\((\d+)\)(?: (.*))?")

    def name(kind, text):
        m = compressed.match(text)
        if not m:
            return text
        ident, label = m.group(1), m.group(2)
        if label is not None:
            names[kind][ident] = label
            return label
        return names[kind].get(ident, ident)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending is not None:
                    callee, count = pending
                    if callee != fn:
                        entry = calls[fn][callee]
                        entry[0] += count
                        entry[1] += cost
                    pending = None
                else:
                    self_cost[fn] += cost
                continue
            if line.startswith(("summary:", "totals:")):
                total = int(line.split(":", 1)[1].split()[0])
                continue
            key, _, value = line.partition("=")
            if key == "fn":
                fn = name("fn", value)
            elif key == "cfn":
                cfn = name("fn", value)
            elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                name("fl", value)
            elif key in ("ob", "cob"):
                name("ob", value)
            elif key == "calls":
                pending = (cfn, int(value.split()[0]))
    return total, self_cost, calls


def load(path, requests):
    total, self_cost, calls = parse(path)
    inclusive = defaultdict(int)
    for fn, cost in self_cost.items():
        inclusive[fn] += cost
    for caller, callees in calls.items():
        inclusive[caller] += sum(c for _, c in callees.values())
        for callee in callees:
            inclusive.setdefault(callee, 0)
    return total, self_cost, calls, inclusive


def stage_costs(total, calls, inclusive):
    """[(stage, instructions)] of one profile; the stages add up to the total."""

    def incl(*patterns):
        """Inclusive cost of the functions whose name matches any pattern (exact name,
        or a regular expression with `re:`)."""
        out = 0
        for fn, cost in inclusive.items():
            for p in patterns:
                if (p.startswith("re:") and re.search(p[3:], fn)) or fn == p:
                    out += cost
                    break
        return out

    def called(caller, callee):
        """What `caller` spent in calls to `callee` (exact names)."""
        return calls.get(caller, {}).get(callee, [0, 0])[1]

    parse_ = incl("re:^hyper::proto::h1::conn::Conn<.*>::poll_read_head$")
    if not parse_:
        # `poll_read_head` inlined into the connection's poll (tldsnap's build since
        # 2026-11): what it calls instead, the head's parse and the socket read.
        parse_ = incl(
            "re:^<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse$",
            "re:^<tokio::net::tcp::stream::TcpStream as tokio::io::async_read::AsyncRead>::poll_read$",
            "hyper::headers::te_is_trailers",
        )
    write = incl(
        "re:^<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::encode$",
        "re:^hyper::proto::h1::io::Buffered<.*>::poll_flush$",
    )
    if not incl("re:^tldsnap::api::"):
        # The baseline: the service makes a fixed response (in "the rest").
        rows = [("parse", parse_), ("write", write)]
    else:
        route = incl(
            "re:^tldsnap::http::router::Table<.*>::find$",
            "tldsnap::http::router::Route::allows",
        )
        rate = incl(
            "tldsnap::access::rate::Bucket::check",
            "tldsnap::access::rate::AddressLimiter::check",
            "<tldsnap::access::clock::SystemClock as tldsnap::access::clock::Clock>::now_ms",
        )
        # `admit` is inlined into `begin` in some builds: then `begin` less the snapshot.
        auth = (
            incl("tldsnap::api::admit_now")
            or incl("tldsnap::api::admit::{{closure}}")
            or incl("tldsnap::api::begin::{{closure}}") - incl("tldsnap::api::snapshot")
        ) - rate
        # `spend_now` may be inlined: then its parts are counted.
        credits = (
            incl("tldsnap::access::Access::spend_now")
            or incl("tldsnap::access::Access::spend_n::{{closure}}")
            or incl("tldsnap::access::month::MonthCounter::try_add")
        )
        # (itoa is not counted here: hyper formats `Content-Length` with it too.)
        render_in_answer = incl("re:^tldsnap::json::write_")
        headers = incl("tldsnap::api::answer_headers", "tldsnap::api::answers::Cached::with_elapsed")
        # The query: the parameters, the plan, the snapshot and the body, or the kept
        # answer that stands for all of them.
        answer = incl(
            "tldsnap::api::prices::answer",
            "re:^tldsnap::api::catalogue::answer",
            "tldsnap::api::answers::get",
            "tldsnap::api::answers::put",
        ) + sum(
            called(f, "std::thread::local::LocalKey<T>::with")
            for f in (
                "tldsnap::api::answered",
                "tldsnap::api::prices::endpoint",
                "tldsnap::app::routes::now",
                "tldsnap::app::answer_now",
            )
        )
        # (`answers::get` is inlined into `answered`, and that into the route's closure
        # in some builds: the kept answer's thread-local table is the `LocalKey::with`
        # they call.)
        query = answer - render_in_answer
        render = render_in_answer + headers
        rows = [
            ("parse", parse_),
            ("route", route),
            ("auth", auth),
            ("rate", rate),
            ("credits", credits),
            ("query", query),
            ("render", render),
            ("write", write),
        ]
    # The service's own glue (its futures, dropping the request, the latency clock,
    # metrics) is inlined into hyper's dispatcher in some builds and not in others, so
    # it is counted with the runtime, where the baseline's service is counted too.
    rows.append(("the rest", total - sum(v for _, v in rows)))
    return rows


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    show, match = 0, ""
    if "--functions" in args:
        show = int(args[args.index("--functions") + 1])
    if "--match" in args:
        match = args[args.index("--match") + 1]
    callees_of = args[args.index("--callees") + 1] if "--callees" in args else None
    positional = []
    for a in args:
        if a.startswith("--"):
            break
        positional.append(a)
    profiles = [(positional[i], int(positional[i + 1])) for i in range(0, len(positional) - 1, 2)]
    tables = []
    for path, requests in profiles:
        total, self_cost, calls, inclusive = load(path, requests)
        tables.append((path, requests, total, stage_costs(total, calls, inclusive)))
    order = []
    for _, _, _, rows in tables:
        for stage, _ in rows:
            if stage not in order:
                order.append(stage)
    print("| stage | " + " | ".join(p.rsplit("/", 1)[-1] for p, _, _, _ in tables) + " |")
    print("|---|" + "---:|" * len(tables))
    for stage in order:
        cells = []
        for _, requests, _, rows in tables:
            value = dict(rows).get(stage)
            cells.append("" if value is None else f"{value / requests:,.0f}")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    cells = [f"**{total / requests:,.0f}**" for _, requests, total, _ in tables]
    print("| **total** | " + " | ".join(cells) + " |")
    path, requests = profiles[0]
    total, self_cost, calls, inclusive = load(path, requests)
    per = lambda x: x / requests
    if show:
        print()
        print("| function (inclusive) | instr/request | calls/request |")
        print("|---|---:|---:|")
        counts = defaultdict(int)
        for callees in calls.values():
            for callee, (n, _) in callees.items():
                counts[callee] += n
        ranked = sorted(
            (fn for fn in inclusive if match in fn), key=lambda f: inclusive[f], reverse=True
        )
        for fn in ranked[:show]:
            print(f"| `{fn[:150]}` | {per(inclusive[fn]):,.0f} | {counts[fn] / requests:.2f} |")
    if callees_of:
        for caller, callees in calls.items():
            if callees_of not in caller:
                continue
            print()
            print(f"`{caller[:150]}`: self {per(self_cost[caller]):,.0f}, inclusive {per(inclusive[caller]):,.0f}")
            for callee, (n, c) in sorted(callees.items(), key=lambda kv: -kv[1][1]):
                if c / requests >= 1:
                    print(f"    {per(c):8,.0f}  {n / requests:5.2f}x  {callee[:160]}")


if __name__ == "__main__":
    main()
