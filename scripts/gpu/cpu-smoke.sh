#!/usr/bin/env bash
# The whole CPU smoke test of scripts/gpu/run.sh, with `transformers serve` itself: run it when
# scripts/gpu/ changes (CI runs the lighter scripts/ci-gpu-smoke.sh). PyTorch, transformers and the serving extras
# (scripts/gpu/cpu-requirements.txt) in a virtual environment cached per requirements under
# ~/.cache/coherence, the demo's GGUF converted to a Hugging Face folder, one fp32 deployment of
# `transformers serve` on the CPU, the selftest pass in its --quick form, and what it wrote checked.
# Left out here, as too slow on a CPU: the deployments with continuous batching (each held about
# 9 GB and answered no request within 4 minutes on 2 busy cores) and the contract pass (8 minutes
# against fp32 on 2 busy cores; CI's real stage runs contract against llama-server).
# Takes about 12 minutes on 2 cores the first time (the install), 5 after.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/llama-servers.sh
log() { echo "[gpu-smoke] $*" >&2; }

requirements=(scripts/gpu/cpu-requirements.txt scripts/gpu/wheels.txt)
key=$(cat "${requirements[@]}" | sha256sum | cut -c1-12)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/coherence/gpu-smoke-venv-$key
if [[ ! -f $venv/.ready ]]; then
    log "installing PyTorch and transformers into $venv (about 5 GB; log $venv.log)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    start=$SECONDS
    (cd scripts/gpu && "$venv/bin/pip" install --no-cache-dir -q -r cpu-requirements.txt) >"$venv.log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 30
        kill -0 "$pid" 2>/dev/null && log "still installing: $((SECONDS - start)) s, $(du -sh "$venv" | cut -f1)"
    done
    wait "$pid" || { tail -n 20 "$venv.log" >&2; log "pip install failed; see $venv.log"; exit 1; }
    touch "$venv/.ready"
fi

setup_model
model=$(model_path) || { log "no GGUF model found"; exit 1; }
cargo build -q
out=$(mktemp -d)
PATH=$venv/bin:$PATH PYTHON=$venv/bin/python COHERENCE=$PWD/target/debug/coherence \
    scripts/gpu/run.sh "$model" --device cpu --quick --only-deployments fp32 --passes selftest --out "$out"

"$venv/bin/python" scripts/gpu/check-selftest.py "$out" fp32
log "scripts/gpu/run.sh works on the CPU (run folders in $out)"
