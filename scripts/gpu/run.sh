#!/usr/bin/env bash
# coherence against GPU inference servers: stands up `transformers serve` deployments of one model
# on loopback (fp32 without and with continuous batching, bf16 with continuous batching, and for
# the identity pass a second bf16 one started alike), runs the coherence passes on them, writes
# each run folder under OUT, and stops what it started.
#
#   scripts/gpu/run.sh MODEL [--device cuda|cpu] [--out DIR] [--quick] [--passes LIST] [--only-deployments LIST] [--pair A,B]
#                            [--warmup none|short|long] [--cb-memory FRACTION]
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
#   identity  the identity axis with the growing control (--control auto, at most 300 prompts, never
#             more than the run's), text only (serve returns no logprobs): bf16-cb vs bf16-cb-twin,
#             two continuous-batching servers started alike, over 300 generated items; plain fp32
#             (the reference: its own repeat never parts) vs bf16-cb over 120. Each pair whose two
#             deployments are started (or --pair's), into OUT/identity-A-vs-B
# --only-deployments starts only the named deployments (fp32, fp32-cb, bf16-cb, bf16-cb-twin;
# default all but bf16-cb-twin, which the identity pass adds).
# --pair A,B names the two deployments compare, tools and long compare (A is the reference).
# --quick shrinks every pass (a handful of requests each, generated items at a fixed level 4, no
# calibration): the CPU smoke test of this script.
# A server counts as up when GET /health answers 200 (no chat request: the passes meet the server
# in the state a user's first request meets it). --warmup sends each server one chat request before
# the passes: short, a 1-token "Hi"; long, a ~1k-token prompt; none (default). On the H200 a
# continuous-batching fp32 server whose first request was short answered long prompts with
# degenerate text ("Measured on an H200" in the docs), so --warmup short reproduces it on purpose.
# --cb-memory caps each continuous-batching server's KV cache at FRACTION of the GPU memory free
# when it allocates it, at its first request (`serve --cb-max-memory-percent`; default 0.2): left
# to itself the first one takes 80-90% and the other deployments can run out of memory.
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
warmup=none cb_memory=0.2
while (($#)); do
    case $1 in
        --device) device=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --passes) passes=$2; shift 2 ;;
        --only-deployments) only_deployments=$2; shift 2 ;;
        --pair) pair=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --cb-memory) cb_memory=$2; shift 2 ;;
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
        *) model=$1; shift ;;
    esac
done
[[ $warmup =~ ^(none|short|long)$ ]] || { echo "run.sh: --warmup $warmup: none, short or long" >&2; exit 2; }
[[ $cb_memory =~ ^(0?\.[0-9]+|1(\.0*)?)$ ]] || { echo "run.sh: --cb-memory $cb_memory: a fraction, 0 to 1" >&2; exit 2; }
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
# The KV-cache cap of a continuous-batching server (transformers 5.17: --cb-max-memory-percent, a
# fraction of the free GPU memory, taken when the first request arrives; default 0.8 to 0.9).
cb_flags=(--continuous-batching)
if has_flag "--cb-max-memory-percent"; then
    cb_flags+=(--cb-max-memory-percent "$cb_memory")
elif [[ -z $only_deployments || $only_deployments == *-cb* ]]; then
    log "this transformers serve has no --cb-max-memory-percent: each continuous-batching server takes most of"
    log "the free GPU memory; on one GPU start one at a time (--only-deployments fp32-cb, then bf16-cb)"
fi

# name port flags…: the deployments, one server process each.
DEPLOYMENTS=(
    "fp32 18101 $dtype float32"
    "fp32-cb 18102 $dtype float32 ${cb_flags[*]}"
    "bf16-cb 18103 $dtype bfloat16 ${cb_flags[*]}"
    "bf16-cb-twin 18104 $dtype bfloat16 ${cb_flags[*]}"
)
# The twin serves the identity pass only, unless named.
if [[ -z $only_deployments && ,$passes, != *,identity,* ]]; then
    only_deployments=fp32,fp32-cb,bf16-cb
fi
if [[ -n $only_deployments ]]; then
    kept=()
    for d in "${DEPLOYMENTS[@]}"; do
        set -- $d
        [[ ,$only_deployments, == *,$1,* ]] && kept+=("$d")
    done
    ((${#kept[@]})) || { log "--only-deployments $only_deployments names none of fp32, fp32-cb, bf16-cb, bf16-cb-twin"; exit 2; }
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
started() { local d; for d in "${DEPLOYMENTS[@]}"; do set -- $d; [[ $1 == "$NAME" ]] && return 0; done; return 1; }

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

# Ready when GET /health answers 200: the model is loaded (the server preloads it before it
# listens) and nothing is generated, so the passes' requests are the first the server serves. A
# server without /health (404) counts as up once its models route answers at all (GET /v1/models
# answers HTTP 500 on transformers 5.17). A chat request here would change the server's state:
# see --warmup.
wait_ready() {
    local port=$1 pid=$2 deadline=$((SECONDS + 600))
    until "$PYTHON" - "$port" <<'PY' 2>/dev/null
import sys, urllib.error, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
try:
    urllib.request.urlopen(base + "/health", timeout=10)
except urllib.error.HTTPError as e:
    if e.code != 404:
        raise
    try:
        urllib.request.urlopen(base + "/v1/models", timeout=10)
    except urllib.error.HTTPError:
        pass  # any HTTP answer: the server is up
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
log "every deployment answers GET /health"

# --warmup: one chat request to each server before the passes (the readiness check's old 1-token
# "Hi", or a ~1k-token prompt), to reproduce what a server's first request does to later ones.
if [[ $warmup != none ]]; then
    for d in "${DEPLOYMENTS[@]}"; do
        set -- $d
        "$PYTHON" - "$2" "$model" "$warmup" <<'PY' >&2 || { log "--warmup $warmup: $1 did not answer"; exit 3; }
import json, sys, urllib.request
port, model, kind = sys.argv[1:]
if kind == "short":
    content = "Hi"
else:  # about 1,000 prompt tokens with SmolLM2's tokenizer
    content = "Read this and reply with one word.\n" + "The quick brown fox jumps over the lazy dog. " * 100
body = json.dumps({"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": content}]}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                             {"Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(req, timeout=300))
print(f"[gpu] warmup {kind} on port {port}: {reply.get('usage', {}).get('prompt_tokens')} prompt tokens")
PY
    done
fi

# The GPU's memory while the passes run (one line each 5 s), when nvidia-smi is there.
if [[ $device == cuda* ]] && command -v nvidia-smi >/dev/null; then
    setsid bash -c 'while :; do
        printf "%s " "$(date -u +%FT%TZ)"; nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader | tr "\n" " "
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr "\n" ";"; echo
        sleep 5; done' >"$out/logs/gpu-memory.log" 2>&1 </dev/null &
    PIDS+=("$!")
fi

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
    identity_pairs=(bf16-cb,bf16-cb-twin,30 fp32,bf16-cb,30)
else
    samples=200 concurrency=32 loads=0,32,64 load_prompts=gsm8k_eggs,long_inventory,count_letters,fact_capital_canada max_items=2000 round=200 only=()
    identity_pairs=(bf16-cb,bf16-cb-twin,300 fp32,bf16-cb,120)
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
                extra=(--suite core,generated --difficulty 4 --until-decided --round-items "$round" --max-items "$max_items" "${only[@]}")
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
        identity)
            # A reference, a candidate and the generated items to send: the control grows over
            # them until identity is decided (the default --control auto, --control-max 300).
            for spec in "${identity_pairs[@]}"; do
                IFS=, read -r a b items <<<"$spec"
                [[ -z $pair || $pair == "$a,$b" ]] || continue
                if ! { NAME=$a started && NAME=$b started; }; then
                    log "identity: $a vs $b skipped (start both: --only-deployments $a,$b)"
                    continue
                fi
                step "identity-$a-vs-$b" compare $(endpoint "$a") $(endpoint "$b") \
                    --suite generated --items "$items" --concurrency "$concurrency" \
                    --out "$out/identity-$a-vs-$b" --quiet
            done ;;
        *) log "unknown pass $pass (samples, load, compare, selftest, contract, tools, long, identity)"; exit 2 ;;
    esac
done
# Requests lost to memory show in the servers' logs.
oom=$(grep -l -i -E "out of memory|OutOfMemoryError" "$out"/logs/*.log 2>/dev/null | grep -v gpu-memory || true)
if [[ -n $oom ]]; then log "out-of-memory errors in: $(echo $oom)"; else log "no out-of-memory error in the server logs"; fi
[[ -s $out/logs/gpu-memory.log ]] && log "GPU memory, most used: $(awk '{print $2}' "$out/logs/gpu-memory.log" | sort -n | tail -n 1) MiB (logs/gpu-memory.log)"
log "done: run folders under $out"
