#!/usr/bin/env bash
# The real tests of prompt logprobs (tests/integration/real_prompt_logprobs.rs: `coherence
# logprobs` and `compare --logprobs` teacher forcing, each against a twin of the reference as the
# negative control and a q4_0 KV cache as the changed deployment). Run it before changing
# src/logprobs/. No prebuilt server gives prompt logprobs (llama.cpp's server, in the xllamacpp
# wheel CI uses, ignores completions `echo`), so this builds llama-cpp-python from source once
# into .demo/ (about 8 minutes on 2 cores) and starts three of its servers with `--logits_all
# true`. CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_llama
start_llama_logprobs_trio
COHERENCE_REAL_CHAT_TEMPLATE="$(model_path)" COHERENCE_REAL_A="http://127.0.0.1:$PORT_A/v1" \
    COHERENCE_REAL_B="http://127.0.0.1:$PORT_B/v1" COHERENCE_REAL_A_TWIN="http://127.0.0.1:$PORT_TWIN/v1" \
    cargo test --test integration -- --ignored --nocapture real_prompt_logprobs::
