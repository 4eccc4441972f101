#!/usr/bin/env bash
# CI's smoke test of scripts/gpu/run.sh without PyTorch: run.sh itself (it starts the deployments,
# waits for readiness, runs its passes, stops what it started) in its --quick form, with
# `transformers serve` replaced by scripts/gpu/standin-transformers.py, which takes serve's flags
# and serves the demo's GGUF with llama.cpp's server from the xllamacpp wheel. Two deployments
# (fp32, and bf16-cb: 4 slots and a q8_0 KV cache), the selftest and compare passes; then what
# they wrote is checked, and that nothing run.sh started still listens.
# The whole CPU smoke with PyTorch and `transformers serve` itself is scripts/gpu/cpu-smoke.sh (run
# it when scripts/gpu/ changes: about 12 minutes the first time, a 5 GB install).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/llama-servers.sh
log() { echo "[gpu-smoke] $*" >&2; }

setup_model
setup_xllamacpp
cargo build -q
out=$(mktemp -d)
mkdir -p "$out/model"
ln -s "$(model_path)" "$out/model/model.gguf"
python=$XLLAMACPP_VENV/bin/python
PYTHON=$python TRANSFORMERS="$python $PWD/scripts/gpu/standin-transformers.py" \
    COHERENCE=$PWD/target/debug/coherence \
    scripts/gpu/run.sh "$out/model" --device cpu --quick --only-deployments fp32,bf16-cb \
    --passes selftest,compare --out "$out"

"$python" scripts/gpu/check-selftest.py "$out" fp32
"$python" - "$out" <<'PY'
import json, pathlib, sys
run = pathlib.Path(sys.argv[1]) / "compare-fp32-vs-bf16-cb"
results = json.loads((run / "results.json").read_text())
assert results["complete"], f"{run}: incomplete"
assert [e["name"] for e in results["endpoints"]] == ["fp32", "bf16-cb"], results["endpoints"]
print("[gpu-smoke] compare fp32 vs bf16-cb:", results["summary"]["same_model"], "; identity",
      results["summary"]["identity"]["verdict"])
PY
for port in 18101 18103; do
    port_free "$port" || { log "port $port still answers: run.sh left a deployment running"; exit 1; }
done
log "scripts/gpu/run.sh works (run folders in $out)"
