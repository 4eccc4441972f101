#!/usr/bin/env python3
"""The prompts of a careful re-grade (docs/src/regrade.md), drawn again and shown for reading.

The population is every prompt of runs/example-smollm2-kv-demo (140 generated items) and the
100 catalogue prompts of runs/example-smollm2-kv-demo-catalogue (its generated items are the demo's
and are left out), sorted as "RUN:PROMPT". Sample k draws 30 with Python's random.seed(SEED_k)
and random.sample from what the samples before it left:

    scripts/regrade-sample.py 48 49 50 51          # the four samples of issue 48, in order
    scripts/regrade-sample.py 48 49 50 51 --show 4 # the fourth, with question, answers, reading

--show N prints, per prompt of sample N, the question, the expected answer, each endpoint's whole
answer and finish_reason (from records.jsonl, repeat 0) and the engine's verdict, kind, extraction
and evidence (from the committed results.json): what a grader reads beside the engine.
"""

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = "example-smollm2-kv-demo"
CATALOGUE = "example-smollm2-kv-demo-catalogue"
ENDPOINTS = ("kv-f16", "kv-q4")


def results(run):
    return json.loads((ROOT / "runs" / run / "results.json").read_text())


def population():
    demo = [f"{DEMO}:{p['id']}" for p in results(DEMO)["prompts"]]
    catalogue = [
        f"{CATALOGUE}:{p['id']}"
        for p in results(CATALOGUE)["prompts"]
        if not p["id"].startswith("gen.")
    ]
    return sorted(demo + catalogue)


def samples(seeds, size=30):
    left = population()
    drawn = []
    for seed in seeds:
        random.seed(seed)
        sample = random.sample(left, size)
        drawn.append(sample)
        left = [x for x in left if x not in sample]
    return drawn


def answers(run):
    out = {}
    with (ROOT / "runs" / run / "records.jsonl").open() as f:
        for line in f:
            r = json.loads(line)
            if r.get("repeat", 0) == 0 and r.get("answer") is not None:
                out[(r["prompt"], r["endpoint"])] = r
    return out


def show(sample):
    prompts = {run: {p["id"]: p for p in results(run)["prompts"]} for run in (DEMO, CATALOGUE)}
    records = {run: answers(run) for run in (DEMO, CATALOGUE)}
    for i, item in enumerate(sample, 1):
        run, pid = item.split(":", 1)
        p = prompts[run][pid]
        pair = p["pairs"][0]
        print(f"\n## {i}. {run} {pid} [{p['scorer']}] expected {p.get('expected')!r}")
        print("QUESTION:", p.get("question"))
        print(f"ENGINE: {p['verdict']} / {pair.get('kind')} ({pair['reason']})")
        for ep in ENDPOINTS:
            a = p["answers"][ep]
            r = records[run].get((pid, ep), {})
            print(
                f"- {ep}: finish={r.get('finish_reason')} correct={a.get('correct')} "
                f"extracted={a.get('extracted')!r}"
            )
            print("  evidence:", a.get("evidence"))
            print("  answer:", json.dumps(r.get("answer"), ensure_ascii=False))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", type=int, nargs="+", help="one seed per sample, in order")
    parser.add_argument("--show", type=int, metavar="N", help="print sample N (1-based) for reading")
    args = parser.parse_args()
    drawn = samples(args.seeds)
    if args.show:
        show(drawn[args.show - 1])
        return
    for seed, sample in zip(args.seeds, drawn):
        print(f"seed {seed}:")
        for item in sample:
            print(" ", item)


if __name__ == "__main__":
    main()
