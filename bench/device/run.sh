#!/bin/bash
# The one GPU-machine script: runs the steps named on its command line, in order, from the repository root, with
# .devrun/ prepared as bench/device/README.md says. Results go to $OUT (one file per step, a summary in
# $OUT/summary.txt).
#
#   bash .devrun/run.sh STEP [STEP ...]
#
# Steps (fields separated by ':'; BIN is a binary in .devrun, default ogx):
#   gpu                          name, driver and clocks of the GPU (nvidia-smi)
#   tests[:FILTER]               kernel suite (gtest FILTER; 'none': skip it) then the goldens, device sampling and
#                                the default model on the GPU, validation layers on
#   check[:SHAPES_DIR]           tests/check_architectures.sh --full on the GPU: `ogx check` (CPU provider against the
#                                GPU, prompts 1..129, 32 new tokens) over the 36 random-weight folders `ogx build`
#                                makes (6 architectures x fp32/fp16/int4 x cpu/dml), plus SHAPES_DIR/*.json shapes
#   bench:SHAPE:PREC[:P[:G[:BIN[:EXTRA]]]]
#                                `ogx bench --synthetic` of .devrun/shapes/SHAPE.json (prompt P=128, G=128 new tokens,
#                                median of 3); EXTRA is passed on (e.g. 'provider-option enable_profiling=1' with
#                                spaces written as '+')
#   folder:SHAPE:PREC[:P[:BIN]]  a real folder: `ogx build --random-weights` to /dev/shm, then `ogx bench` on it
#                                (load_ms, decode) and the wall time of one `ogx generate` (load to last token)
#   ab:BIN1,BIN2[,...]:SHAPE:PREC[:ROUNDS]
#                                builds alternated ROUNDS times (default 3) on one machine: same-run A/B
#   llamacpp[:ARGS]              ../shared/llamacpp-bench/device.sh (llama.cpp's Vulkan llama-bench), ARGS with '+'
#                                for spaces (e.g. 'llamacpp:--no-8b'); needs .devrun/llamacpp/ (a copy of that folder
#                                with its work/ payload)
set -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/env.sh"
SUMMARY=$OUT/summary.txt
log() { echo "$*" | tee -a "$SUMMARY"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }  # seconds since $1 (ms)

step_gpu() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
}

step_tests() { gpu_tests "${1:-*}" | tee -a "$SUMMARY"; }

step_check() {  # tests/check_architectures.sh on the GPU: 36 tiny folders (+ the shapes in $1, a folder of HF configs)
  local extra=(); [ -n "$1" ] && extra=(--shapes "$1")
  timeout 540 bash tests/check_architectures.sh ./.devrun/ogx . --full --device gpu "${extra[@]}" > $OUT/check.txt 2>&1
  log "check: rc=$?"; grep -E "FAIL|NEAR|PASS|SKIP|fallback" $OUT/check.txt | tail -60 | tee -a "$SUMMARY"
}

step_bench() {
  local shape=$1 prec=$2 bin=${5:-ogx} extra=${6//+/ }
  PROMPT_LEN=${3:-128} GEN_LEN=${4:-128} bench_model $bin $shape $prec "$extra" _p${3:-128} | tee -a "$SUMMARY"
}

step_folder() {
  local shape=$1 prec=$2 P=${3:-128} bin=${4:-ogx} dir=/dev/shm/folder-$1-$2
  if [ ! -d $dir ]; then  # a folder made by an earlier step is reused (so builds can be compared on it)
    rm -rf /dev/shm/folder-*
    local t0=$(now_ms)
    ./.devrun/ogx build --config .devrun/shapes/$shape.json --random-weights -o $dir -p $prec -e dml \
      > $OUT/folder_build.txt 2>&1 || { log "folder $shape $prec: build failed"; return; }
    log "folder $shape $prec: built in $(since $t0) s, $(du -sh $dir | cut -f1)"
  fi
  for i in 1 2; do
    local t0=$(now_ms)
    timeout 300 ./.devrun/$bin generate $dir --ids 1,2,3,4 --max-new-tokens 8 --min-new-tokens 8 --greedy \
      --provider dml --json > $OUT/folder_generate_$bin.json 2>&1
    log "folder $shape $prec $bin: generate (load + 4 + 8 tokens) wall $(since $t0) s"
  done
  local out=$OUT/folder_${bin}_${shape}_${prec}_p$P
  timeout 300 ./.devrun/$bin bench $dir --provider dml --prompt-len $P --gen-len 128 --repeats 3 --json \
    > $out.json 2> $out.err
  log "folder $shape $prec p$P $bin: $(grep -o '"load_ms":[0-9.]*\|"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"peak_rss_mib":[0-9.]*\|"replay_run_us_median":[0-9.]*\|"replay_gpu_us_median":[0-9.]*\|"dropped_runs":[0-9.]*\|"queued_runs":[0-9.]*' $out.json | tr '\n' ' ')"
  PROMPT_LEN=$P bench_model $bin $shape $prec "" _synthetic_p$P | tee -a "$SUMMARY"
}

step_ab() {
  local bins=${1//,/ } shape=$2 prec=$3 rounds=${4:-3}
  for r in $(seq $rounds); do
    for b in $bins; do bench_model $b $shape $prec "" _r$r | tee -a "$SUMMARY"; done
  done
}

step_llamacpp() {
  OUT=$OUT bash .devrun/llamacpp/device.sh ${1//+/ } > $OUT/llamacpp.log 2>&1
  grep RESULT $OUT/llamacpp.txt | tee -a "$SUMMARY"
}

for step in "$@"; do
  IFS=: read -r name a1 a2 a3 a4 a5 a6 <<< "$step"
  log "== $step ($(date +%T))"
  case $name in
    gpu | tests | check | bench | folder | ab | llamacpp) step_$name "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" ;;
    *) log "unknown step '$name'" ;;
  esac
done
