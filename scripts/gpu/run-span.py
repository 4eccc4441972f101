"""Print how long each run folder's requests took, from its own records.

The span runs from the earliest `started_at` to the latest `finished_at` in RUN/records.jsonl and,
where a determinism run wrote one, RUN/load.jsonl (its samples and under-load probes; records.jsonl
keeps only the repeats): the wall time the run spent asking its endpoints (server start, model
conversion and scoring are not in it). Records without both timestamps (none are written so) are
skipped and counted.

    python3 scripts/gpu/run-span.py RUN [RUN...]
"""

import argparse
import json
import os
import re
import sys
from datetime import datetime, timezone

STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def parse(stamp: str) -> datetime:
    """An RFC 3339 time with up to nanoseconds (Python's fromisoformat takes at most microseconds)."""
    m = STAMP.match(stamp)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {stamp!r}")
    whole, frac, zone = m.groups()
    frac = (frac or "0")[:6].ljust(6, "0")
    zone = "+00:00" if zone == "Z" else zone
    return datetime.fromisoformat(f"{whole}.{frac}{zone}").astimezone(timezone.utc)


def minutes(seconds: float) -> str:
    """2 min 47.5 s: tenths of a second, so no figure is rounded up past what the records say."""
    tenths = int(seconds * 10)
    m, s = divmod(tenths, 600)
    return f"{m} min {s / 10:.1f} s" if m else f"{s / 10:.1f} s"


def span(run: str) -> dict:
    first = last = None
    records = skipped = 0
    files = [os.path.join(run, "records.jsonl")]
    if os.path.exists(os.path.join(run, "load.jsonl")):
        files.append(os.path.join(run, "load.jsonl"))
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                rec = json.loads(line)
                start, end = rec.get("started_at"), rec.get("finished_at")
                if not start or not end:
                    skipped += 1
                    continue
                records += 1
                start, end = parse(start), parse(end)
                first = start if first is None or start < first else first
                last = end if last is None or end > last else last
    if first is None:
        raise ValueError(f"{run}: no record has started_at and finished_at")
    return {"run": run, "records": records, "skipped": skipped, "first_started_at": first.isoformat(),
            "last_finished_at": last.isoformat(), "seconds": (last - first).total_seconds()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a run folder (holding records.jsonl)")
    parser.add_argument("--json", action="store_true", help="one JSON object per run instead of a line")
    args = parser.parse_args()
    code = 0
    for run in args.runs:
        try:
            s = span(run)
        except (OSError, ValueError) as e:
            print(f"run-span: {e}", file=sys.stderr)
            code = 2
            continue
        if args.json:
            print(json.dumps(s))
        else:
            extra = f", {s['skipped']} without times" if s["skipped"] else ""
            print(f"{run}: {minutes(s['seconds'])} ({int(s['seconds'] * 10) / 10:.1f} s, {s['records']} records{extra}; "
                  f"{s['first_started_at']} to {s['last_finished_at']})")
    return code


if __name__ == "__main__":
    sys.exit(main())
