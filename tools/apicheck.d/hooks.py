"""schemathesis hooks of tools/apicheck: the rules no schema can state.

Positive cases

Three answers depend on more than the one value a schema describes, so a request that
the document allows is still refused with a 400 that is right:

- `at` after the snapshot's data date (the prices of a day not yet seen);
- `from` after `to` (an empty window);
- `cursor`: only a `next_cursor` this snapshot handed out for the same listing is a
  cursor (a well-formed one of another listing or snapshot is a 400 naming it);
- `after` on the event endpoints: only an event id this server handed out (or 0) is a
  place to resume from; one past the last id, or before the retention, is 410
  `cursor_expired` (tests/http_events.rs);
- a webhook `url`: the document can say its form (http or https, printable ASCII),
  not whether its host resolves to an address the server delivers to. Positive cases
  get `http://127.0.0.1:9/apicheck` (the server runs with --allow-private-webhooks;
  port 9 answers nothing, so a test message fails fast and nothing leaves the
  machine: no generated host name is ever looked up). Negative cases are sent as
  generated: a url outside the pattern is refused before any lookup.

A fourth: a `{domain}` that is a public suffix alone (`co.uk`, `a.ck` under the PSL's
`*.ck`) is a 400 `invalid_parameter`, and which names are suffixes is the Public Suffix
List's to say, not a pattern's.

For the cases schemathesis generates as *valid* (positive mode) this hook makes them
valid for those rules too: a `{domain}` gets a `www.` label in front (a name under any
suffix), `at` is moved back to the data date, `from` and `to` are
swapped, an event `after` becomes 0, and a made-up cursor is dropped (the stateful paging of real cursors is tested
by tests/http_api.rs). Negative cases are sent as generated, so every malformed value
is still checked for its 400. That these three rules answer 400 is tested in
tests/http_malformed.rs and tests/history_at.rs.

Negative cases

A TLD name or a searched name may be written in Unicode: the server takes every name
that IDNA (UTS 46) maps, in any script, and no regular expression can list those. The
document's patterns name the letters that are always valid (Latin-1, Cyrillic, CJK), so
a negative case drawn from other Unicode letters may be a name the server rightly
answers. In negative cases, a name value (`tlds` items, the path's `{tld}` and
`{domain}`, the search's `q`) that holds a character outside ASCII gets a `!` appended: still outside the
pattern, and certainly not a name, so the server must refuse it. Every other negative
value is sent as generated.
"""

import os
import re

import schemathesis
from schemathesis.generation.modes import GenerationMode

DATA_DAY = os.environ["APICHECK_DATA_DAY"]  # YYYY-MM-DD of the served snapshot
DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


NAME_PARAMETERS = ("tlds", "q")
WEBHOOK_URL = "http://127.0.0.1:9/apicheck"
PATH_NAME_PARAMETERS = ("tld", "domain")


def _mode(case):
    meta = getattr(case, "meta", None)
    return None if meta is None else meta.generation.mode


def _not_a_name(value):
    if isinstance(value, str) and not value.isascii():
        return value + "!"
    if isinstance(value, list):
        return [_not_a_name(v) for v in value]
    return value


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    mode = _mode(case)
    if mode == GenerationMode.NEGATIVE:
        for name in PATH_NAME_PARAMETERS:
            if case.path_parameters and name in case.path_parameters:
                case.path_parameters[name] = _not_a_name(case.path_parameters[name])
        if case.query:
            for name in NAME_PARAMETERS:
                if name in case.query and not (name == "q" and "domains/search" not in case.operation.path):
                    case.query[name] = _not_a_name(case.query[name])
        return
    if mode == GenerationMode.POSITIVE and isinstance(case.body, dict) and "url" in case.body:
        case.body["url"] = WEBHOOK_URL
    domain = (case.path_parameters or {}).get("domain")
    # Only while the name stays short: a name over 253 characters (in its xn-- form,
    # longer than the Unicode one) is a 400 of its own.
    if mode == GenerationMode.POSITIVE and isinstance(domain, str) and len(domain) <= 120:
        name = domain.strip(" \t")
        case.path_parameters["domain"] = "www." + (name[1:] if name.startswith(".") else name)
    query = case.query
    if not query or mode != GenerationMode.POSITIVE:
        return
    at = query.get("at")
    if isinstance(at, str) and DAY.match(at) and at > DATA_DAY:
        query["at"] = DATA_DAY
    start, end = query.get("from"), query.get("to")
    if isinstance(start, str) and isinstance(end, str) and DAY.match(start) and DAY.match(end) and start > end:
        query["from"], query["to"] = end, start
    query.pop("cursor", None)
    if "/events" in case.operation.path and "after" in query:
        query["after"] = 0
