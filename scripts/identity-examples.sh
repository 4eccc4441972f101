#!/usr/bin/env bash
# The identity axis on real servers (llama.cpp's server from the PyPI wheel xllamacpp, SmolLM2-135M,
# as in the demo): the same f16 deployment started twice, and the f16 deployment against itself
# with speculative decoding (the same GGUF drafting for itself), each compared over the catalogue
# with the reference's A-vs-A control and decode logprobs (chosen by coherence's probe); and the
# same f16 pair over 80 generated items with the default growing control (`--control auto`: 30
# prompts answered twice, more after each undecided look). Writes runs/example-identity-f16-twice,
# runs/example-identity-speculative and runs/example-identity-f16-twice-growing (or the folders
# given as IDENTITY_OUT_TWICE / IDENTITY_OUT_SPECULATIVE / IDENTITY_OUT_GROWING).
#   scripts/identity-examples.sh [twice] [speculative] [growing]   (default: all three)
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

# OUT OTHER PORT FLAGS…: kv-f16 against OTHER, then the verdicts and the control's looks.
compare() {
    local out=$1 other=$2 port=$3
    shift 3
    rm -rf "$out"
    "$coherence" compare \
        --endpoint "kv-f16=http://127.0.0.1:$PORT_A/v1" \
        --endpoint "$other=http://127.0.0.1:$port/v1" \
        "$@" --concurrency 4 --param cache_prompt=false --out "$out" || true
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1] + "/results.json"))["summary"]
m = json.load(open(sys.argv[1] + "/manifest.json"))
print("[identity] %s: identity %s; behaviour %s; same model: %s; control %s, looks %s" % (sys.argv[1],
      s["identity"]["verdict"], s["behaviour"]["verdict"], s["same_model"], m.get("control"),
      m.get("control_looks", [])))' "$out"
}
CHOSEN=("$@")
wanted() { ((${#CHOSEN[@]} == 0)) || [[ " ${CHOSEN[*]} " == *" $1 "* ]]; }
# The catalogue (100 prompts) at 128 tokens at most; the first 60 answered twice by the reference.
if wanted twice; then
    compare "${IDENTITY_OUT_TWICE:-runs/example-identity-f16-twice}" kv-f16-twin "$PORT_B" \
        --suite core --max-tokens 128 --control 60
fi
if wanted speculative; then
    compare "${IDENTITY_OUT_SPECULATIVE:-runs/example-identity-speculative}" kv-f16-draft "$PORT_C" \
        --suite core --max-tokens 128 --control 60
fi
# 80 generated items (seed 2) at 64 tokens at most, the control growing until decided.
if wanted growing; then
    compare "${IDENTITY_OUT_GROWING:-runs/example-identity-f16-twice-growing}" kv-f16-twin "$PORT_B" \
        --suite generated --items 80 --seed 2 --max-tokens 64
fi
