#!/usr/bin/env bash
# The identity axis on real servers (llama.cpp's server from the PyPI wheel xllamacpp, SmolLM2-135M,
# as in the demo): the same f16 deployment started twice, and the f16 deployment against itself
# with speculative decoding (the same GGUF drafting for itself), each compared over the catalogue
# with the reference's A-vs-A control and decode logprobs (chosen by coherence's probe). Writes
# runs/example-identity-f16-twice and runs/example-identity-speculative (or the folders given as
# IDENTITY_OUT_TWICE / IDENTITY_OUT_SPECULATIVE).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh
PORT_C=${PORT_C:-18005}

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_xllamacpp
setup_model
cargo build -q
coherence=./target/debug/coherence
model=$(model_path)

serve_xllamacpp kv-f16 "$PORT_A" --parallel 4 --ctx 16384 --threads 1 --cache-type f16
serve_xllamacpp kv-f16-twin "$PORT_B" --parallel 4 --ctx 16384 --threads 1 --cache-type f16
serve_xllamacpp kv-f16-draft "$PORT_C" --parallel 4 --ctx 16384 --threads 1 --cache-type f16 \
    --draft-model "$model"
wait_healthy kv-f16 "$PORT_A" "${LLAMA_PIDS[-3]}"
wait_healthy kv-f16-twin "$PORT_B" "${LLAMA_PIDS[-2]}"
wait_healthy kv-f16-draft "$PORT_C" "${LLAMA_PIDS[-1]}"

# The catalogue (100 prompts) at 128 tokens at most; the first 60 answered twice by the reference.
compare() {
    local out=$1 other=$2 port=$3
    rm -rf "$out"
    "$coherence" compare \
        --endpoint "kv-f16=http://127.0.0.1:$PORT_A/v1" \
        --endpoint "$other=http://127.0.0.1:$port/v1" \
        --suite core --max-tokens 128 --control 60 \
        --concurrency 4 --param cache_prompt=false --out "$out" || true
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("[identity] %s: identity %s; behaviour %s; same model: %s" % (sys.argv[1],
      s["identity"]["verdict"], s["behaviour"]["verdict"], s["same_model"]))' "$out/results.json"
}
compare "${IDENTITY_OUT_TWICE:-runs/example-identity-f16-twice}" kv-f16-twin "$PORT_B"
compare "${IDENTITY_OUT_SPECULATIVE:-runs/example-identity-speculative}" kv-f16-draft "$PORT_C"
