#!/usr/bin/env python3
"""Count the production lines of src/ at a git revision (default HEAD): every .rs file up to its
in-file `#[cfg(test)] mod …` block, files that are whole `#[cfg(test)] mod name;` modules left out.
The size figure of the house issues. Usage: scripts/production-lines.py [REV ...]"""
import re, subprocess, sys


def show(rev, path):
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True).stdout


def count(rev):
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src"],
                           capture_output=True, text=True, check=True).stdout.split()
    files = [f for f in files if f.endswith(".rs")]
    texts = {f: show(rev, f) for f in files}
    test_files = set()
    for f, text in texts.items():
        base = f[: -len("mod.rs")] if f.endswith("/mod.rs") else f[: -len(".rs")] + "/"
        if f in ("src/lib.rs", "src/main.rs"):
            base = "src/"
        for name in re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod (\w+);", text):
            test_files.update({f"{base}{name}.rs", f"{base}{name}/mod.rs"})
    total = 0
    for f, text in texts.items():
        if f in test_files:
            continue
        lines = text.split("\n")
        for i, line in enumerate(lines):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if line.startswith("#[cfg(test)]") and re.match(r"(pub(\([^)]*\))?\s+)?mod \w+ \{", nxt):
                lines = lines[:i]
                break
        total += len(lines)
    return total


for rev in sys.argv[1:] or ["HEAD"]:
    print(f"{rev} {count(rev)}")
