#!/usr/bin/env python3
"""List production functions in src/ longer than N lines (default 80), longest first.

A function runs from its `fn` line to the closing brace at the same indent; #[cfg(test)] items
and files that are `#[cfg(test)] mod name;` are skipped. Usage: scripts/long-functions.py [src] [80]"""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else 'src'
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 80
fnre = re.compile(r'^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')
out = []
# files that are whole #[cfg(test)] modules (`#[cfg(test)] mod name;` in their parent)
test_files = set()
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        p = os.path.join(d, f)
        ls = open(p).read().split('\n')
        for a, b in zip(ls, ls[1:]):
            mm = re.match(r'\s*(pub(\([^)]*\))?\s+)?mod\s+(\w+);', b)
            if a.strip() == '#[cfg(test)]' and mm:
                base = d if f in ('mod.rs', 'lib.rs', 'main.rs') else os.path.join(d, f[:-3])
                test_files.add(os.path.join(base, mm.group(3) + '.rs'))
                test_files.add(os.path.join(base, mm.group(3), 'mod.rs'))
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        p = os.path.join(d, f)
        if p in test_files: continue
        lines = open(p).read().split('\n')
        skip_until = -1
        i = 0
        while i < len(lines):
            l = lines[i]
            if l.strip().startswith('#[cfg(test)]'):
                # skip the next item: find its first line and its end at the same indent
                j = i + 1
                while j < len(lines) and (lines[j].strip().startswith('#') or lines[j].strip() == ''): j += 1
                if j < len(lines):
                    ind = len(lines[j]) - len(lines[j].lstrip())
                    if lines[j].rstrip().endswith(';'):
                        i = j + 1; continue
                    k = j + 1
                    while k < len(lines) and not (lines[k].startswith(' ' * ind + '}') and len(lines[k]) - len(lines[k].lstrip()) == ind): k += 1
                    i = k + 1; continue
            m = fnre.match(l)
            if m:
                ind = len(m.group(1))
                # find end: a line that is exactly indent + '}' (possibly followed by stuff)
                k = i
                # one-line or declaration-only
                if l.rstrip().endswith(';'):
                    i += 1; continue
                k = i + 1
                while k < len(lines):
                    s = lines[k]
                    if s.startswith(' ' * ind + '}') and (len(s) - len(s.lstrip()) == ind): break
                    k += 1
                n = k - i + 1
                if n > limit:
                    out.append((n, p, i + 1, m.group(8)))
                i += 1  # nested fns are measured too
                continue
            i += 1
out.sort(reverse=True)
for n, p, ln, name in out:
    print(f"{n:4d} {p}:{ln} {name}")
print(f"total {len(out)}")
