#!/usr/bin/env bash
# The JPEG input pipeline: images/s of drun's data.image_folder (libjpeg-turbo
# decode + random-resized-crop 224 + flip + batch 64, on 1 and 2 decode
# threads) against PyTorch's DataLoader with torchvision's ImageFolder,
# RandomResizedCrop, RandomHorizontalFlip and ToTensor (num_workers 1 and 2),
# on the same JPEG files.
#
#   tools/bench/input.sh [--threads "1 2"] [--repeats 5] [--count 2000]
#
# The files (count photo-like JPEGs of about 500x375 in 10 class folders) are
# made once under build/bench/jpeg-folder by tools/bench/make_jpeg_folder.py.
# PyTorch and torchvision come from PyPI into build/bench/torch-venv (as
# tools/bench/cpu.sh makes it; torchvision is added here, pinned to the
# installed torch); TORCH2_PY names another Python that has both. For every
# thread count the two run in turn, `repeats` times, in an order that
# alternates each repeat; the table has the medians and drun's ratio. Written
# to build/bench/input.md (raw JSON lines: build/bench/input.jsonl).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

THREADS="1 2"
REPEATS=5
COUNT=2000
usage() { echo "usage: tools/bench/input.sh [--threads \"1 2\"] [--repeats 5] [--count 2000]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) [[ $# -ge 2 ]] || usage; THREADS="$2"; shift 2 ;;
    --repeats) [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    --count)   [[ $# -ge 2 ]] || usage; COUNT="$2"; shift 2 ;;
    *) usage ;;
  esac
done

OUTDIR=build/bench
BENCH="${INPUT_BENCH:-build/tools/bench/input_bench}"
VENV="$OUTDIR/torch-venv"
PY="${TORCH2_PY:-$VENV/bin/python}"
DATA="$OUTDIR/jpeg-folder"
mkdir -p "$OUTDIR"
[[ -x "$BENCH" ]] || { echo "error: $BENCH is missing; run tools/bootstrap first" >&2; exit 1; }

if [[ "$PY" == "$VENV/bin/python" ]] && ! "$PY" -c 'import torch, torchvision' 2>/dev/null; then
  if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "# installing PyTorch 2.x from PyPI into $VENV" >&2
    /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check torch numpy >&2
  fi
  # torchvision pinned to the torch there, so pip does not replace torch.
  torch_version=$("$PY" -c 'import torch; print(torch.__version__.split("+")[0])')
  echo "# installing torchvision for torch $torch_version into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check torchvision "torch==$torch_version" >&2
fi
if [[ ! -f "$DATA/.complete-$COUNT" ]]; then
  rm -rf "$DATA"
  echo "# writing $COUNT JPEG files into $DATA" >&2
  "$PY" tools/bench/make_jpeg_folder.py "$DATA" --count "$COUNT"
  touch "$DATA/.complete-$COUNT"
fi

cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores), $(date -u +%Y-%m-%d)"
JSONL="$OUTDIR/input.jsonl"
: > "$JSONL"
run() {  # $1 = drun|torch, $2 = threads
  if [[ "$1" == drun ]]; then
    "$BENCH" "$DATA" "$2" --batch 64 --size 224
  else
    "$PY" tools/bench/input_torch.py "$DATA" --workers "$2" --batch 64 --size 224
  fi
}
for t in $THREADS; do
  for r in $(seq 1 "$REPEATS"); do
    order="drun torch"
    (( r % 2 == 0 )) && order="torch drun"
    for who in $order; do
      line=$(run "$who" "$t")
      echo "{\"who\": \"$who\", \"threads\": $t, \"repeat\": $r, \"result\": $line}" >> "$JSONL"
      echo "# $who threads=$t repeat $r: $line" >&2
    done
  done
done

/usr/bin/python3 - "$JSONL" "$cpu" "$REPEATS" <<'PY' | tee "$OUTDIR/input.md"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cpu, repeats = sys.argv[2], sys.argv[3]
med = {}
for r in rows:
    med.setdefault((r["who"], r["threads"]), []).append(r["result"]["images_per_sec"])
print(f"CPU: {cpu}")
print()
print("| threads / workers | drun images/s | PyTorch DataLoader images/s | ratio (drun / PyTorch) |")
print("| --- | --- | --- | --- |")
for t in sorted({k[1] for k in med}):
    d, p = statistics.median(med[("drun", t)]), statistics.median(med[("torch", t)])
    print(f"| {t} | {d:.0f} | {p:.0f} | {d / p:.2f}x |")
print()
print(f"Medians of {repeats} interleaved repeats; JPEG decode + random-resized-crop 224 + flip, "
      "batch 64, float32 in [0, 1].")
PY
