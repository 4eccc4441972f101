#!/usr/bin/env bash
# The main job, for real, on a fresh machine: two llama.cpp deployments of SmolLM2-135M that differ
# only in their KV cache (f16 vs q4_0 + flash attention), compared over the whole catalogue and then
# generated items until decided (a plain compare's default; the demo stops at 400 generated items,
# two rounds, to bound its time on a 2-core machine), 3 repeats. Extra arguments go to
# `coherence compare` (e.g. --suite core for the catalogue alone).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

demo_start=$SECONDS
echo "[demo] step 1 of 4: llama.cpp deployments (built once into .demo/; later runs skip this)" >&2
setup_llama
echo "[demo] step 2 of 4: coherence (cargo build --release; incremental after the first time)" >&2
with_heartbeat "building coherence" "$DEMO_DIR/logs/cargo-build.log" cargo build --release
echo "[demo] step 3 of 4: starting the two deployments" >&2
start_llama_pair
echo "[demo] step 4 of 4: the comparison ($(elapsed_since "$demo_start") so far)" >&2

out=runs/$(date -u +%Y%m%dT%H%M%SZ)-smollm2-kv-f16-vs-q4
# The cap applies to the demo's own choice; arguments of yours choose for themselves.
cap=()
(($#)) || cap=(--max-items 400)
set +e
./target/release/coherence compare \
    --endpoint "kv-f16=http://127.0.0.1:$PORT_A/v1" \
    --endpoint "kv-q4=http://127.0.0.1:$PORT_B/v1" \
    --repeats 3 --concurrency 1 "${cap[@]}" --out "$out" "$@"
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
exit "$code"
