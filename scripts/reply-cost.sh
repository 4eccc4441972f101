#!/usr/bin/env bash
# What one reply can cost coherence: peak memory (/usr/bin/time -v), wall time and records.jsonl
# size of `compare --suite tools` against a server whose every tool call carries MB megabytes of
# arguments, and of `distribution` against one whose every sample is MB megabytes of text
# (scripts/hostile-replies.py). Usage: scripts/reply-cost.sh [BINARY] [TOOL_MB] [SAMPLE_MB] [PORT]
# (defaults: target/debug/coherence, 12, 4, 18531; the server takes PORT and PORT+1).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/debug/coherence}")
tool_mb=${2:-12} sample_mb=${3:-4} port=${4:-18531}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
python3 scripts/hostile-replies.py "$port" tool-args "$tool_mb" & pids+=($!)
python3 scripts/hostile-replies.py "$((port + 1))" content "$sample_mb" & pids+=($!)
sleep 1
measure() { # NAME ARGS...: run coherence under /usr/bin/time -v and print its cost
  local name=$1; shift
  local rc=0
  /usr/bin/time -v "$bin" "$@" --out "$work/$name" --quiet >/dev/null 2>"$work/$name.err" || rc=$?
  local wall peak size
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$name.err")
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.err")
  size=$(stat -c %s "$work/$name/records.jsonl" 2>/dev/null || echo 0)
  echo "$name: exit $rc, wall $wall, peak RSS $((peak / 1024)) MiB, records.jsonl $((size / 1024 / 1024)) MiB"
}
a="http://127.0.0.1:$port/v1" b="http://127.0.0.1:$((port + 1))/v1"
echo "$(uname -n), $(nproc) cores, $bin"
measure tools compare --suite tools --endpoint "a=$a" --endpoint "b=$a" \
  --no-logprobs --control 0 --retries 0
measure distribution distribution --endpoint "a=$b" --endpoint "b=$b" \
  --temperature 1 --samples 2 --concurrency 2
