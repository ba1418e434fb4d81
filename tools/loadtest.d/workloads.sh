# tools/loadtest.d/workloads.sh: the workloads of the load harness, one place for
# tools/loadtest and tools/loadtest.d/callgrind: each one's request target and the
# header its requests carry. Sourced; wl_header reads HEADER (the enterprise key's
# `X-API-Key: ...`) and METERED_HEADER (the metered plan's), which the caller sets.

# The workloads, in the order a full run measures them.
WORKLOAD_NAMES=(cheapest1 public1 credits1 cheapest10 prices3x3 prices10 registrars history overview catalogue
    registrarlist registrar events tldpage home cataloguepage registrarpage)

# wl_path WORKLOAD REGISTRARS: the path and query its requests ask for (REGISTRARS: the
# three registrar keys of prices3x3, comma-separated; the first is also the registrar
# of the registrar and registrarpage workloads); fails for an unknown workload.
wl_path() {
    case $1 in
        cheapest1) echo "/api/v1/client/prices/cheapest?tlds=com&limit=5" ;;
        # Issue 20: the public variant of cheapest-1, sent without a key (wl_header).
        public1) echo "/api/v1/prices/cheapest?tlds=com&limit=5" ;;
        # cheapest-1 with the metered key: the same body, a fifth header (wl_header).
        credits1) wl_path cheapest1 ;;
        cheapest10) echo "/api/v1/client/prices/cheapest?tlds=com,net,org,io,ai,dev,app,xyz,info,me&limit=10" ;;
        prices3x3) echo "/api/v1/client/prices?tlds=com,net,org&registrars=$2" ;;
        # Issue 20: prices for 10 TLDs x every registrar.
        prices10) echo "/api/v1/client/prices?tlds=com,net,org,io,ai,dev,app,xyz,info,me" ;;
        registrars) echo "/api/v1/client/registrars/tld/com?include_prices=true" ;;
        # Issue 17: com's whole history, every registrar; com's overview.
        history) echo "/api/v1/client/history/tld/com" ;;
        overview) echo "/api/v1/client/overview/tld/com" ;;
        # Issue 17: the catalogue's first page (100 TLDs by name, the default page).
        catalogue) echo "/api/v1/client/tlds" ;;
        # The registrar endpoints: the list, and one registrar's first page of prices.
        registrarlist) echo "/api/v1/registrars" ;;
        registrar) echo "/api/v1/registrars/${2%%,*}" ;;
        # Issue 18: a poll of the price-change events (none on a server that has not
        # swapped: the endpoint's own cost, key, rate, credit and the log's read).
        events) echo "/api/v1/client/events" ;;
        # Issue 12: the website's page of com with its chart (HTML, rendered once per
        # snapshot and plan, then served from memory; wrk sends no Accept-Encoding).
        tldpage) echo "/tld/com" ;;
        # Issue 12: the website's other pages: the home page, the catalogue and a registrar's.
        home) echo "/" ;;
        cataloguepage) echo "/tlds" ;;
        registrarpage) echo "/registrars/${2%%,*}" ;;
        *) return 1 ;;
    esac
}

# wl_header WORKLOAD: the header its requests carry: the key (the metered key for
# credits1), or nothing for the public unkeyed workload (every server of that workload
# gets none).
wl_header() {
    case $1 in
        public1) ;;
        credits1) printf '%s' "$METERED_HEADER" ;;
        *) printf '%s' "$HEADER" ;;
    esac
}
