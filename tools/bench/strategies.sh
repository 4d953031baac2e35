#!/usr/bin/env bash
# Every strategy on the seed CNN with Fashion-MNIST, in one run: 2 workers
# (plus 1 parameter server for every strategy but AllReduce) on this machine,
# the full 60,000 training images, 3 epochs, batch 64 per worker, SGD lr 0.01
# momentum 0.9 (scripts/strategies/NAME.lua with their paper parameters).
# Reports the chief's test accuracy after the last epoch, training images/s
# (all workers) and the staleness the servers measured in the last epoch.
#
#   tools/bench/strategies.sh [--epochs 3] [--train-limit 0] [NAME ...]
#
# Raw summaries go to build/bench/strategies/NAME.json, the table to
# build/bench/strategies.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

EPOCHS=3
LIMIT=0
NAMES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs) EPOCHS="$2"; shift 2 ;;
    --train-limit) LIMIT="$2"; shift 2 ;;
    -h|--help) echo "usage: $0 [--epochs 3] [--train-limit 0] [NAME ...]" >&2; exit 2 ;;
    *) NAMES+=("$1"); shift ;;
  esac
done
if [[ ${#NAMES[@]} -eq 0 ]]; then
  NAMES=(all_reduce ps_async ps_sync downpour downpour_easy hogwild agn sagn easgd aeasgd aeamsgd
         dyn_sgd sync_sgd)
fi

OUT=build/bench/strategies
mkdir -p "$OUT"
for name in "${NAMES[@]}"; do
  dir=$(mktemp -d)
  build/drun -q -np 2 "scripts/strategies/$name.lua" --epochs "$EPOCHS" --train-limit "$LIMIT" \
    --model-dir "$dir" >/dev/null
  cp "$dir/summary.json" "$OUT/$name.json"
  rm -rf "$dir"
  echo "done: $name" >&2
done

python3 - "$OUT" "$EPOCHS" "${NAMES[@]}" <<'PY' | tee build/bench/strategies.md
import json, sys
out, epochs, names = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"| strategy | test accuracy after {epochs} epochs | images/s | staleness mean / max |")
print("|---|---|---|---|")
for n in names:
    s = json.load(open(f"{out}/{n}.json"))
    st = s.get("strategy", {})
    stale = f"{st['staleness_mean']:.2f} / {st['staleness_max']:.0f}" if st else "n/a"
    print(f"| {n} | {s['eval']['accuracy']:.4f} | {s['train']['images_per_sec']:.0f} | {stale} |")
PY
