#!/usr/bin/env bash
# CI's CPU smoke test of scripts/gpu/run.sh: PyTorch, transformers and the serving extras
# (scripts/gpu/cpu-requirements.txt) in a virtual environment cached per requirements under
# ~/.cache/coherence, the demo's GGUF converted to a Hugging Face folder, one fp32 deployment of
# `transformers serve` on the CPU, the selftest pass in its --quick form, and what it wrote checked.
# Left out here, as too slow on a CPU: the deployments with continuous batching (each held about
# 9 GB and answered no request within 4 minutes on 2 busy cores) and the contract pass (8 minutes
# against fp32 on 2 busy cores; CI's real stage runs contract against llama-server).
# Needs the demo's model (scripts/llama-servers.sh setup_llama; ci-real-endpoints.sh runs it first).
set -euo pipefail
cd "$(dirname "$0")/.."
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

model=$(model_path) || { log "no GGUF model found: run setup_llama first"; exit 1; }
cargo build -q
out=$(mktemp -d)
PATH=$venv/bin:$PATH PYTHON=$venv/bin/python COHERENCE=$PWD/target/debug/coherence \
    scripts/gpu/run.sh "$model" --device cpu --quick --only-deployments fp32 --passes selftest --out "$out"

# run.sh logs each step's exit and goes on; what each pass wrote is checked here.
"$venv/bin/python" - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
selftest = json.loads((out / "selftest-fp32" / "selftest.json").read_text())
assert selftest["endpoint"] == "fp32", selftest
assert selftest["negative"]["verdict"] != "different", f"the endpoint reads different from itself: {selftest}"
for control in ("negative", "positive"):
    run = out / "selftest-fp32" / control
    results = json.loads((run / "results.json").read_text())
    assert results["complete"], f"{run}: incomplete"
    records = (run / "records.jsonl").read_text().splitlines()
    assert len(records) == 2 * len(results["prompts"]) > 0, f"{run}: {len(records)} records"
print("[gpu-smoke] selftest of fp32 on the CPU:", selftest["negative"]["verdict"], "/",
      selftest["positive"]["verdict"], "; temperature ignored:", selftest.get("temperature_ignored"))
PY
log "scripts/gpu/run.sh works on the CPU (run folders in $out)"
