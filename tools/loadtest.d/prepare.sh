# tools/loadtest.d/prepare.sh: what tools/loadtest.d/callgrind and tools/loadtest.d/native
# need before they measure, and how they start each server. Sourced after
# `set -euo pipefail`, tools/lib.sh and workloads.sh, with ROOT, BIN, WORK, OUT, DATA (a
# scratch directory), WORKLOADS, PID and cleanup set. Sets DS, HEADER, METERED_HEADER,
# BODIES, wait_ready and server_cmd.
#
# The snapshot, keys file and response bodies come from target/loadtest/work, which
# tools/loadtest leaves behind (dataset "real", else "s"); what is missing there (no run
# yet, or a workload the run did not fetch) is made here: the real snapshot and each
# body (with its headers), fetched from tldsnap itself (it must be a 200). The plans are
# always tools/loadtest.d/plans.json's, and the keys new (an enterprise key and a
# metered one).

# ---------------------------------------------------------------- what the runs need
DS=real
[[ -f "$WORK/real.snap" ]] || [[ ! -f "$WORK/s.snap" ]] || DS=s
if [[ ! -f "$WORK/$DS.snap" ]]; then
    "$BIN/tldsnap" build --input "$ROOT/snapshots/source" --output "$WORK/real.snap" > /dev/null
fi
# The plans of tools/loadtest: metering on, never refusing (`metered` with a credit
# limit too large to reach).
cp "$ROOT/tools/loadtest.d/plans.json" "$WORK/plans.json"
# Fresh keys on the keys file (the harness's own keys were shown only once).
new_key() { # PLAN
    local key
    key=$("$BIN/tldsnap" keys add --keys "$WORK/keys.json" --plans "$WORK/plans.json" --plan "$1" \
        --label callgrind 2> /dev/null | tail -1 | tr -d '[:space:]')
    [[ -n $key ]] || { echo "tldsnap keys add printed no key" >&2; exit 1; }
    printf 'X-API-Key: %s' "$key"
}
HEADER=$(new_key enterprise)
METERED_HEADER=$(new_key metered)
BODIES="$WORK/bodies/$DS"
mkdir -p "$BODIES"

# wait_ready URL [HEADER]: polls until URL answers 2xx, or fails when PID died or 60 s passed.
wait_ready() {
    local url=$1 header=${2:-} i
    for i in $(seq 1 600); do
        curl -sf -o /dev/null ${header:+-H "$header"} "$url" && return 0
        kill -0 "$PID" 2> /dev/null || return 1
        sleep 0.1
    done
    return 1
}

missing=()
for wl in "${WORKLOADS[@]}"; do
    wl_path "$wl" x > /dev/null || { echo "unknown workload $wl" >&2; exit 2; }
    [[ -f "$BODIES/$wl.json" && -f "$BODIES/$wl.headers" && -f "$BODIES/.registrars" ]] || missing+=("$wl")
done
if ((${#missing[@]})); then
    port=$(free_port)
    "$BIN/tldsnap" serve --threads 1 --snapshot "$WORK/$DS.snap" --addr "127.0.0.1:$port" \
        --keys "$WORK/keys.json" --plans "$WORK/plans.json" --data-dir "$DATA" > "$OUT/fetch.log" 2>&1 &
    PID=$!
    wait_ready "http://127.0.0.1:$port/readyz" || { cat "$OUT/fetch.log" >&2; exit 1; }
    fetch() { # NAME PATH
        local code
        local hdr
        hdr=$(wl_header "$1")
        code=$(curl -s -o "$BODIES/$1.json" -D "$BODIES/$1.headers" -w '%{http_code}' ${hdr:+-H "$hdr"} "http://127.0.0.1:$port$2")
        [[ $code == 200 ]] || { echo "GET $2 answered $code" >&2; exit 1; }
    }
    if [[ ! -f "$BODIES/.registrars" ]]; then
        fetch registrars "$(wl_path registrars)"
        # The three registrars of the prices workload: the three cheapest for com.
        python3 -c 'import json,sys; print(",".join(r["key"] for r in json.load(open(sys.argv[1]))["registrars"][:3]))' \
            "$BODIES/registrars.json" > "$BODIES/.registrars"
    fi
    for wl in "${missing[@]}"; do
        fetch "$wl" "$(wl_path "$wl" "$(cat "$BODIES/.registrars")")"
    done
    cleanup
    PID=""
fi

# server_cmd NAME WORKLOAD PORT: sets CMD to the command that serves WORKLOAD as server
# NAME on 127.0.0.1:PORT: `tldsnap` (`serve --threads 1`, the current_thread runtime),
# one of the baselines of workloads.sh's baseline_cmd (`hyperct`, `hyperct-v`,
# `hyperct-h`, `hyper`), with the body, content type and headers of tldsnap's answer,
# or `tldsnap-b`, tldsnap run from the binary $TLDSNAP_B (another build, for an A/B of
# two builds).
server_cmd() {
    local server=$1 wl=$2 port=$3
    # The answer's content type, which the baselines send with its body.
    local ctype
    ctype=$(tr -d '\r' < "$BODIES/$wl.headers" | awk -F': ' 'tolower($1) == "content-type" {print $2}')
    local data=()
    case "$server" in
        tldsnap | tldsnap-b)
            # The events workload needs a data directory (the event log): its tldsnap
            # gets one of its own. The others run without (no usage file written once a
            # second, which under valgrind would be spread over few requests).
            [[ $wl != events ]] || data=(--data-dir "$(mktemp -d "$DATA/d.XXXX")")
            local bin="$BIN/tldsnap"
            [[ $server == tldsnap ]] || bin=${TLDSNAP_B:?tldsnap-b runs the binary \$TLDSNAP_B}
            CMD=("$bin" serve --threads 1 --snapshot "$WORK/$DS.snap" --addr "127.0.0.1:$port"
                --keys "$WORK/keys.json" --plans "$WORK/plans.json" "${data[@]}") ;;
        hyperct | hyperct-v | hyperct-h | hyper)
            baseline_cmd "$server" "$BODIES/$wl.json" "$ctype" "$port" "$BODIES/$wl.headers" ;;
        *) echo "unknown server $server" >&2; exit 2 ;;
    esac
}
