#!/usr/bin/env bash
# CI's real-server stage, from prebuilt wheels only (nothing compiled): llama.cpp's own server from
# the xllamacpp wheel serving the demo's model three times on loopback (the demo's pair, f16 vs
# q4_0 KV cache with 4 slots each, and one server with 8 slots and /metrics), then the end-to-end
# tests that need them (ignored by a plain `cargo test`): tests/integration/real_endpoints.rs
# (compare, the identity axis by decode logprobs) and tests/integration/real_llama_server.rs
# (determinism under load and by cache state on the 8-slot server; contract and the long ladder
# on the pair's f16 server once its compare test is done).
# Prompt logprobs (teacher forcing, `coherence logprobs`) need llama-cpp-python built from source,
# which CI leaves out: scripts/real-prompt-logprobs.sh runs those tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_model
setup_xllamacpp
start_xllamacpp_pair
start_xllamacpp_server
# One test at a time per server: the cache-state test reads the server's prompt cache, which
# another test's requests would disturb (and fillers of the under-load test would slow it to a
# crawl). Two cargo processes side by side, each on servers of its own: the pair's compare test,
# then, on the pair's f16 server (idle by then), contract and the long ladder; and the 8-slot
# server's batch-invariance and cache-state tests (the load levels need its 8 slots). Measured
# on a fresh 2-core machine, the 8-slot server ran all four in 440 s while the pair's test ended
# after 169 s, leaving a core idle.
cargo test --test integration --no-run -q
pair_tests() {
    COHERENCE_REAL_A="http://127.0.0.1:$PORT_A/v1" COHERENCE_REAL_B="http://127.0.0.1:$PORT_B/v1" \
        cargo test -q --test integration -- --ignored --nocapture --test-threads 1 real_endpoints:: || return 1
    COHERENCE_REAL_SERVER="http://127.0.0.1:$PORT_A/v1" \
        cargo test -q --test integration -- --ignored --nocapture --test-threads 1 \
        real_llama_server::real_llama_server_contract real_llama_server::real_llama_server_long_ladder
}
pair_tests >"$DEMO_DIR/real_endpoints.log" 2>&1 &
pair=$!
status=0
COHERENCE_REAL_SERVER="http://127.0.0.1:$PORT_SERVER/v1" \
    cargo test -q --test integration -- --ignored --nocapture --test-threads 1 \
    real_llama_server::real_llama_server_under_load real_llama_server::real_llama_server_cache_states || status=$?
wait "$pair" || { status=$?; log "the pair's tests failed"; }
cat "$DEMO_DIR/real_endpoints.log"
exit "$status"
