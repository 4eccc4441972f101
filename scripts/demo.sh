#!/usr/bin/env bash
# The main job, for real, on a fresh machine: two llama.cpp deployments of SmolLM2-135M that differ
# only in their KV cache (f16 vs q4_0 + flash attention), compared over the whole catalogue with
# 3 repeats. Extra arguments go to `coherence compare` (e.g. --only count_letters).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_llama
echo "[demo] building coherence (release)" >&2
cargo build --release --quiet
start_llama_pair

out=runs/$(date -u +%Y%m%dT%H%M%SZ)-smollm2-kv-f16-vs-q4
set +e
./target/release/coherence compare \
    --endpoint "kv-f16=http://127.0.0.1:$PORT_A/v1" \
    --endpoint "kv-q4=http://127.0.0.1:$PORT_B/v1" \
    --repeats 3 --concurrency 1 --out "$out" "$@"
code=$?
set -e
echo
echo "[demo] report: $out/report.md and report.html (exit code $code: 0 the gate passed, 1 quality differs or a prompt failed, 3 incomplete)"
exit "$code"
