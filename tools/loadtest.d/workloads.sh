# tools/loadtest.d/workloads.sh: the workloads of the load harness, one place for
# tools/loadtest, tools/loadtest.d/callgrind and tools/loadtest.d/native: each one's
# request target and the header its requests carry, and how a load run is sent and
# ordered. Sourced after tools/lib.sh; wl_header reads HEADER (the enterprise key's
# `X-API-Key: ...`) and METERED_HEADER (the metered plan's), wrk_json WRK_CPU and
# WRK_THREADS, which the caller sets.

# The workloads, in the order a full run measures them.
WORKLOAD_NAMES=(cheapest1 public1 credits1 cheapest10 prices3x3 prices10 registrars history overview catalogue
    registrarlist registrar events tldpage home cataloguepage registrarpage apireference
    cheapest1sort cheapest1eur public1eur export)

# wl_path WORKLOAD REGISTRARS: the path and query its requests ask for (REGISTRARS: the
# three registrar keys of prices3x3, comma-separated; the first is also the registrar
# of the registrar and registrarpage workloads); fails for an unknown workload.
wl_path() {
    case $1 in
        cheapest1) echo "/api/v1/client/prices/cheapest?tlds=com&limit=5" ;;
        # The public variant of cheapest-1, sent without a key (wl_header).
        public1) echo "/api/v1/prices/cheapest?tlds=com&limit=5" ;;
        # cheapest-1 with the metered key: the same body, a fifth header (wl_header).
        credits1) wl_path cheapest1 ;;
        cheapest10) echo "/api/v1/client/prices/cheapest?tlds=com,net,org,io,ai,dev,app,xyz,info,me&limit=10" ;;
        prices3x3) echo "/api/v1/client/prices?tlds=com,net,org&registrars=$2" ;;
        # Prices for 10 TLDs x every registrar.
        prices10) echo "/api/v1/client/prices?tlds=com,net,org,io,ai,dev,app,xyz,info,me" ;;
        registrars) echo "/api/v1/client/registrars/tld/com?include_prices=true" ;;
        # com's whole history, every registrar; com's overview.
        history) echo "/api/v1/client/history/tld/com" ;;
        overview) echo "/api/v1/client/overview/tld/com" ;;
        # The catalogue's first page (100 TLDs by name, the default page).
        catalogue) echo "/api/v1/client/tlds" ;;
        # The registrar endpoints: the list, and one registrar's first page of prices.
        registrarlist) echo "/api/v1/registrars" ;;
        registrar) echo "/api/v1/registrars/${2%%,*}" ;;
        # A poll of the price-change events (none on a server that has not
        # swapped: the endpoint's own cost, key, rate, credit and the log's read).
        events) echo "/api/v1/client/events" ;;
        # The website's page of com with its chart (HTML, rendered once per
        # snapshot and plan, then served from memory; wrk sends no Accept-Encoding).
        tldpage) echo "/tld/com" ;;
        # The website's other pages: the home page, the catalogue and a registrar's.
        home) echo "/" ;;
        cataloguepage) echo "/tlds" ;;
        registrarpage) echo "/registrars/${2%%,*}" ;;
        # The API reference page, drawn from the OpenAPI document.
        apireference) echo "/docs/api" ;;
        # cheapest-1 ranked by the 3-year cost (a stored ranking, entries written from
        # their prices), and in euros (every price converted); the public one in euros.
        cheapest1sort) echo "/api/v1/client/prices/cheapest?tlds=com&limit=5&sort=total_3_year" ;;
        cheapest1eur) echo "/api/v1/client/prices/cheapest?tlds=com&limit=5&currency=EUR" ;;
        public1eur) echo "/api/v1/prices/cheapest?tlds=com&limit=5&currency=EUR" ;;
        # com's rows of the price grid as CSV (streamed, one chunk).
        export) echo "/api/v1/client/export?tlds=com" ;;
        *) return 1 ;;
    esac
}

# wl_header WORKLOAD: the header its requests carry: the key (the metered key for
# credits1), or nothing for the public unkeyed workload (every server of that workload
# gets none).
wl_header() {
    case $1 in
        public1 | public1eur) ;;
        credits1) printf '%s' "$METERED_HEADER" ;;
        *) printf '%s' "$HEADER" ;;
    esac
}

# wrk_json DURATION CONNS URL [HEADER [SCRIPT]]: runs wrk once, prints the JSON fields
# (without the opening brace) of report.lua's line (SCRIPT, default report.lua, ends
# with it too).
wrk_json() {
    local secs=$1 conns=$2 url=$3 header=${4:-} script=${5:-$ROOT/tools/loadtest.d/report.lua}
    local args=(-t"$WRK_THREADS" -c"$conns" -d"${secs}s" --timeout 5s -s "$script")
    [[ -n $header ]] && args+=(-H "$header")
    local line
    line=$("${WRK_CPU[@]}" wrk "${args[@]}" "$url" | grep '^WRKJSON ' || true)
    [[ -n $line ]] || die "wrk printed no result for $url"
    printf '%s' "${line#WRKJSON \{}"
}

# reversed_into NAME ITEMS...: sets the array NAME to ITEMS in the reverse order (even
# rounds run their servers so, that a drift of the machine's load within a round falls
# on both sides of a pair).
reversed_into() {
    local -n into=$1
    shift
    into=()
    local i
    for ((i = $#; i >= 1; i--)); do into+=("${!i}"); done
}

# baseline_cmd KIND BODY CONTENT_TYPE PORT [HEADERS]: sets CMD to the command that serves
# the file BODY with CONTENT_TYPE on 127.0.0.1:PORT as baseline KIND (tools/baseline,
# $BIN/tldsnap-baseline): `hyperct` (tokio's current_thread runtime, head and body sent
# with one `write`: `--flatten`, 3-4% less CPU a request than hyper's default `writev`
# of the two; the fastest honest ceiling on one core, the one ratios are quoted to),
# `hyperct-v` (hyperct with hyper's default `writev`), `hyperct-h` (hyperct sending
# the headers of the file HEADERS too, but those hyper writes itself and the content
# type) or `hyper` (the multi-thread runtime, one worker, hyper's default writes).
baseline_cmd() {
    local kind=$1 body=$2 ctype=$3 port=$4 headers=${5:-}
    local extra=() line
    case $kind in
        hyperct) extra=(--runtime current-thread --flatten) ;;
        hyperct-v) extra=(--runtime current-thread) ;;
        hyperct-h)
            extra=(--runtime current-thread --flatten)
            while IFS= read -r line; do
                line=${line%$'\r'}
                case "${line,,}" in
                    http/* | "" | date:* | content-length:* | content-type:*) ;;
                    *) extra+=(--header "$line") ;;
                esac
            done < "${headers:?hyperct-h needs the headers file}"
            ;;
        hyper) extra=(--threads 1) ;;
        *) die "unknown baseline $kind" ;;
    esac
    CMD=("$BIN/tldsnap-baseline" "${extra[@]}" --addr "127.0.0.1:$port" --body "$body"
        --content-type "$ctype")
}
