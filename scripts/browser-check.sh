#!/usr/bin/env bash
# Load a page in headless Chromium and fail on anything a reader would meet:
#   - a console message of any kind (the page logs nothing; errors, CSP refusals and uncaught
#     exceptions all arrive as console messages in Chromium's log);
#   - a network request made by the page (read from Chromium's net log: requests whose
#     initiator is the file:// page; the browser's own background traffic is not the page's);
#   - a rendered DOM without the content it must show: for a run folder's report.html, the
#     headline counts of results.json and the script's marks (sortable headers), which would
#     mean the inline script was blocked or failed; for any other page (--page), each --expect
#     text in the rendered DOM's text;
#   - no screenshot.
# Usage: scripts/browser-check.sh RUN_DIR [SCREENSHOT.png]   (default RUN_DIR/report.png)
#        scripts/browser-check.sh --page FILE.html [--expect TEXT]... [--screenshot PNG]
#                                                            (default FILE.png)
set -euo pipefail

USAGE="usage: scripts/browser-check.sh RUN_DIR [SCREENSHOT.png]
       scripts/browser-check.sh --page FILE.html [--expect TEXT]... [--screenshot PNG]"
RUN_DIR=
EXPECT=()
if [[ ${1:-} == --page ]]; then
    [[ $# -ge 2 ]] || { echo "$USAGE" >&2; exit 2; }
    [[ -f "$2" ]] || { echo "browser-check: no $2" >&2; exit 1; }
    PAGE="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
    SHOT=${PAGE%.html}.png
    shift 2
    while [[ $# -gt 0 ]]; do
        case $1 in
            --expect) [[ $# -ge 2 ]] || { echo "$USAGE" >&2; exit 2; }; EXPECT+=("$2"); shift 2 ;;
            --screenshot) [[ $# -ge 2 ]] || { echo "$USAGE" >&2; exit 2; }; SHOT=$2; shift 2 ;;
            *) echo "browser-check: unknown argument $1" >&2; echo "$USAGE" >&2; exit 2 ;;
        esac
    done
else
    RUN_DIR=${1:?$USAGE}
    PAGE="$(cd "$RUN_DIR" && pwd)/report.html"
    SHOT=${2:-$RUN_DIR/report.png}
    [[ -f "$PAGE" ]] || { echo "browser-check: no $PAGE" >&2; exit 1; }
    [[ -f "$RUN_DIR/results.json" ]] || { echo "browser-check: no $RUN_DIR/results.json" >&2; exit 1; }
fi
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$BROWSER" ]] || { echo "browser-check: chromium is not installed" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failed=0
fail() { echo "browser-check: FAIL: $*" >&2; failed=1; }

# One headless load; $1 names the pass, the rest are its action flags.
load() {
    local name=$1
    shift
    mkdir -p "$WORK/$name-profile"
    timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$WORK/$name-profile" --enable-logging=stderr --v=0 \
        --log-net-log="$WORK/$name-net.json" "$@" "file://$PAGE" \
        >"$WORK/$name.out" 2>"$WORK/$name.log" || fail "$name: chromium exited with $?"
    if grep -E ':CONSOLE[:(]' "$WORK/$name.log" >"$WORK/$name.console"; then
        fail "$name: console messages:"
        sed 's/^/    /' "$WORK/$name.console" >&2
    fi
    python3 - "$WORK/$name-net.json" <<'PY' || fail "$name: the page made network requests (above)"
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"    unreadable net log: {e}")
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
page = [
    p.get("url", "?")
    for e in log["events"]
    if e.get("type") == start
    for p in [e.get("params") or {}]
    if "url" in p
    and (p.get("initiator") != "not an origin" or "file://" in p.get("network_isolation_key", ""))
]
for url in page:
    print(f"    request: {url}", file=sys.stderr)
sys.exit(1 if page else 0)
PY
}

load dom --dump-dom
if [[ -z "$RUN_DIR" ]]; then
python3 - "$WORK/dom.out" "${EXPECT[@]}" <<'PY' || fail "rendered DOM (above)"
import html.parser, re, sys

class Text(html.parser.HTMLParser):
    """The text a reader sees: everything but style and script, whitespace collapsed."""
    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0
    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("style", "script", "title")
    def handle_endtag(self, tag):
        self.skip -= tag in ("style", "script", "title") and self.skip > 0
    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)

parser = Text()
parser.feed(open(sys.argv[1], encoding="utf-8").read())
text = re.sub(r"\s+", " ", " ".join(parser.parts))
if not text.strip():
    sys.exit("    the rendered DOM shows no text")
missing = [want for want in sys.argv[2:] if want not in text]
for want in missing:
    print(f"    the rendered DOM lacks {want!r}", file=sys.stderr)
print(f"browser-check: {len(sys.argv) - 2 - len(missing)} of {len(sys.argv) - 2} expected texts in the rendered DOM")
sys.exit(1 if missing else 0)
PY
else
python3 - "$RUN_DIR/results.json" "$WORK/dom.out" "$PAGE" <<'PY' || fail "rendered DOM (above)"
import html, json, re, sys
summary = json.load(open(sys.argv[1]))["summary"]
dom = open(sys.argv[2], encoding="utf-8").read()
page = open(sys.argv[3], encoding="utf-8").read()
bad = False
m = re.search(r'<strong id="headline">(.*?)</strong>', dom)
if not m:
    print("    no #headline element in the rendered DOM", file=sys.stderr)
    sys.exit(1)
headline = html.unescape(m.group(1))
want = [f"{summary['same']} same / {summary.get('format', 0)} format / {summary.get('no_answer', 0)} no answer / {summary['diff']} diff", f"/ {summary['review']} review / {summary['fail']} fail"]
for w in want:
    if w not in headline:
        print(f"    headline {headline!r} lacks {w!r}", file=sys.stderr)
        bad = True
if 'class="sortable"' in page and "aria-sort=" not in dom:
    print("    the inline script did not run (no sortable headers)", file=sys.stderr)
    bad = True
print(f"browser-check: headline in the rendered DOM: {headline}")
sys.exit(1 if bad else 0)
PY
fi

mkdir -p "$(dirname "$SHOT")"
rm -f "$SHOT"
load screenshot --screenshot="$SHOT" --window-size=1280,2000 --hide-scrollbars
if [[ ! -s "$SHOT" ]] || [[ "$(head -c 4 "$SHOT" | tail -c 3)" != "PNG" ]]; then
    fail "no screenshot at $SHOT"
fi

if ((failed)); then
    exit 1
fi
echo "browser-check: ok: no console messages, no network requests, screenshot $SHOT"
