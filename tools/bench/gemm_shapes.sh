#!/usr/bin/env bash
# Where a language model's step loses or wins against PyTorch in its matrix
# products: each product of tools/bench/gemm_shapes.txt (the transformer LM's
# or the LSTM LM's, batch 32 x 64 steps) timed as drun's layers call it
# (gemm_shapes.cpp: drun's own kernel or OpenBLAS, as the step routes it)
# and as PyTorch's layers do (gemm_shapes_torch.py: MKL where PyTorch's wheel
# has it, see the header), in turn, `repeats` times per thread count; the
# table has the medians, drun's time over PyTorch's per product, and each
# side's total per step (count x time summed). The CPU model, PyTorch's
# version and BLAS head it. Written to build/bench/gemm_shapes.md (raw JSON
# lines to build/bench/gemm_shapes.jsonl).
#
#   tools/bench/gemm_shapes.sh [--model transformer|lstm] [--threads "1 2"] [--repeats 3]
#
# PyTorch comes from the virtual environment tools/bench/cpu.sh installs
# (build/bench/torch-venv; TORCH2_PY names another python); GEMM_SHAPES
# names another gemm_shapes binary (a lent machine's bundle).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

MODEL=transformer THREADS="1 2" REPEATS=3
usage() {
  echo "usage: tools/bench/gemm_shapes.sh [--model transformer|lstm] [--threads \"1 2\"] [--repeats 3]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model)   [[ $# -ge 2 ]] || usage; MODEL="$2"; shift 2 ;;
    --threads) [[ $# -ge 2 ]] || usage; THREADS="$2"; shift 2 ;;
    --repeats) [[ $# -ge 2 ]] || usage; REPEATS="$2"; shift 2 ;;
    *) usage ;;
  esac
done
LIST=tools/bench/gemm_shapes.txt
BIN="${GEMM_SHAPES:-build/tools/bench/gemm_shapes}"
PY="${TORCH2_PY:-build/bench/torch-venv/bin/python}"
OUT=build/bench
grep -q "^$MODEL " "$LIST" || { echo "error: no products of model '$MODEL' in $LIST" >&2; exit 2; }
[[ -x "$BIN" ]] || { echo "error: $BIN is missing; build with ninja -C build" >&2; exit 1; }
"$PY" -c 'import torch' 2>/dev/null ||
  { echo "error: no PyTorch at $PY; tools/bench/cpu.sh --models transformer_lm installs it" >&2; exit 1; }
mkdir -p "$OUT"
RAW="$OUT/gemm_shapes.jsonl"
: > "$RAW"

for r in $(seq 1 "$REPEATS"); do
  for t in $THREADS; do
    # Alternate who goes first, so that a slow spell of the machine hits both.
    runs=(drun pytorch); (( r % 2 )) || runs=(pytorch drun)
    for who in "${runs[@]}"; do
      echo "# repeat $r, $t threads: $who" >&2
      if [[ "$who" == drun ]]; then
        "$BIN" --list "$LIST" --model "$MODEL" --threads "$t"
      else
        OMP_NUM_THREADS="$t" "$PY" tools/bench/gemm_shapes_torch.py --list "$LIST" --model "$MODEL" --threads "$t"
      fi | sed "s/^{/{\"who\":\"$who\",/" >> "$RAW"
    done
  done
done

CPU="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)"
TORCH="$("$PY" -c 'import re, torch; c = torch.__config__.show(); b = re.search(r"BLAS_INFO=(\w+)", c); print(torch.__version__, "BLAS", b.group(1) if b else "?")')"
python3 - "$RAW" "$CPU ($(nproc) cores)" "$TORCH" "$MODEL" "$REPEATS" > "$OUT/gemm_shapes.md" <<'EOF'
import collections, json, statistics, sys
raw, cpu, torch, model, repeats = sys.argv[1:]
ms = collections.defaultdict(list)
order, counts = [], {}
for line in open(raw):
    r = json.loads(line)
    key = (r['threads'], r['product'])
    if key not in counts:
        order.append(key)
        counts[key] = (r['count'], r['m'], r['n'], r['k'])
    ms[key + (r['who'],)].append(r['ms'])
print(f'CPU: {cpu}; PyTorch {torch}\n')
print(f'{model} LM, its step\'s matrix products (tools/bench/gemm_shapes.txt): ms per call, '
      f'medians of {repeats} interleaved repeats\n')
print('| product | m x n x k | count | threads | drun ms | PyTorch ms | drun / PyTorch |')
print('| --- | --- | --- | --- | --- | --- | --- |')
total = collections.defaultdict(float)
for t, p in order:
    c, m, n, k = counts[(t, p)]
    d = statistics.median(ms[(t, p, 'drun')])
    q = statistics.median(ms[(t, p, 'pytorch')])
    total[(t, 'drun')] += c * d
    total[(t, 'pytorch')] += c * q
    print(f'| {p} | {m} x {n} x {k} | {c} | {t} | {d:.3f} | {q:.3f} | {d / q:.2f} |')
for t in sorted({t for t, _ in order}):
    d, q = total[(t, 'drun')], total[(t, 'pytorch')]
    print(f'| **all, per step** | | | {t} | {d:.2f} | {q:.2f} | {d / q:.2f} |')
EOF
cat "$OUT/gemm_shapes.md"
echo "# wrote $OUT/gemm_shapes.md and $RAW" >&2
