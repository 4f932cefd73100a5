#!/usr/bin/env bash
# Time to first byte of the console's pages over a store of OBJECTS issues imported in one
# batch, then one more batch updating 100 of them: the timeline, the big batch's page (its
# first 50 changes), the small batch's, an entity list, an object with its history, and a
# diff. Prints each page's time to first byte (curl's time_starttransfer), the best of 5.
# Usage: console-ttfb.sh [JSONLEDGER] [OBJECTS]
set -euo pipefail
J=${1:-.build/release/jsonledger}
OBJECTS=${2:-100000}
WORK=$(mktemp -d)
trap 'kill $SERVER 2> /dev/null || true; rm -rf "$WORK"' EXIT
cat > "$WORK/model.json" << 'JSON'
{"entities": {"Issue": {"identity": "number",
  "attributes": {"number": "int64", "title": "string", "state": "string", "body": "string", "comments": "int64"}}}}
JSON
python3 - "$WORK" "$OBJECTS" << 'PY'
import json, sys
work, count = sys.argv[1], int(sys.argv[2])
rows = [{"number": n, "title": f"issue {n}", "state": "open", "body": "x" * 200, "comments": n % 7} for n in range(count)]
json.dump(rows, open(f"{work}/all.json", "w"))
json.dump([dict(row, state="closed") for row in rows[:100]], open(f"{work}/some.json", "w"))
PY
"$J" init "$WORK/s" --model "$WORK/model.json" > /dev/null
"$J" import "$WORK/s" "$WORK/all.json" --entity Issue > /dev/null
"$J" import "$WORK/s" "$WORK/some.json" --entity Issue > /dev/null
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$J" serve "$WORK/s" --port "$PORT" > /dev/null 2>&1 &
SERVER=$!
until curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null; do sleep 0.1; done
for path in / /batches/1 /batches/2 /entities/Issue /objects/Issue/7 "/diff?from=1&to=2"; do
  best=
  for _ in 1 2 3 4 5; do
    t=$(curl -s -o /dev/null -w '%{time_starttransfer}' "http://127.0.0.1:$PORT$path")
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  printf '%-22s %6.1f ms\n' "$path" "$(echo "$best * 1000" | bc)"
done
