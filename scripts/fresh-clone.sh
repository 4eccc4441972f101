# Sourced by scripts/measure-fresh.sh and scripts/measure-ci.sh: a clone of this repository's
# committed HEAD in a temporary folder with every cache empty, as a fresh machine has them.
#   fresh_clone KEEP: makes $tmp (removed at exit unless KEEP is 1), points CARGO_HOME,
#     XDG_CACHE_HOME (the demo's and CI's venvs live under ~/.cache) and PIP_CACHE_DIR into it,
#     clones HEAD into $tmp/coherence, cds there and sets $commit. The Rust toolchain itself
#     (rustup's) is reused: a fresh machine has it. Uncommitted changes are not measured.
#   stamp LOG COMMAND...: COMMAND with its output shown as it comes and kept in LOG, each line
#     prefixed by the seconds since fresh_clone.
#   machine: the CPU model, core count and memory, on one line.

fresh_clone() {
    local keep=$1 repo
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/coherence-fresh.XXXXXX")
    if ((keep)); then
        echo "[measure] keeping $tmp" >&2
    else
        trap 'rm -rf "$tmp"' EXIT
    fi
    trap 'exit 130' INT TERM
    export CARGO_HOME=$tmp/cargo-home XDG_CACHE_HOME=$tmp/cache PIP_CACHE_DIR=$tmp/cache/pip
    export PATH=$HOME/.cargo/bin:$PATH
    unset CARGO_TARGET_DIR COHERENCE_DEMO_DIR RUSTC_WRAPPER
    mkdir -p "$CARGO_HOME" "$XDG_CACHE_HOME"
    git clone --quiet "$repo" "$tmp/coherence"
    cd "$tmp/coherence"
    commit=$(git rev-parse --short HEAD)
    fresh_start=$SECONDS
}

stamp() {
    local log=$1
    shift
    "$@" 2>&1 | while IFS= read -r line; do
        printf '%5d %s\n' "$((SECONDS - fresh_start))" "$line"
    done | tee "$log"
    return "${PIPESTATUS[0]}"
}

machine() {
    echo "$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB"
}
