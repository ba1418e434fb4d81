# tools/lib.sh: what the harness scripts (tools/loadtest, tools/cluster, tools/apicheck)
# share, and tools/loadtest.d/callgrind. Sourced after `set -euo pipefail`, with ROOT
# (the checkout) and TOOL (the script's name, for its log lines) set; defines TARGET,
# PROFILE, CARGO_PROFILE, log, die and free_port.

TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
# TLDSNAP_PROFILE=debug uses the binaries of `cargo build` / `cargo test` in target/debug
# instead of the release ones (CI, whose test step has just built them: a release build
# would add minutes to a check that needs no speed).
PROFILE="${TLDSNAP_PROFILE:-release}"
CARGO_PROFILE=$([[ $PROFILE == debug ]] && echo dev || echo "$PROFILE")

log() { printf '[%s %s] %s\n' "$TOOL" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# free_port: a TCP port of 127.0.0.1 that was free a moment ago.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
