#!/usr/bin/env bash
# FOLLOWERS `jsonledger follow --json` processes on one machine, each with its own replica of one
# ledger in a local PostgreSQL, while a leader (`jsonledger serve` on another replica) takes
# BATCHES small batches through its API, one every INTERVAL_MS. A batch's lag on a follower is the
# time from the leader's answer that it committed (a loopback round trip after the commit) to the
# follower printing a head at or past it. Prints p50, p99 and the worst, and the leader's writes.
#
# Needs a PostgreSQL server (Tools/Benchmarks/README.md starts one) and a built `jsonledger`.
# Usage: followers.sh JSONLEDGER URL [FOLLOWERS] [BATCHES] [INTERVAL_MS] [FOLLOW_OPTION…]
#   e.g. followers.sh .build/release/jsonledger postgres://postgres@127.0.0.1:55432/postgres 50 200 50
set -euo pipefail
J=$(realpath "${1:?the jsonledger binary}")
URL=${2:?a PostgreSQL URL}
FOLLOWERS=${3:-50}
BATCHES=${4:-200}
INTERVAL=${5:-50}
shift $(($# < 5 ? $# : 5))
WORK=$(mktemp -d)
LEDGER="followers-$$"
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/model.json" << 'JSON'
{"entities": {"Album": {"identity": "name", "attributes": {"name": "string", "label": "string"}}}}
JSON
echo '[{"name": "first", "label": "a"}]' > "$WORK/first.json"
"$J" init "$WORK/leader" --model "$WORK/model.json" > /dev/null
"$J" import "$WORK/leader" "$WORK/first.json" --entity Album > /dev/null
"$J" remote init "$WORK/leader" --remote "$URL" --ledger "$LEDGER" > /dev/null
for n in $(seq 1 "$FOLLOWERS"); do "$J" clone "$URL" "$WORK/f$n" --ledger "$LEDGER" > /dev/null; done
python3 - "$J" "$WORK" "$FOLLOWERS" "$BATCHES" "$INTERVAL" "$@" << 'PY'
import json, os, selectors, socket, subprocess, sys, time, urllib.error, urllib.request

tool, work, followers, batches, interval = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
options = sys.argv[6:]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
leader = subprocess.Popen([tool, "serve", f"{work}/leader", "--port", str(port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{port}"
deadline = time.time() + 30
while True:
    try:
        urllib.request.urlopen(base + "/healthz").read()
        break
    except OSError:
        if time.time() > deadline:
            sys.exit("the leader's server did not start")
        time.sleep(0.1)
processes = [subprocess.Popen([tool, "follow", f"{work}/f{n}", "--json", "--poll-interval", "5000", *options],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for n in range(1, followers + 1)]
selector = selectors.DefaultSelector()
buffers = {}
for index, process in enumerate(processes):
    os.set_blocking(process.stdout.fileno(), False)
    selector.register(process.stdout, selectors.EVENT_READ, index)
    buffers[index] = b""
heads = [0] * followers
seen = {}  # (follower, batch) -> time first seen at or past it


def read(timeout):
    for key, _ in selector.select(timeout):
        index = key.data
        chunk = os.read(key.fileobj.fileno(), 65536)
        if not chunk:
            selector.unregister(key.fileobj)
            continue
        now = time.monotonic()
        buffers[index] += chunk
        *lines, buffers[index] = buffers[index].split(b"\n")
        for line in lines:
            head = json.loads(line).get("head", 0)
            for batch in range(heads[index] + 1, head + 1):
                seen[(index, batch)] = now
            heads[index] = max(heads[index], head)


def write(round):
    body = json.dumps([{"name": f"album {round}", "label": f"label {round}"}]).encode()
    request = urllib.request.Request(base + "/v1/batches?entity=Album", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return json.load(response)["batch"]
    except urllib.error.HTTPError as error:
        # 502: the leader could not reach PostgreSQL, most often for want of connections (each
        # follower holds two: start the server with max_connections above twice FOLLOWERS).
        sys.exit(f"the leader answered {error.code}: {error.read().decode(errors='replace')[:300]}")


sent = {}
writes = []
try:
    # A follower prints only what it applies: one warm-up batch, seen by every follower, shows
    # that each is running and listening before the run starts.
    warmup = write("warm-up")
    deadline = time.time() + 60
    while min(heads) < warmup and time.time() < deadline:
        read(0.1)
    if min(heads) < warmup:
        sys.exit(f"{sum(head < warmup for head in heads)} of the followers did not apply the warm-up batch within a minute")
    for round in range(batches):
        started = time.monotonic()
        batch = write(round)
        at = time.monotonic()
        sent[batch] = at
        writes.append((at - started) * 1000)
        until = at + interval / 1000
        while time.monotonic() < until:
            read(max(0, until - time.monotonic()))
    deadline = time.time() + 30
    last = max(sent)
    while min(heads) < last and time.time() < deadline:
        read(0.1)
finally:
    for process in processes:
        process.terminate()
    leader.terminate()
lags = sorted((seen[(index, batch)] - at) * 1000 for batch, at in sent.items()
              for index in range(followers) if (index, batch) in seen)
missing = len(sent) * followers - len(lags)
if not lags:
    sys.exit("no follower saw a batch")
p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]
writes.sort()
print(f"{followers} followers, {len(sent)} batches one every {interval} ms: lag p50 {p(0.5):.1f} ms, "
      f"p99 {p(0.99):.1f} ms, worst {lags[-1]:.1f} ms ({len(lags)} sightings, {missing} missing); "
      f"the leader's write p50 {writes[len(writes) // 2]:.1f} ms")
PY
