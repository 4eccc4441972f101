#!/usr/bin/env bash
# How long CI takes on a fresh machine, re-measurable by anyone: clones this repository's committed
# HEAD into a temporary folder with every cache empty (cargo's registry and build, pip's cache and
# everything under ~/.cache, where CI's venvs live), runs `.ci/run` there, and prints each stage's
# wall time (from .ci/run's own stage table) with the machine's CPU named. Needs network access to
# crates.io and PyPI, as a fresh machine does; Chromium is installed by .ci/run only where it is
# missing, so on a machine that has it that install is not measured. Takes as long as CI.
#
#   scripts/measure-ci.sh [--keep]
#
# --keep leaves the temporary folder (the clone and CI's log, ci.log) for reading.
set -euo pipefail
keep=0
case ${1:-} in
--keep) keep=1 ;;
"") ;;
*) echo "measure-ci: unknown argument $1 (usage: scripts/measure-ci.sh [--keep])" >&2; exit 2 ;;
esac

source "$(dirname "$0")/fresh-clone.sh"
fresh_clone "$keep"

set +e
stamp "$tmp/ci.log" .ci/run
code=$?
set -e

echo
echo "Measured with scripts/measure-ci.sh on $(date -u +%Y-%m-%d), commit $commit: $(machine)."
echo
python3 - "$tmp/ci.log" "$code" <<'PY'
import re, sys
log, code = sys.argv[1], int(sys.argv[2])
rows = []
for line in open(log, errors="replace"):
    m = re.match(r"\s*\d+ \[ci\] (.+?) \| (\d+) \|\s*(\d*)$", line)
    if m and m.group(1) != "stage":
        rows.append((m.group(1), int(m.group(2)), m.group(3)))

def clock(s):
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"

print("| stage | wall time | exit |")
print("| --- | --- | --- |")
for name, secs, exit_code in rows:
    if name == "in all":
        print(f"| **`.ci/run`, in all** | **{clock(secs)}** | **{code}** |")
    else:
        print(f"| {name} | {clock(secs)} | {exit_code} |")
PY
exit "$code"
