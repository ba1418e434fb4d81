# tools/lib.sh: what the harness scripts (tools/loadtest, tools/cluster, tools/apicheck)
# share. Sourced after `set -euo pipefail`, with ROOT (the checkout) and TOOL (the
# script's name, for its log lines) set; defines TARGET, PROFILE, CARGO_PROFILE, log and
# die.

TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
# TLDSNAP_PROFILE=debug uses the binaries of `cargo build` / `cargo test` in target/debug
# instead of the release ones (CI, whose test step has just built them: a release build
# would add minutes to a check that needs no speed).
PROFILE="${TLDSNAP_PROFILE:-release}"
CARGO_PROFILE=$([[ $PROFILE == debug ]] && echo dev || echo "$PROFILE")

log() { printf '[%s %s] %s\n' "$TOOL" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
