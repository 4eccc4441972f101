#!/usr/bin/env bash
# `coherence watch` against a real deployment that changes under it: llama.cpp's server (the
# xllamacpp wheel, SmolLM2-135M) with an f16 KV cache, its baseline made by `determinism
# --repeats 2` (every item answered twice: the second answer is the control), checked twice;
# then the same server restarted on the same port with a q4_0 KV cache and checked (it must be
# flagged), then restarted with f16 again and checked (unchanged again). Writes OUT (default
# runs/example-watch-kv): baseline/, history.sqlite, checks/prod/TIME/ (a run folder per
# check), alerts.jsonl (what `--on-alert` was given: the flagged check alone) and history.html;
# exits non-zero when a check, or the alerts, read otherwise than they must.
# Sizes: WATCH_ITEMS generated items in the baseline (default 60), WATCH_PROBE prompts a check
# (default 50). COHERENCE_BIN: the binary (default target/debug/coherence, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

OUT=${1:-runs/example-watch-kv}
WATCH_ITEMS=${WATCH_ITEMS:-60}
WATCH_PROBE=${WATCH_PROBE:-50}
BIN=${COHERENCE_BIN:-target/debug/coherence}
[[ -x $BIN ]] || cargo build
[[ ! -e $OUT ]] || { echo "watch-demo: $OUT exists; remove it or name another" >&2; exit 2; }
mkdir -p "$OUT"
DB=$OUT/history.sqlite

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_xllamacpp
setup_model

# One deployment on PORT_A: 4 slots, one thread, flash attention, the given KV cache type.
serve() {
    serve_xllamacpp "kv-$1" "$PORT_A" --parallel 4 --ctx 16384 --threads 1 --cache-type "$1"
    wait_healthy "kv-$1" "$PORT_A" "${LLAMA_PIDS[-1]}"
}

# check EXPECTED: one `watch --once`; its status must be EXPECTED. A check that is not unchanged
# appends itself to alerts.jsonl through `--on-alert`.
check() {
    local expected=$1 status
    set +e
    "$BIN" watch prod --baseline "$OUT/baseline" --db "$DB" --once --probe "$WATCH_PROBE" \
        --concurrency 4 --json --on-alert "cat >> '$OUT/alerts.jsonl'" | tee -a "$OUT/checks.jsonl"
    set -e
    status=$(tail -n 1 "$OUT/checks.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
    log "check: $status (expected $expected)"
    [[ $status == "$expected" ]]
}

serve f16
# Every answer computed afresh (`cache_prompt: false`, which the checks inherit): llama.cpp's
# server otherwise answers the baseline's repeat from its prompt cache, identical to the first
# answer, and a restarted (cold) server then reads further from the baseline than the repeat
# on a share of prompts although nothing changed. Exit 1 is determinism's gate (a prompt
# answered differently the second time): still a baseline.
"$BIN" determinism --endpoint "prod=http://127.0.0.1:$PORT_A/v1" --repeats 2 --suite generated \
    --items "$WATCH_ITEMS" --seed 3 --logprobs --param cache_prompt=false --concurrency 4 \
    --out "$OUT/baseline" --quiet ||
    [[ $? == 1 ]]
check unchanged
check unchanged
stop_llama_pair
serve q4_0
check flagged
stop_llama_pair
serve f16
check unchanged
alerted=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["status"] for l in open(sys.argv[1])))' "$OUT/alerts.jsonl")
log "alerts: $alerted (expected flagged)"
[[ $alerted == flagged ]]
"$BIN" history prod --db "$DB"
"$BIN" history prod --db "$DB" --html "$OUT/history.html"
log "watch demo: every check read as it must; $OUT/history.html"
