#!/usr/bin/env bash
# `jsonledger pull` of PAGES pages from a local HTTP server against what a user scripts by hand:
# curl fetching the same pages to files, then one `jsonledger import` of them. Both write one
# batch into a new store. Runs both RUNS times, taking turns at going first, after one warm-up
# request (the server's first answer is slower: Python reads its MIME tables then), and prints
# each side's median and best wall time and the ratios (curl+import / pull: above 1.0 means
# pull is faster). Usage: pull-vs-curl.sh [JSONLEDGER] [PAGES] [ITEMS_PER_PAGE] [RUNS]
set -euo pipefail
J=${1:-.build/release/jsonledger}
PAGES=${2:-100}
ITEMS=${3:-100}
RUNS=${4:-10}
WORK=$(mktemp -d)
trap 'kill $SERVER 2> /dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/site"
python3 - "$WORK/site" "$PAGES" "$ITEMS" << 'PY'
import json, sys
site, pages, items = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for page in range(pages):
    rows = [{"number": page * items + i, "title": f"issue {page * items + i}", "state": "open",
             "body": "x" * 200, "comments": i % 7} for i in range(items)]
    with open(f"{site}/page-{page}.json", "w") as f:
        json.dump(rows, f)
PY
cat > "$WORK/model.json" << 'JSON'
{"entities": {"Issue": {"identity": "number",
  "attributes": {"number": "int64", "title": "string", "state": "string", "body": "string", "comments": "int64"}}}}
JSON
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$WORK/site" > /dev/null 2>&1 &
SERVER=$!
until (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2> /dev/null; do sleep 0.1; done
python3 - "$PORT" "$PAGES" > "$WORK/plan.json" << 'PY'
import json, sys
port, pages = sys.argv[1], int(sys.argv[2])
print(json.dumps({"sources": [{"url": f"http://127.0.0.1:{port}/page-{p}.json", "entity": "Issue"}
                              for p in range(pages)]}))
PY
curl -sf "http://127.0.0.1:$PORT/page-0.json" -o /dev/null
args=()
for p in $(seq 0 $((PAGES - 1))); do
  args+=("http://127.0.0.1:$PORT/page-$p.json" -o "$WORK/files/page-$p.json")
done
now() { date +%s%N; }
pulls=()
manuals=()
curls=()
pull_once() {
  local start
  start=$(now)
  "$J" pull "$WORK/a" --plan "$WORK/plan.json" > /dev/null
  pulls+=($(($(now) - start)))
}
for run in $(seq "$RUNS"); do
  rm -rf "$WORK/a" "$WORK/b" "$WORK/files"
  mkdir -p "$WORK/files"
  "$J" init "$WORK/a" --model "$WORK/model.json" > /dev/null
  "$J" init "$WORK/b" --model "$WORK/model.json" > /dev/null
  # Each side goes first in every other run: whichever runs second finds the server busier.
  if [ $((run % 2)) = 1 ]; then pull_once; fi
  start=$(now)
  curl -sf "${args[@]}"
  curls+=($(($(now) - start)))
  "$J" import "$WORK/b" "$WORK"/files/page-*.json --entity Issue > /dev/null
  manuals+=($(($(now) - start)))
  if [ $((run % 2)) = 0 ]; then pull_once; fi
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
ms() { echo "scale=1; $1 / 1000000" | bc; }
best() { printf '%s\n' "$@" | sort -n | head -n 1; }
pull=$(median "${pulls[@]}")
manual=$(median "${manuals[@]}")
echo "pull of $PAGES pages x $ITEMS items, $RUNS runs: median $(ms "$pull") ms, best $(ms "$(best "${pulls[@]}")") ms"
echo "curl + import: median $(ms "$manual") ms, best $(ms "$(best "${manuals[@]}")") ms" \
  "(curl alone: median $(ms "$(median "${curls[@]}")") ms, best $(ms "$(best "${curls[@]}")") ms)"
echo "ratio (curl+import / pull): medians $(echo "scale=2; $manual / $pull" | bc)," \
  "bests $(echo "scale=2; $(best "${manuals[@]}") / $(best "${pulls[@]}")" | bc)"
