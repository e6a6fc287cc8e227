#!/bin/bash
# The one GPU-machine script: runs the steps named on its command line, in order, from the repository root, with
# .devrun/ prepared as bench/device/README.md says. Results go to $OUT (one file per step, a summary in
# $OUT/summary.txt).
#
#   bash .devrun/run.sh STEP [STEP ...]
#
# Steps (fields separated by ':'; BIN is a binary in .devrun, default ogx):
#   gpu                          name, driver and clocks of the GPU (nvidia-smi)
#   tests[:FILTER]               kernel suite (gtest FILTER, ',' for ':'; 'none': skip it) then the goldens, device sampling and
#                                the default model on the GPU, validation layers on
#   check[:SHAPES_DIR[:OPTION]]  tests/check_architectures.sh --full on the GPU: `ogx check` (CPU provider against the
#                                GPU, prompts 1..129, 32 new tokens) over the 36 random-weight folders `ogx build`
#                                makes (6 architectures x fp32/fp16/int4 x cpu/dml), plus SHAPES_DIR/*.json shapes;
#                                OPTION: one provider option K=V for every check (e.g. 'check::tuning=decode_chunk_min_keys=1')
#   bench:SHAPE:PREC[:P[:G[:BIN[:EXTRA]]]]
#                                `ogx bench --synthetic` of .devrun/shapes/SHAPE.json (prompt P=128, G=128 new tokens,
#                                median of 3); EXTRA is passed on (e.g. 'provider-option enable_profiling=1' with
#                                spaces written as '+')
#   batch:SHAPE:PREC[:BATCHES[:BEAMS[:P[:G]]]]
#                                `ogx bench --synthetic --batch B` for each B of BATCHES (comma list, default 1,4,16,32)
#                                with --num-beams BEAMS (default 1): aggregate decode tokens/s, time per decode step,
#                                KV cache bytes per sequence (P=128, G=128)
#   coldload:SHAPE:PREC          a real folder on disk: `ogx generate` after evicting it from the page cache (cold),
#                                then again (warm), and `ogx bench` on it (load_ms, peak RSS)
#   folder:SHAPE:PREC[:P[:BIN]]  a real folder: `ogx build --random-weights` to /dev/shm, then `ogx bench` on it
#                                (load_ms, decode) and the wall time of one `ogx generate` (load to last token)
#   ab:BIN1,BIN2[,...]:SHAPE:PREC[:ROUNDS[:EXTRA]]
#                                builds alternated ROUNDS times (default 3) on one machine: same-run A/B; EXTRA as
#                                for bench (e.g. '--batch+16')
#   abopt:SHAPE:PREC:ROUNDS:OPTS1/OPTS2[/...][:BASE]
#                                one build (ogx) under option sets alternated ROUNDS times: each OPTS is extra
#                                `ogx bench` arguments ('+' for spaces, '-' for none), e.g.
#                                '-/--provider-option+tuning=q4_wide_half=1'; BASE is added to every set
#                                (e.g. '--batch+16')
#   kbench:BIN1[,BIN2...]:ARGS   the kernel bench (BIN: ogx_vulkan_bench or an A/B copy of it) with ARGS ('+' for
#                                spaces, e.g. '--matmul-only+--m+16+--shape-8b'), the builds alternated twice
#   llamacpp[:ARGS]              ../shared/llamacpp-bench/device.sh (llama.cpp's Vulkan llama-bench), ARGS with '+'
#                                for spaces (e.g. 'llamacpp:--no-8b'); needs .devrun/llamacpp/ (a copy of that folder
#                                with its work/ payload); its environment overrides pass through, e.g. decode at
#                                depth: QUANTS=F16 PP=0 TG=64 REPS=1 BENCH_ARGS='-d 8192,32768' run.sh llamacpp
#   serve:SHAPE:PREC[:CLIENTS[:MAX_TOKENS[:TEMPERATURE[:TOP_P[:FREQUENCY_PENALTY]]]]]
#                                bench/serve_bench.sh on a random-weight folder of SHAPE (CLIENTS default 1,8,32,64,
#                                128 new tokens, 128-token prompts; TEMPERATURE default 0.8, 0 = greedy;
#                                FREQUENCY_PENALTY default 0: the requests' penalty, applied on the device)
#   generators:SHAPE:PREC[:COUNTS[:P[:G[:BIN]]]]
#                                `ogx bench --generators N` on a real folder for each N of COUNTS (default 16,64):
#                                N sequences of different prompt lengths decoded together (P=128, G=64)
#   spec:SHAPE:PREC[:DRAFT_SHAPE[:repeating[:EXTRA]]]
#                                `ogx bench --speculative` on a real folder: n-gram on a repetitive prompt (prompt 512,
#                                period 32, 256 new tokens) against plain decoding, n-gram with chained lookups
#                                (ngramc), and with DRAFT_SHAPE a draft model;
#                                'repeating': folders built with --repeating-weights (greedy decoding repeats the last
#                                token, so drafts are accepted: the speed-up at full acceptance; random weights
#                                accept none); EXTRA as for bench (e.g. '--provider-option+tuning=q4_wide_max_m=8')
#   sample:SHAPE:PREC[:BIN]      `ogx bench --synthetic --temperature 0.8` with top-p 0.9, top-k 50 and the whole
#                                distribution, alternated twice; decode tok/s of each (the device sampler's cost)
#   guidance:SHAPE:PREC          `ogx generate` (prompt 'hello', 128 new tokens, twice each) on a random-weight folder with
#                                the Llama 3 tokenizer copied in: unconstrained, --regex '[a-z ]+', --json-schema
#                                bench/data/guidance_schema.json; decode tok/s of each (structured output's cost)
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

step_tests() { local f=${1:-*}; gpu_tests "${f//,/:}" | tee -a "$SUMMARY"; }  # ',' for gtest's ':' 

step_check() {  # tests/check_architectures.sh on the GPU: 36 tiny folders (+ the shapes in $1, a folder of HF configs)
  local extra=(); [ -n "$1" ] && extra=(--shapes "$1")
  [ -n "$2" ] && extra+=(--provider-option "$2")
  timeout 540 bash tests/check_architectures.sh ./.devrun/ogx . --full --device gpu "${extra[@]}" > $OUT/check.txt 2>&1
  log "check: rc=$?"; grep -E "FAIL|NEAR|PASS|SKIP|fallback" $OUT/check.txt | tail -60 | tee -a "$SUMMARY"
}

step_bench() {
  local shape=$1 prec=$2 bin=${5:-ogx} extra=${6//+/ }
  PROMPT_LEN=${3:-128} GEN_LEN=${4:-128} bench_model $bin $shape $prec "$extra" _p${3:-128} | tee -a "$SUMMARY"
}

step_batch() {
  local shape=$1 prec=$2 batches=${3:-1,4,16,32} beams=${4:-1} bin=ogx
  for b in ${batches//,/ }; do
    PROMPT_LEN=${5:-128} GEN_LEN=${6:-128} bench_model $bin $shape $prec "--batch $b --num-beams $beams" \
      _b${b}_beams$beams > /dev/null
    local out=$OUT/${bin}_${shape}_${prec}_b${b}_beams$beams
    log "batch $shape $prec B=$b beams=$beams $bin: $(grep -o '"decode_tok_s":[0-9.]*\|"decode_step_ms":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"kv_bytes_per_sequence[a-z_]*":[0-9.e+]*\|"replay_gpu_us_median":[0-9.]*\|"queued_runs":[0-9.]*\|"beam_step_ms":{[^}]*}' $out.json | tr '\n' ' ') $(tail -1 $out.err)"
  done
}

# Evicts the files under $1 from the page cache (a cold load): POSIX_FADV_DONTNEED per file after a sync, which needs no
# root (clean pages only); also drop_caches where the machine allows it. Prints the page cache's size before / after.
evict_folder() {
  sync
  local before=$(awk '/^Cached:/{print $2}' /proc/meminfo)
  python3 -c "
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)" "$1" 2>/dev/null || echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
  echo "page cache $((before / 1024)) -> $(( $(awk '/^Cached:/{print $2}' /proc/meminfo) / 1024 )) MiB"
}

# coldload:SHAPE:PREC: a random-weight folder on disk (not /dev/shm), evicted from the page cache, then `ogx generate`
# (load + 4 + 8 tokens) cold and warm, and `ogx bench` on it (load_ms warm).
step_coldload() {
  local shape=$1 prec=$2 dir=/var/tmp/ogx-cold-$1-$2
  if [ ! -f $dir/genai_config.json ]; then
    rm -rf /var/tmp/ogx-cold-*
    local t0=$(now_ms)
    timeout 500 ./.devrun/ogx build --config .devrun/shapes/$shape.json --random-weights -o $dir -p $prec -e dml \
      > $OUT/coldload_build.txt 2>&1 || { log "coldload $shape $prec: build failed"; return; }
    log "coldload $shape $prec: built in $(since $t0) s, $(du -sh $dir | cut -f1) on $(df --output=source $dir | tail -1)"
  fi
  for mode in cold warm; do
    [ $mode = cold ] && log "coldload $shape $prec: evicted: $(evict_folder $dir)"
    local t0=$(now_ms)
    timeout 300 ./.devrun/ogx generate $dir --ids 1,2,3,4 --max-new-tokens 8 --min-new-tokens 8 --greedy \
      --provider dml --json > $OUT/coldload_generate_$mode.json 2>&1
    log "coldload $shape $prec $mode: generate (load + 4 + 8 tokens) wall $(since $t0) s, rc $?"
  done
  local out=$OUT/coldload_bench_${shape}_${prec}
  timeout 300 ./.devrun/ogx bench $dir --provider dml --prompt-len 128 --gen-len 32 --repeats 1 --json > $out.json 2> $out.err
  log "coldload $shape $prec bench (warm): $(grep -o '"load_ms":[0-9.]*\|"peak_rss_mib":[0-9.]*\|"decode_tok_s":[0-9.]*' $out.json | tr '\n' ' ')"
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
  local bins=${1//,/ } shape=$2 prec=$3 rounds=${4:-3} extra=${5//+/ }
  for r in $(seq $rounds); do
    for b in $bins; do bench_model $b $shape $prec "$extra" _r$r | tee -a "$SUMMARY"; done
  done
}

step_abopt() {
  local shape=$1 prec=$2 rounds=${3:-3} sets=$4 base=${5//+/ } i
  for r in $(seq $rounds); do
    i=0
    for o in ${sets//\// }; do
      i=$((i + 1))
      [ "$o" = - ] && o=""
      bench_model ogx $shape $prec "$base ${o//+/ }" _opt${i}_r$r | sed "s|\$| [set $i: ${o//+/ }]|" | tee -a "$SUMMARY"
    done
  done
}

step_kbench() {
  local bins=${1//,/ } args=${2//+/ } tag=${2//[^a-z0-9]/}
  for r in 1 2; do
    for b in $bins; do
      timeout 200 ./.devrun/$b $args > $OUT/kbench_${b}_${tag}_r$r.txt 2>&1
      log "kbench $b $args (round $r): rc=$?"; grep -vE '^\s*$' $OUT/kbench_${b}_${tag}_r$r.txt | tail -25 | tee -a "$SUMMARY"
    done
  done
}

step_llamacpp() {
  OUT=$OUT bash .devrun/llamacpp/device.sh ${1//+/ } > $OUT/llamacpp.log 2>&1
  grep RESULT $OUT/llamacpp.txt | tee -a "$SUMMARY"
}

folder_of() {  # folder_of SHAPE PREC [repeating]: a random-weight dml folder in /dev/shm (built once)
  local dir=/dev/shm/ogx-$1-$2${3:+-$3} extra=${3:+--repeating-weights}
  [ -f $dir/genai_config.json ] || timeout 400 ./.devrun/ogx build --config .devrun/shapes/$1.json --random-weights \
    $extra -p $2 -e dml -o $dir > /dev/null
  echo $dir
}

step_serve() {
  local shape=$1 prec=$2 clients=${3:-1,8,32,64} max_tokens=${4:-128} temperature=${5:-0.8} top_p=${6:-1}
  local frequency_penalty=${7:-0}
  OUT=$OUT TEMPERATURE=$temperature TOP_P=$top_p FREQUENCY_PENALTY=$frequency_penalty timeout 500 \
    bash bench/serve_bench.sh .devrun/ogx "$(folder_of $shape $prec)" \
    "$clients" "$max_tokens" 128 2>&1 | tail -$(( $(echo $clients | tr ',' '\n' | wc -l) + 3 )) | tee -a "$SUMMARY"
}

step_generators() {
  local shape=$1 prec=$2 counts=${3:-16,64} P=${4:-128} G=${5:-64} bin=${6:-ogx} dir
  dir=$(folder_of $shape $prec)
  for n in ${counts//,/ }; do
    local out=$OUT/generators_${shape}_${prec}_${n}_$bin
    timeout 300 ./.devrun/$bin bench $dir --provider dml --prompt-len $P --gen-len $G --generators $n --repeats 1 \
      --json > $out.json 2> $out.err
    log "generators $shape $prec N=$n $bin: $(grep -o '"decode_tok_s":[0-9.]*\|"replay_gpu_us_median":[0-9.]*' $out.json | tr '\n' ' ')"
  done
}

step_guidance() {
  local shape=$1 prec=$2 dir; dir=$(folder_of $1 $2)
  cp .devrun/shared/tok/tokenizer* $dir/
  gen() {  # gen LABEL MIN_NEW [constraint arguments]
    local label=$1 mn=$2; shift 2
    local j; j=$(timeout 60 ./.devrun/ogx generate $dir --prompt hello --max-new-tokens 128 --min-new-tokens $mn \
      --provider dml "$@" --json 2>&1)
    log "guidance $shape $prec $label: $(echo "$j" | grep -o '"decode_tok_s":[0-9.]*\|"decode_ms":[0-9.]*\|rror.*' | tr '\n' ' ')"
  }
  for i in 1 2; do
    gen none 128; gen regex 128 --regex '[a-z ]+'; gen schema 1 --json-schema bench/data/guidance_schema.json
  done
}

step_sample() {
  local shape=$1 prec=$2 bin=${3:-ogx}
  for i in 1 2; do
    for mode in "--top-p 0.9" "--top-k 50" ""; do
      local m=${mode// /}; bench_model $bin $shape $prec "--temperature 0.8 $mode" _t08${m//-/} | tee -a "$SUMMARY"
    done
  done
}

step_spec() {
  local shape=$1 prec=$2 draft=$3 weights=$4 extra=${5//+/ } dir args out
  dir=$(folder_of $shape $prec $weights)
  for mode in plain ngram ngramc ${draft:+draft}; do
    args="--prompt-len 512 --gen-len 256 --prompt-period 32 --repeats 1 $extra"
    [ $mode = ngram ] && args="$args --speculative ngram --draft-tokens 4"
    [ $mode = ngramc ] && args="$args --speculative ngram --ngram-chained --draft-tokens 4"
    [ $mode = draft ] && args="$args --speculative $(folder_of $draft $prec $weights) --draft-tokens 4"
    out=$OUT/spec_${shape}_${prec}_$mode${weights:+_$weights}
    timeout 300 ./.devrun/ogx bench $dir --provider dml $args --json > $out.json 2> $out.err
    log "spec $shape $prec $mode ${weights:-random}: $(grep -o '"decode_tok_s":[0-9.]*\|"accept[a-z_]*":[0-9.]*\|"drafted[a-z_]*":[0-9.]*\|"total_[a-z_]*_ms":[0-9.]*\|"rounds":[0-9.]*\|"[a-z_]*forward_passes":[0-9.]*\|"replay_gpu_us_median":[0-9.]*\|"runs":[0-9.]*\|"submits":[0-9.]*\|"dropped_runs":[0-9.]*\|"queued_runs":[0-9.]*\|"recordings":[0-9.]*\|"gpu_us[^,]*\|"plan [^"]*":[0-9.]*\|"draft_session"' $out.json | tr '\n' ' ')"
  done
}

for step in "$@"; do
  IFS=: read -r name a1 a2 a3 a4 a5 a6 a7 <<< "$step"
  log "== $step ($(date +%T))"
  case $name in
    gpu | tests | check | bench | batch | folder | coldload | ab | abopt | kbench | llamacpp | serve | generators | spec | guidance | sample)
      step_$name "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" "$a7" ;;
    *) log "unknown step '$name'" ;;
  esac
done
