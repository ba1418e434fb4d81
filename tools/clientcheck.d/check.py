"""tools/clientcheck's Python half (run in its virtual environment).

    check.py generate DOC OUT ALLOWED...     openapi-python-client on DOC into OUT/tldsnap_client;
                                             fails on any warning or error not in ALLOWED
    check.py ts-log LOG ALLOWED...           the same for openapi-typescript's output
    check.py calls URL KEY OUT               the generated client against the server; writes
                                             OUT/samples.ts (the bodies, as typed constants)
    check.py mutate DOC OUT                  DOC with one field renamed per main response
                                             schema; prints the old names (usage.ts must fail)

An ALLOWED entry is one warning as `normalise` writes it ("METHOD PATH: detail" or
"schema POINTER: detail"); an entry that no warning matched fails the run too (the list
is stale).
"""

import datetime
import enum
import importlib
import json
import pathlib
import pkgutil
import re
import sys
import time


def fail(msg):
    print(f"clientcheck: {msg}", file=sys.stderr)
    sys.exit(1)


def check_allowed(found, allowed, tool):
    unexpected = [w for w in found if w not in allowed]
    stale = [a for a in allowed if a not in found]
    for w in unexpected:
        print(f"clientcheck: {tool}: {w}", file=sys.stderr)
    for a in stale:
        print(f"clientcheck: {tool}: the allowed warning {a!r} did not occur (remove it)", file=sys.stderr)
    if unexpected or stale:
        fail(f"{tool}: {len(unexpected)} warning(s) not allowed, {len(stale)} allowed one(s) stale")


# ---------------------------------------------------------------- generate (Python)


def normalise(err):
    """One line per generator warning or error."""
    header = " ".join(str(err.header).split())
    # The generator writes an object's repr, with its address, for a status code.
    detail = re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "<...>", " ".join(str(err.detail or "").split()))
    m = re.fullmatch(r"WARNING parsing (\w+) (\S+) within \S+\.", header)
    if m:
        return f"{m[1]} {m[2]}: {detail}"
    m = re.fullmatch(r"Unable to process schema (\S+):", header)
    if m:
        return f"schema {m[1]}: {detail}"
    return f"{err.level.value} {header}: {detail}"


def generate(doc, out, allowed):
    from openapi_python_client import generate as run
    from openapi_python_client.config import Config, ConfigFile, MetaType

    out = pathlib.Path(out)
    package = out / "tldsnap_client"
    # No post hooks: ruff would only format the code (and hide nothing: a syntax error
    # fails the import of every module below).
    config_file = ConfigFile(post_hooks=[], package_name_override="tldsnap_client", project_name_override="tldsnap-client")
    config = Config.from_sources(config_file, MetaType.NONE, pathlib.Path(doc), "utf-8", True, package)
    errors = run(config=config)
    found = [normalise(e) for e in errors]
    if any(e.level.value == "error" for e in errors):
        for w in found:
            print(f"clientcheck: openapi-python-client: {w}", file=sys.stderr)
        fail("openapi-python-client: the client was not generated")
    check_allowed(found, allowed, "openapi-python-client")
    # Every module imports (a template that writes invalid Python fails here).
    sys.path.insert(0, str(out))
    modules = 0
    for sub in ("tldsnap_client.models", "tldsnap_client.api.default"):
        pkg = importlib.import_module(sub)
        for info in pkgutil.iter_modules(pkg.__path__):
            try:
                importlib.import_module(f"{sub}.{info.name}")
            except Exception as e:  # noqa: BLE001 (any failure is the finding)
                fail(f"openapi-python-client wrote a module that does not import: {sub}.{info.name}: {type(e).__name__}: {e}")
            modules += 1
    ops = sum(1 for _ in pkgutil.iter_modules(importlib.import_module("tldsnap_client.api.default").__path__))
    print(f"python client: {ops} operations, {modules - ops} model modules, all import; warnings allowed: {len(allowed)}")


def ts_log(log, allowed):
    text = pathlib.Path(log).read_text()
    found = []
    for line in text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if not line or line.startswith("✨ openapi-typescript") or line.startswith("🚀"):
            continue
        found.append(line.lstrip("⚠ ").strip())
    check_allowed(found, allowed, "openapi-typescript")


# ---------------------------------------------------------------- calls


def union_parts(ann):
    """The members of an annotation's top-level union: "list[int] | None" -> ["list[int]", "None"]."""
    parts, depth, cur = [], 0, ""
    for ch in ann:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "|" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p and p != "Unset"]


PRIMITIVES = {"None": (type(None),), "str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "Literal[True]": (bool,)}


def item_annotation(ann):
    lists = [p for p in union_parts(ann) if p.startswith("list[")]
    return lists[0][5:-1] if len(lists) == 1 else "Any"


class Checker:
    def __init__(self):
        from tldsnap_client.types import Unset

        self.Unset = Unset
        self.problems = []
        self.datetimes = 0
        self.typed = 0

    def bad(self, path, msg):
        self.problems.append(f"{path}: {msg}")

    def walk(self, obj, raw, path, ann="Any"):
        """The parsed `obj` holds what the server sent (`raw`), field by field."""
        import attrs

        if attrs.has(type(obj)):
            if not isinstance(raw, dict):
                return self.bad(path, f"{type(obj).__name__} parsed from a {type(raw).__name__}")
            seen = set()
            extra_ann = "dict[str, Any]"
            for f in attrs.fields(type(obj)):
                if f.name == "additional_properties":
                    extra_ann = str(f.type)
                    continue
                key = f.name if f.name in raw else f.name.rstrip("_")
                value = getattr(obj, f.name)
                if isinstance(value, self.Unset):
                    if key in raw:
                        self.bad(f"{path}.{key}", f"UNSET in {type(obj).__name__}, but the server sent it")
                    continue
                if key not in raw:
                    self.bad(f"{path}.{key}", f"set in {type(obj).__name__} ({value!r}), but the server did not send it")
                    continue
                seen.add(key)
                self.walk(value, raw[key], f"{path}.{key}", str(f.type))
            extra = obj.additional_properties
            if extra_ann == "dict[str, Any]":
                # A model with fields of its own: what lands here is a field the
                # document does not describe (or a renamed one).
                if extra:
                    self.bad(path, f"fields {type(obj).__name__} does not know: {sorted(extra)}")
            else:
                for k, v in extra.items():
                    self.walk(v, raw.get(k), f"{path}[{k!r}]", extra_ann)
            return
        if isinstance(obj, list):
            if not isinstance(raw, list) or len(raw) != len(obj):
                return self.bad(path, "list differs")
            for i, (o, r) in enumerate(zip(obj, raw)):
                self.walk(o, r, f"{path}[{i}]", item_annotation(ann))
            return
        if isinstance(obj, dict):
            if "dict[" not in ann and ann != "Any":
                return self.bad(path, f"left a plain dict where the model says {ann} (it did not parse)")
            if obj != raw:
                self.bad(path, "dict differs")
            return
        if isinstance(obj, enum.Enum):
            if obj.value != raw:
                self.bad(path, f"{obj!r} for {raw!r}")
            return
        if isinstance(obj, datetime.datetime):
            if not isinstance(raw, str) or datetime.datetime.fromisoformat(raw.replace("Z", "+00:00")) != obj:
                self.bad(path, f"{obj!r} for {raw!r}")
            self.datetimes += 1
            return
        if isinstance(obj, datetime.date):
            if obj.isoformat() != raw:
                self.bad(path, f"{obj!r} for {raw!r}")
            return
        if obj != raw or isinstance(obj, bool) != isinstance(raw, bool) or (raw is None) != (obj is None):
            return self.bad(path, f"{obj!r} for {raw!r}")
        # The generated from_dict copies a number, string or boolean as it comes: its
        # annotation is what says whether the document allows it.
        parts = union_parts(ann)
        if all(p in PRIMITIVES for p in parts):
            types = tuple(t for p in parts for t in PRIMITIVES[p])
            if not isinstance(obj, types) or (isinstance(obj, bool) and bool not in types):
                self.bad(path, f"{obj!r} where the model says {ann}")
            else:
                self.typed += 1

    def same_json(self, a, b, path):
        """to_dict()'s JSON is the server's, modulo key order and the spelling of a
        date-time (the model writes `+00:00` where the server wrote `.000Z`)."""
        if isinstance(a, dict) and isinstance(b, dict):
            if set(a) != set(b):
                return self.bad(path, f"to_dict() keys {sorted(set(a) ^ set(b))} differ")
            for k in a:
                self.same_json(a[k], b[k], f"{path}.{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                self.same_json(x, y, f"{path}[{i}]")
        elif isinstance(a, str) and isinstance(b, str) and a != b:
            try:
                same = datetime.datetime.fromisoformat(a) == datetime.datetime.fromisoformat(b.replace("Z", "+00:00"))
            except ValueError:
                same = False
            if not same:
                self.bad(path, f"to_dict() {a!r}, server {b!r}")
        elif a != b or isinstance(a, bool) != isinstance(b, bool):
            self.bad(path, f"to_dict() {a!r}, server {b!r}")


def calls(url, key, out):
    out = pathlib.Path(out)
    sys.path.insert(0, str(out))
    from tldsnap_client import AuthenticatedClient, Client
    from tldsnap_client.api.default import (
        client_cheapest,
        client_events,
        client_export,
        client_history,
        client_overview,
        client_prices,
        client_registrars,
        client_tlds,
        create_webhook,
        delete_webhook,
        domains_lookup,
        domains_search,
        get_webhook,
        list_webhooks,
        portfolio_audit,
        public_cheapest,
        registrar,
        registrar_list,
        rotate_webhook_secret,
        update_webhook,
    )
    from tldsnap_client import models
    from tldsnap_client.models.client_cheapest_sort import ClientCheapestSort
    from tldsnap_client.models.currency_code import CurrencyCode
    from tldsnap_client.models.client_tlds_sort import ClientTldsSort

    keyed = AuthenticatedClient(base_url=url, token=key, prefix="", auth_header_name="X-API-Key", raise_on_unexpected_status=True, timeout=30)
    public = Client(base_url=url, raise_on_unexpected_status=True, timeout=30)
    check = Checker()
    samples = []  # (TypeScript type, name, body)
    summary = []
    answers = 0
    started = time.monotonic()

    def call(name, module, model, status=200, client=keyed, ts=None, **kwargs):
        nonlocal answers
        answers += 1
        try:
            r = module.sync_detailed(client=client, **kwargs)
        except Exception as e:  # noqa: BLE001 (an undocumented status, a body from_dict cannot read)
            check.bad(name, f"the generated client raised {type(e).__name__}: {e}")
            return None
        before = len(check.problems)
        if r.status_code != status:
            check.bad(name, f"status {r.status_code}, expected {status}: {r.content[:300]!r}")
            return None
        if not isinstance(r.parsed, model):
            check.bad(name, f"parsed as {type(r.parsed).__name__}, expected {model.__name__}")
            return None
        raw = json.loads(r.content)
        check.walk(r.parsed, raw, name)
        check.same_json(r.parsed.to_dict(), raw, name)
        if ts:
            samples.append((ts, name, raw))
        summary.append(f"  {name}: {status} {model.__name__}{'' if len(check.problems) == before else ' FAILED'}")
        return r.parsed

    cheapest_op = 'paths["/api/v1/client/prices/cheapest"]["get"]'
    ok = '["responses"][200]["content"]["application/json"]'

    # Cheapest, in euros, ranked by three years' cost.
    c = call("clientCheapest(com, EUR, total_3_year)", client_cheapest, models.CheapestClient, ts=cheapest_op + ok,
             tlds=["com"], currency=CurrencyCode.EUR, sort=ClientCheapestSort.TOTAL_3_YEAR, limit=5)
    if c is not None and (isinstance(c.meta.currency, check.Unset) or c.meta.currency.code != "EUR"):
        check.bad("clientCheapest(com, EUR, total_3_year)", "no meta.currency EUR")

    # Exception (generator): openapi-python-client sends an array query parameter
    # exploded (`tlds=com&tlds=net`), whatever `explode: false` says; the server refuses
    # a repeated parameter (400). Callers pass the comma-joined list as one value. When
    # the exploded form stops being refused, this exception is stale.
    r = client_cheapest.sync_detailed(client=keyed, tlds=["com", "net"])
    if r.status_code != 400 or b"more than once" not in r.content:
        check.bad("clientCheapest(tlds=[com, net])", f"status {r.status_code}: the exploded list is no longer refused; drop the workaround")
    c = call("clientCheapest(com,net)", client_cheapest, models.CheapestClient, tlds=["com,net"])
    if c is not None and sorted(c.results.additional_keys) != ["com", "net"]:
        check.bad("clientCheapest(com,net)", f"results for {c.results.additional_keys}")

    call("publicCheapest(com,io; no key)", public_cheapest, models.CheapestPublic, client=public,
         ts='paths["/api/v1/prices/cheapest"]["get"]' + ok, tlds=["com,io"])
    call("clientPrices(com,io, EUR)", client_prices, models.Prices, ts='paths["/api/v1/client/prices"]["get"]' + ok,
         tlds=["com,io"], currency=CurrencyCode.EUR)
    call("clientRegistrars(com, prices, EUR)", client_registrars, models.Registrars,
         ts='paths["/api/v1/client/registrars/tld/{tld}"]["get"]' + ok, tld="com", include_prices=True, currency=CurrencyCode.EUR)
    call("clientOverview(com, EUR)", client_overview, models.Overview,
         ts='paths["/api/v1/client/overview/tld/{tld}"]["get"]' + ok, tld="com", currency=CurrencyCode.EUR)
    call("clientHistory(com)", client_history, models.History,
         ts='paths["/api/v1/client/history/tld/{tld}"]["get"]' + ok, tld="com")
    call("clientTlds(limit 20, cheapest)", client_tlds, models.Catalogue,
         ts='paths["/api/v1/client/tlds"]["get"]' + ok, limit=20, sort=ClientTldsSort.CHEAPEST)

    # The whole catalogue, page by page through next_cursor; an unsold TLD (no pick)
    # for the overview below.
    cursor, pages, entries, unsold = None, 0, 0, None
    while True:
        kw = {"limit": 500, "sort": ClientTldsSort.NAME}
        if cursor:
            kw["cursor"] = cursor
        page = call(f"clientTlds(page {pages + 1})", client_tlds, models.Catalogue, **kw)
        if page is None:
            break
        pages += 1
        entries += len(page.tlds)
        for t in page.tlds:
            if unsold is None and t.cheapest_register is None:
                unsold = t.tld
        cursor = page.meta.next_cursor
        if cursor is None or pages > 20:
            break
    if page is not None and entries != page.meta.total:
        check.bad("clientTlds", f"{entries} entries over {pages} pages, meta.total {page.meta.total}")
    summary.append(f"  clientTlds: {pages} pages, {entries} TLDs")
    if unsold:
        call(f"clientOverview({unsold}, unsold)", client_overview, models.Overview,
             ts='paths["/api/v1/client/overview/tld/{tld}"]["get"]' + ok, tld=unsold)

    heads = call("registrarList", registrar_list, models.RegistrarList, client=public,
                 ts='paths["/api/v1/registrars"]["get"]' + ok)
    if heads is not None and heads.registrars:
        first = heads.registrars[0].key
        call(f"registrar({first}, EUR)", registrar, models.Registrar, ts='paths["/api/v1/registrars/{key}"]["get"]' + ok,
             key=first, limit=20, currency=CurrencyCode.EUR)

    # The export: CSV (the generated client hands back the body as it came).
    r = client_export.sync_detailed(client=keyed, tlds=["com"])
    if r.status_code != 200 or not r.headers.get("content-type", "").startswith("text/csv") or not r.content.startswith(b"tld,registrar,"):
        check.bad("clientExport(com)", f"status {r.status_code}, {r.headers.get('content-type')}: {r.content[:80]!r}")
    else:
        rows = r.content.count(b"\n") - 1
        summary.append(f"  clientExport(com): 200 text/csv, {rows} rows")
    answers += 1

    # The domain owner's endpoints, with JSON bodies (the audit's CSV form is not
    # generated: an exception of tools/clientcheck).
    item = models.AuditRequestDomainsItemType1(name="shop.example.co.uk", registrar="dynadot", renew_price=15.5)
    call("portfolioAudit(JSON)", portfolio_audit, models.AuditAnswer,
         ts='paths["/api/v1/client/portfolio/audit"]["post"]' + ok,
         body=models.AuditRequest(domains=["example.com", item, "not a domain"]), currency=CurrencyCode.EUR)
    call("domainsLookup", domains_lookup, models.LookupAnswer, ts='paths["/api/v1/client/domains/lookup"]["post"]' + ok,
         body=models.DomainsLookupBody(domains=["example.com", "example.co.uk", "nope"]), limit=3)
    call("domainsSearch(coffee shop)", domains_search, models.SearchAnswer,
         ts='paths["/api/v1/client/domains/search"]["get"]' + ok, q="coffee shop", limit=5)

    # The event log (empty: the server swaps no snapshot here) and a webhook
    # subscription's life, whose answers extend Webhook by allOf (its secret, its
    # attempts). Its URL is loopback, and nothing is delivered to it: no event happens.
    call("clientEvents", client_events, models.EventPage, ts='paths["/api/v1/client/events"]["get"]' + ok, limit=10)
    hook = call("createWebhook", create_webhook, models.WebhookCreated, status=201,
                ts='paths["/api/v1/client/webhooks"]["post"]["responses"][201]["content"]["application/json"]',
                body=models.WebhookCreate(url="http://127.0.0.1:9/clientcheck", description="clientcheck", tlds=["com"],
                                          types=[models.WebhookCreateTypesItem.PRICE_CHANGED]))
    if hook is not None:
        if not hook.secret.startswith("whsec_"):
            check.bad("createWebhook", f"secret {hook.secret!r}")
        call("getWebhook", get_webhook, models.WebhookDetail, ts='paths["/api/v1/client/webhooks/{id}"]["get"]' + ok, id=hook.id)
        call("listWebhooks", list_webhooks, models.WebhookList, ts='paths["/api/v1/client/webhooks"]["get"]' + ok)
        call("updateWebhook(paused)", update_webhook, models.WebhookDetail, id=hook.id,
             body=models.WebhookPatch(status=models.WebhookPatchStatus.PAUSED))
        call("rotateWebhookSecret", rotate_webhook_secret, models.WebhookSecret, id=hook.id)
        r = delete_webhook.sync_detailed(client=keyed, id=hook.id)
        answers += 1
        if r.status_code != 204:
            check.bad("deleteWebhook", f"status {r.status_code}")
        summary.append(f"  deleteWebhook: {r.status_code}")

    # Refusals parse as their documented model.
    p = call("clientCheapest(limit=0)", client_cheapest, models.Problem, status=400,
             ts=cheapest_op + '["responses"][400]["content"]["application/problem+json"]', tlds=["com"], limit=0)
    if p is not None and (p.code.value != "invalid_parameter" or p.parameter != "limit"):
        check.bad("clientCheapest(limit=0)", f"code {p.code.value}, parameter {p.parameter}")
    p = call("clientOverview(unknown TLD)", client_overview, models.Problem, status=404, tld="no-such-tld")
    if p is not None and p.code.value != "unknown_tld":
        check.bad("clientOverview(unknown TLD)", f"code {p.code.value}")

    # The bodies, as constants of their generated TypeScript types (tsc checks them
    # with usage.ts: excess and missing properties, wrong types).
    lines = ['import type { paths } from "./api";', ""]
    for i, (ts, name, raw) in enumerate(samples):
        lines.append(f"// {name}")
        lines.append(f"export const sample{i}: {ts} = {json.dumps(raw, ensure_ascii=False)};")
    (out / "samples.ts").write_text("\n".join(lines) + "\n")

    print("\n".join(summary))
    print(f"python client: {answers} answers checked in {time.monotonic() - started:.1f} s "
          f"({check.typed} values checked against their annotation, {check.datetimes} date-times compared as "
          f"instants); {len(samples)} bodies written for tsc")
    if check.problems:
        for p in check.problems:
            print(f"clientcheck: {p}", file=sys.stderr)
        fail(f"{len(check.problems)} problem(s) with the generated Python client")


# ---------------------------------------------------------------- mutate

# One required field per main response schema, renamed in a copy of the document:
# usage.ts must then fail to compile at each (a check of the check).
MUTATIONS = [
    ("CheapestEntryClient", "registrar_key"),
    ("PriceRecord", "renew_price"),
    ("Registrars", "registrar_count"),
    ("Overview/allOf/1", "lowest_renew"),
    ("Change", "transfer_price"),
    ("PageMeta", "next_cursor"),
    ("TldFacts", "unicode"),
]


def mutate(doc, out):
    d = json.loads(pathlib.Path(doc).read_text())
    for pointer, field in MUTATIONS:
        s = d["components"]["schemas"]
        for part in pointer.split("/"):
            s = s[int(part)] if part.isdigit() else s[part]
        s["properties"][field + "_renamed"] = s["properties"].pop(field)
        s["required"] = [field + "_renamed" if r == field else r for r in s["required"]]
    # The export's CSV answer under another media type.
    op = d["paths"]["/api/v1/client/export"]["get"]["responses"]["200"]["content"]
    op["text/plain"] = op.pop("text/csv")
    pathlib.Path(out).write_text(json.dumps(d))
    print(" ".join([f for _, f in MUTATIONS] + ["text/csv"]))


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "generate":
        generate(args[0], args[1], args[2:])
    elif cmd == "ts-log":
        ts_log(args[0], args[1:])
    elif cmd == "calls":
        calls(*args)
    elif cmd == "mutate":
        mutate(*args)
    else:
        fail(f"unknown command {cmd}")
