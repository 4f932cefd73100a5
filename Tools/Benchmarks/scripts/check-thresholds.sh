#!/usr/bin/env bash
# Counts the instructions per object of JSONLedger's workloads under callgrind, in a release
# build, and fails when one costs more than Tools/Benchmarks/Thresholds/instructions.json
# allows, naming it. `--record` writes the counts as the new thresholds instead.
# Needs valgrind (Debian's package). About 7 minutes from a clean clone on two cores (most of
# it the release build), 3 minutes of counting.
set -euo pipefail
cd "$(dirname "$0")/../../.."
thresholds=Tools/Benchmarks/Thresholds/instructions.json
swift build -c release --package-path Tools/Benchmarks --product jsonledger-bench
bench=Tools/Benchmarks/.build/release/jsonledger-bench
if [ "${1:-}" = "--record" ]; then
  exec "$bench" --record-thresholds "$thresholds"
fi
exec "$bench" --check-thresholds "$thresholds"
