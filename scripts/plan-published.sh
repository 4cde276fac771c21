#!/usr/bin/env bash
# The published byte figures of REFERENCE.md §5, priced by `lowcomm plan` (docs/plan.md explains
# each match and each difference). Builds lowcomm first if needed.
#   bash scripts/plan-published.sh [OUT_FOLDER]    (tables on stdout; CSVs in OUT_FOLDER if given)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/release/apps/lowcomm/lowcomm ] || bash scripts/build.sh >/dev/null
lowcomm=build/release/apps/lowcomm/lowcomm
out=${1:-}
[ -z "$out" ] || mkdir -p "$out"
csv() { [ -z "$out" ] || echo --csv "$out/$1.csv"; }

# DeMo paper: OLMo 300M with k = 8 and OLMo 1B with k = 16, 64 H100s; AdamW-DDP in bf16.
"$lowcomm" plan --model olmo-300m --world-size 64 $(csv olmo-300m) \
  --method "adamw bf16: compressor.none.value_type=bf16" --method "adamw fp32:" \
  --method "demo k8: strategy.name=demo compressor.dct_topk.topk=8"
echo
"$lowcomm" plan --model olmo-1b --world-size 64 $(csv olmo-1b) \
  --method "adamw bf16: compressor.none.value_type=bf16" --method "adamw fp32:" \
  --method "demo k16: strategy.name=demo compressor.dct_topk.topk=16"
echo
# DisTrO's report: the Llama-2-style 1.2B model on 32 ranks, bf16 all-reduce against DeMo with
# the most compact wire lowcomm has (DisTrO's own encoding is not published).
"$lowcomm" plan --model llama-1.2b --world-size 32 $(csv llama-1.2b) \
  --method "adamw bf16: compressor.none.value_type=bf16" \
  --method "demo k4 1-bit: strategy.name=demo compressor.dct_topk.topk=4 compressor.dct_topk.wire=compact_1bit" \
  --method "demo k5 1-bit: strategy.name=demo compressor.dct_topk.topk=5 compressor.dct_topk.wire=compact_1bit"
