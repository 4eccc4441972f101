"""What scripts/gpu/run.sh's selftest pass wrote, checked (run.sh logs each step's exit and goes
on, so its smoke tests check the files): selftest.json names the deployment and does not read it
`different` from itself, and both controls are complete run folders with two records a prompt.

    python3 scripts/gpu/check-selftest.py OUT DEPLOYMENT
"""

import json
import pathlib
import sys


def main() -> int:
    out, name = pathlib.Path(sys.argv[1]), sys.argv[2]
    selftest = json.loads((out / f"selftest-{name}" / "selftest.json").read_text())
    assert selftest["endpoint"] == name, selftest
    assert selftest["negative"]["verdict"] != "different", f"the endpoint reads different from itself: {selftest}"
    for control in ("negative", "positive"):
        run = out / f"selftest-{name}" / control
        results = json.loads((run / "results.json").read_text())
        assert results["complete"], f"{run}: incomplete"
        records = (run / "records.jsonl").read_text().splitlines()
        assert len(records) == 2 * len(results["prompts"]) > 0, f"{run}: {len(records)} records"
    print(f"[gpu-smoke] selftest of {name}:", selftest["negative"]["verdict"], "/",
          selftest["positive"]["verdict"], "; temperature ignored:", selftest.get("temperature_ignored"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
