#!/usr/bin/env bash
# CI's real-server stage: start the llama.cpp deployments of scripts/llama-servers.sh (f16 and q4_0
# KV with prompt logprobs, and a twin of f16 as the logprob negative control) and upstream
# llama-server with 8 parallel slots, and run the end-to-end tests in
# tests/integration/real_endpoints.rs and tests/integration/real_llama_server.rs against them
# (ignored by a plain `cargo test`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_llama
setup_llama_server
start_llama_logprobs_trio
start_llama_server
COHERENCE_REAL_CHAT_TEMPLATE="$(model_path)" COHERENCE_REAL_A="http://127.0.0.1:$PORT_A/v1" COHERENCE_REAL_B="http://127.0.0.1:$PORT_B/v1" \
    COHERENCE_REAL_A_TWIN="http://127.0.0.1:$PORT_TWIN/v1" \
    COHERENCE_REAL_SERVER="http://127.0.0.1:$PORT_SERVER/v1" \
    cargo test --test integration -- --ignored --nocapture real_endpoints:: real_llama_server::
