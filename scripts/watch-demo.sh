#!/usr/bin/env bash
# `coherence watch --all` against a real fleet that changes under it: two deployments of
# llama.cpp's server (the xllamacpp wheel, SmolLM2-135M) with an f16 KV cache, `prod` on PORT_A
# and `canary` on PORT_B, named in a coherence.toml with one baseline made by plain
# `determinism --repeats 2` on prod (every item answered twice: the second answer is the control;
# decode logprobs requested because the probe finds them harmless). The canary is deployed
# with a q4_0 KV cache instead: two rounds of the fleet, each checking both side by side, the
# first with the q4_0 canary (canary flagged, prod unchanged), the second after the canary is
# redeployed on the same port with f16 (both unchanged). Writes OUT (default
# runs/example-watch-fleet): coherence.toml, baseline/, history.sqlite, checks/NAME/TIME/ (a run
# folder per check), checks.jsonl (every check as printed), alerts.jsonl (what `--on-alert` was
# given: the flagged check alone), metrics-round1.prom and metrics.prom (the Prometheus metrics
# after each round), and history.html; exits non-zero when a check, the alerts or the metrics
# read otherwise than they must.
# Sizes: WATCH_ITEMS generated items in the baseline (default 60), WATCH_PROBE prompts a check
# (default 50). COHERENCE_BIN: the binary (default target/debug/coherence, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

OUT=${1:-runs/example-watch-fleet}
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

# serve NAME PORT KV: a deployment on PORT (4 slots, one thread, flash attention, the KV cache
# type KV); its pid in PID_OF_NAME.
declare -A PID_OF
serve() {
    serve_xllamacpp "$1-$3" "$2" --parallel 4 --ctx 16384 --threads 1 --cache-type "$3"
    PID_OF[$1]=${LLAMA_PIDS[-1]}
}

# restart NAME PORT KV: stop NAME's server alone, then serve it again with KV.
restart() {
    local pid=${PID_OF[$1]} kept=() p
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for p in "${LLAMA_PIDS[@]}"; do [[ $p == "$pid" ]] || kept+=("$p"); done
    LLAMA_PIDS=("${kept[@]}")
    serve "$1" "$2" "$3"
    wait_healthy "$1-$3" "$2" "${PID_OF[$1]}"
}

# round PROD CANARY: one `watch --all --once` of the fleet; each watch's status must be the one
# given, and so must the metrics file's coherence_watch_flagged. A check that is not unchanged
# appends itself to alerts.jsonl through `--on-alert`.
round() {
    local expected="prod=$1 canary=$2" got flagged
    set +e
    "$BIN" watch --all --config "$OUT/coherence.toml" --db "$DB" --once --probe "$WATCH_PROBE" \
        --total-concurrency 8 --json --metrics-file "$OUT/metrics.prom" \
        --on-alert "cat >> '$OUT/alerts.jsonl'" >"$OUT/round.jsonl"
    set -e
    cat "$OUT/round.jsonl" >>"$OUT/checks.jsonl"
    got=$(python3 -c 'import json,sys; c=dict((j["name"], j["status"]) for j in map(json.loads, open(sys.argv[1]))); print(" ".join(f"{n}={c.get(n)}" for n in ("prod", "canary")))' "$OUT/round.jsonl")
    flagged=$(python3 -c 'import re,sys; m=dict(re.findall(r"^coherence_watch_flagged\{name=\"(\w+)\"\} (\S+)$", open(sys.argv[1]).read(), re.M)); print(" ".join(f"{n}={m.get(n)}" for n in ("prod", "canary")))' "$OUT/metrics.prom")
    rm "$OUT/round.jsonl"
    log "round: $got (expected $expected); metrics flagged: $flagged"
    [[ $got == "$expected" ]]
    [[ $flagged == "prod=$([[ $1 == flagged ]] && echo 1.0 || echo 0.0) canary=$([[ $2 == flagged ]] && echo 1.0 || echo 0.0)" ]]
}

serve prod "$PORT_A" f16
serve canary "$PORT_B" q4_0
wait_healthy prod-f16 "$PORT_A" "${PID_OF[prod]}"
wait_healthy canary-q4_0 "$PORT_B" "${PID_OF[canary]}"
# Every answer computed afresh (`cache_prompt: false`, which the checks inherit): llama.cpp's
# server otherwise answers the baseline's repeat from its prompt cache, identical to the first
# answer, and a restarted (cold) server then reads further from the baseline than the repeat
# on a share of prompts although nothing changed. No --logprobs: determinism requests them
# where its probe finds them harmless. Exit 1 is determinism's gate (a prompt answered
# differently the second time): still a baseline.
"$BIN" determinism --endpoint "prod=http://127.0.0.1:$PORT_A/v1" --repeats 2 --suite generated \
    --items "$WATCH_ITEMS" --seed 3 --param cache_prompt=false --concurrency 4 \
    --out "$OUT/baseline" --quiet ||
    [[ $? == 1 ]]
logprobs=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["sampling"]; print(s["logprobs"], "-", s.get("logprobs_note"))' "$OUT/baseline/manifest.json")
log "baseline logprobs: $logprobs"
[[ $logprobs == True* ]]
cat >"$OUT/coherence.toml" <<EOF
# The fleet scripts/watch-demo.sh watches: two deployments of one model, one baseline.
[endpoint.prod]
url = "http://127.0.0.1:$PORT_A/v1"
baseline = "baseline"
concurrency = 4

[endpoint.canary]
url = "http://127.0.0.1:$PORT_B/v1"
baseline = "baseline"
concurrency = 4
EOF
round unchanged flagged
cp "$OUT/metrics.prom" "$OUT/metrics-round1.prom"
restart canary "$PORT_B" f16
round unchanged unchanged
alerted=$(python3 -c 'import json,sys; print(" ".join("%s:%s" % (j["name"], j["status"]) for j in map(json.loads, open(sys.argv[1]))))' "$OUT/alerts.jsonl")
log "alerts: $alerted (expected canary:flagged)"
[[ $alerted == canary:flagged ]]
"$BIN" history --db "$DB"
"$BIN" history --db "$DB" --html "$OUT/history.html"
log "watch demo: every check read as it must; $OUT/history.html"
