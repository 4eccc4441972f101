#!/usr/bin/env bash
# coherence against GPU inference servers: stands up `transformers serve` deployments of one model
# on loopback (fp32 without and with continuous batching, bf16 with continuous batching), runs the
# coherence passes on them, writes each run folder under OUT, and stops what it started.
#
#   scripts/gpu/run.sh MODEL [--device cuda|cpu] [--out DIR] [--quick] [--passes LIST] [--only-deployments LIST] [--pair A,B]
#
# MODEL is a Hugging Face folder or a .gguf file (converted once by prepare_model.py into
# MODEL_DIR, default OUT/model). Passes (comma-separated; default all):
#   samples   determinism --samples N of one open prompt on bf16-cb and fp32-cb (unique
#             completions at temperature 0, divergence positions)
#   load      determinism --under-load 0,32,64 on bf16-cb and fp32-cb
#   compare   compare fp32 vs bf16-cb (or --pair): the core catalogue plus generated items until decided
#   selftest  selftest on fp32 (or --pair's first)
#   contract  contract (the API-contract probes) on every deployment started
#   tools     compare --suite tools: the first two deployments started (or --pair)
#   long      compare --suite long up to 7k tokens: the first two deployments started (or --pair)
# --only-deployments starts only the named deployments (fp32, fp32-cb, bf16-cb; default all).
# --pair A,B names the two deployments compare, tools and long compare (A is the reference).
# --quick shrinks every pass (a handful of requests each): the CPU smoke test of this script.
# Needs python3 with torch and transformers, the serving extras named in scripts/gpu/wheels.txt,
# and a coherence binary (COHERENCE, default target/release/coherence).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COHERENCE=${COHERENCE:-$ROOT/target/release/coherence}
PYTHON=${PYTHON:-python3}
# The `transformers` command (its console script, else the module behind it).
if [[ -z ${TRANSFORMERS:-} ]]; then
    if command -v transformers >/dev/null; then TRANSFORMERS=transformers; else TRANSFORMERS="$PYTHON -m transformers.cli.transformers"; fi
fi

model= device=cuda out=$ROOT/runs/gpu quick=0 passes=samples,load,compare,selftest only_deployments= pair=
while (($#)); do
    case $1 in
        --device) device=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --passes) passes=$2; shift 2 ;;
        --only-deployments) only_deployments=$2; shift 2 ;;
        --pair) pair=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
        *) model=$1; shift ;;
    esac
done
[[ -n $model ]] || { echo "run.sh: name the model (a Hugging Face folder or a .gguf file)" >&2; exit 2; }
[[ -x $COHERENCE ]] || { echo "run.sh: no coherence binary at $COHERENCE (cargo build --release, or set COHERENCE)" >&2; exit 2; }
mkdir -p "$out/logs"
log() { echo "[gpu] $*" >&2; }

if [[ $model == *.gguf ]]; then
    dir=${MODEL_DIR:-$out/model}
    log "converting $model to $dir"
    "$PYTHON" "$ROOT/scripts/gpu/prepare_model.py" "$model" "$dir"
    model=$dir
fi
model=$(cd "$model" && pwd)

# The flags this transformers version's `serve` takes (they were renamed across versions).
serve_help=$($TRANSFORMERS serve --help 2>&1 || true)
has_flag() { grep -q -- "$1" <<<"$serve_help"; }
dtype=--dtype
has_flag "--dtype" || dtype=--torch-dtype
device_flags=()
has_flag "--device" && device_flags=(--device "$device")
has_flag "--continuous-batching" || { log "this transformers serve has no --continuous-batching:"; echo "$serve_help" >&2; exit 2; }

# name port flags…: the deployments, one server process each.
DEPLOYMENTS=(
    "fp32 18101 $dtype float32"
    "fp32-cb 18102 $dtype float32 --continuous-batching"
    "bf16-cb 18103 $dtype bfloat16 --continuous-batching"
)
if [[ -n $only_deployments ]]; then
    kept=()
    for d in "${DEPLOYMENTS[@]}"; do
        set -- $d
        [[ ,$only_deployments, == *,$1,* ]] && kept+=("$d")
    done
    ((${#kept[@]})) || { log "--only-deployments $only_deployments names none of fp32, fp32-cb, bf16-cb"; exit 2; }
    DEPLOYMENTS=("${kept[@]}")
fi
if [[ -n $pair ]]; then
    [[ $pair =~ ^[a-z0-9-]+,[a-z0-9-]+$ ]] || { log "--pair $pair: name two deployments, A,B"; exit 2; }
    for name in ${pair//,/ }; do
        found=0
        for d in "${DEPLOYMENTS[@]}"; do set -- $d; [[ $1 == "$name" ]] && found=1; done
        ((found)) || { log "--pair $pair: $name is not among the deployments started"; exit 2; }
    done
fi
PIDS=()
stop_all() {
    local pid
    for pid in "${PIDS[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT
trap 'exit 130' INT TERM

url() { echo "http://127.0.0.1:$1/v1"; }
port_of() { local d; for d in "${DEPLOYMENTS[@]}"; do set -- $d; [[ $1 == "$NAME" ]] && echo "$2"; done; }

for d in "${DEPLOYMENTS[@]}"; do
    set -- $d
    name=$1 port=$2
    shift 2
    # `--device` picks where the model runs (cpu for the smoke test).
    setsid $TRANSFORMERS serve "$model" --host 127.0.0.1 --port "$port" \
        "${device_flags[@]}" "$@" >"$out/logs/$name.log" 2>&1 </dev/null &
    PIDS+=("$!")
    log "$name: pid $! on $(url "$port") ($*; log $out/logs/$name.log)"
done

# Ready when a one-token chat completion answers (GET /v1/models answers 500 on this server).
wait_ready() {
    local port=$1 pid=$2 deadline=$((SECONDS + 600))
    until "$PYTHON" - "$port" "$model" <<'PY' 2>/dev/null
import json, sys, urllib.request
body = json.dumps({"model": sys.argv[2], "max_tokens": 1,
                   "messages": [{"role": "user", "content": "Hi"}]}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/chat/completions", body,
                             {"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=60)
PY
    do
        kill -0 "$pid" 2>/dev/null || { log "the server on port $port exited; see $out/logs"; return 1; }
        ((SECONDS < deadline)) || { log "the server on port $port did not answer within 600 s"; return 1; }
        sleep 2
    done
}
for i in "${!DEPLOYMENTS[@]}"; do
    set -- ${DEPLOYMENTS[$i]}
    wait_ready "$2" "${PIDS[$i]}"
done
log "every deployment answers"

# endpoint NAME: the flags naming deployment NAME (its model id is the folder path).
endpoint() { local p; NAME=$1; p=$(port_of); echo "--endpoint $1=$(url "$p") --model $1=$model"; }
step() {
    local label=$1; shift
    log "$label: coherence $*"
    local code=0
    "$COHERENCE" "$@" >"$out/logs/$label.out" 2>"$out/logs/$label.err" || code=$?
    log "$label: exit $code ($(head -n 1 "$out/logs/$label.out" 2>/dev/null))"
}

if ((quick)); then
    samples=4 concurrency=4 loads=0,2 load_prompts=count_letters max_items=20 round=10 only=(--only count_letters,fact_capital_canada)
else
    samples=200 concurrency=32 loads=0,32,64 load_prompts=gsm8k_eggs,long_inventory,count_letters,fact_capital_canada max_items=2000 round=200 only=()
fi
for pass in ${passes//,/ }; do
    case $pass in
        samples) for d in bf16-cb fp32-cb; do
            step "samples-$d" determinism $(endpoint "$d") --samples "$samples" --concurrency "$concurrency" \
                --only creative_continuation --max-tokens 300 --out "$out/samples-$d" --quiet
        done ;;
        load) for d in bf16-cb fp32-cb; do
            step "load-$d" determinism $(endpoint "$d") --under-load "$loads" --only "$load_prompts" --repeats 3 \
                --max-tokens 200 --filler-tokens 256 --out "$out/load-$d" --quiet
        done ;;
        compare)
            set -- ${pair//,/ }; a=${1:-fp32} b=${2:-bf16-cb}
            if ((quick)); then
                extra=(--suite core,generated --until-decided --round-items "$round" --max-items "$max_items" "${only[@]}")
            else
                extra=()  # a plain compare: the core catalogue, then generated items until decided
            fi
            step "compare-$a-vs-$b" compare $(endpoint "$a") $(endpoint "$b") \
                --concurrency "$concurrency" "${extra[@]}" --out "$out/compare-$a-vs-$b" --quiet ;;
        selftest)
            set -- ${pair//,/ }; a=${1:-fp32}
            step "selftest-$a" selftest $(endpoint "$a") --concurrency "$concurrency" "${only[@]}" \
                --out "$out/selftest-$a" --quiet ;;
        contract)
            for d in "${DEPLOYMENTS[@]}"; do
                set -- $d
                step "contract-$1" contract $(endpoint "$1") --json
            done ;;
        tools|long)
            set -- ${DEPLOYMENTS[0]}; first=$1
            set -- ${DEPLOYMENTS[1]:-${DEPLOYMENTS[0]}}; second=$1
            if [[ -n $pair ]]; then set -- ${pair//,/ }; first=$1 second=$2; fi
            if [[ $pass == tools ]]; then
                suite=(--suite tools)
            elif ((quick)); then
                suite=(--suite long --lengths 1k --depths 0,100 --per-cell 1 --max-context 8192)
            else
                suite=(--suite long --lengths 1k,2k,4k,7k --max-context 8192)
            fi
            step "$pass-$first-vs-$second" compare $(endpoint "$first") $(endpoint "$second") \
                "${suite[@]}" --concurrency "$concurrency" --out "$out/$pass-$first-vs-$second" --quiet ;;
        *) log "unknown pass $pass (samples, load, compare, selftest, contract, tools, long)"; exit 2 ;;
    esac
done
log "done: run folders under $out"
