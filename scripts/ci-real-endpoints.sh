#!/usr/bin/env bash
# CI's real-server stage: start the two llama.cpp deployments of scripts/llama-servers.sh and run
# the end-to-end tests in tests/integration/real_endpoints.rs against them (ignored by a plain `cargo test`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_llama
start_llama_pair
COHERENCE_REAL_A="http://127.0.0.1:$PORT_A/v1" COHERENCE_REAL_B="http://127.0.0.1:$PORT_B/v1" \
    cargo test --test integration real_endpoints:: -- --ignored --nocapture
