#!/usr/bin/env bash
# What a newcomer on a fresh machine waits for, re-measurable by anyone: clones this repository's
# committed HEAD into a temporary folder with empty caches (cargo's registry and build, pip's cache,
# the demo's servers and model), runs the README's two commands there, `scripts/demo.sh` then
# `cargo test`, and prints the step table the README shows: each step's wall time, with the
# machine's CPU model and core count. Needs network access to crates.io and PyPI, as a fresh
# machine does. Takes as long as it measures (about half an hour on 2 cores); CI does not run it.
#
#   scripts/measure-fresh.sh [--keep] [-- DEMO_ARGS...]
#
# --keep leaves the temporary folder (the clone, its run folder and every log) for reading;
# arguments after -- go to scripts/demo.sh. Uncommitted changes are not measured (the clone is of
# HEAD). The Rust toolchain itself (rustup's) is reused: a fresh machine has it.
set -euo pipefail
keep=0
demo_args=()
while (($#)); do
    case $1 in
    --keep) keep=1 ;;
    --) shift; demo_args=("$@"); break ;;
    *) echo "measure-fresh: unknown argument $1 (usage: scripts/measure-fresh.sh [--keep] [-- DEMO_ARGS...])" >&2; exit 2 ;;
    esac
    shift
done

source "$(dirname "$0")/fresh-clone.sh"
fresh_clone "$keep"

set +e
stamp "$tmp/demo.log" scripts/demo.sh "${demo_args[@]}"
demo_code=$?
test_start=$((SECONDS - fresh_start))
stamp "$tmp/test.log" cargo test
test_code=$?
set -e
test_end=$((SECONDS - fresh_start))

# The demo's steps, from its own "[demo] step N of 5: WHAT" lines: each runs until the next starts;
# the last (the comparison) until the demo ends.
echo
echo "Measured with scripts/measure-fresh.sh on $(date -u +%Y-%m-%d), commit $commit:"
echo "$(machine)."
echo
python3 - "$tmp/demo.log" "$test_start" "$test_end" "$demo_code" "$test_code" <<'PY'
import re, sys
log, test_start, test_end, demo_code, test_code = sys.argv[1], *map(int, sys.argv[2:])
steps = []
for line in open(log, errors="replace"):
    m = re.match(r"\s*(\d+) \[demo\] step (\d+) of \d+: (.*?) \(\S+ so far\)$", line)
    if m:
        steps.append((int(m.group(1)), m.group(3)))
bounds = [t for t, _ in steps] + [test_start]

def clock(s):
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"

print("| step | wall time |")
print("| --- | --- |")
for (t, what), end in zip(steps, bounds[1:]):
    print(f"| {what} | {clock(end - t)} |")
print(f"| **`scripts/demo.sh`, in all** | **{clock(test_start)}** (exit {demo_code}) |")
print(f"| `cargo test`, after the demo | {clock(test_end - test_start)} (exit {test_code}) |")
PY
