#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang + ASan + UBSan into build-fuzz and runs each for SECONDS (default
# 60) over its seed corpus (fuzz/corpus/<target>, read-only; new inputs go to build-fuzz/corpus/<target>). Committed
# crash inputs (fuzz/regressions/<target>/*) are replayed first and must pass. Prints one line per target with the
# executions run; exits 1 when a target finds a crash, leak, timeout or out-of-memory (its input is left in
# build-fuzz/artifacts/<target>/ — add it to fuzz/regressions/<target>/ with the fix). Skips with a message when
# clang or libFuzzer is missing. OGX_FUZZ_TARGETS="a b" runs a subset; OGX_JOBS sets build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
jobs=${OGX_JOBS:-$(nproc)}
dir=${OGX_FUZZ_BUILD_DIR:-build-fuzz}
all=(fuzz_onnx_loader fuzz_genai_config fuzz_tokenizer fuzz_tokenizer_text fuzz_chat_template fuzz_safetensors fuzz_c_api fuzz_adapter_file fuzz_guidance)
read -r -a targets <<< "${OGX_FUZZ_TARGETS:-${all[*]}}"

if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz: clang or libFuzzer is missing (Debian: clang libclang-rt-dev, see scripts/setup.sh): skipped"
  exit 0
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
start=$SECONDS
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DOGX_FUZZ=ON \
  -DOGX_WITH_VULKAN=OFF -DOGX_WITH_API=OFF -DOGX_WITH_PYTHON=OFF -DOGX_WITH_TESTS=OFF "${launcher[@]}" \
  > "$dir/configure.log" || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
echo "fuzz: built in $((SECONDS - start)) s"

# allocator_may_return_null: an allocation the library attempts and cannot get is its std::bad_alloc path, not an
# ASan abort; -malloc_limit_mb below still reports any single allocation past 2 GB as runaway memory.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=0
for t in "${targets[@]}"; do
  bin="$dir/fuzz/$t"
  work="$dir/corpus/$t"
  art="$dir/artifacts/$t"
  mkdir -p "$work" "$art"
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    if ! "$bin" -rss_limit_mb=2048 -timeout=10 fuzz/regressions/$t/* > "$dir/$t.regressions.log" 2>&1; then
      echo "fuzz: $t: a committed regression input fails again:"; tail -30 "$dir/$t.regressions.log"; failed=1; continue
    fi
  fi
  # -timeout: one input past 10 s is a hang; -rss_limit_mb: past 2 GB is runaway memory; -max_len: 64 KiB inputs.
  # -seed: a fixed seed (OGX_FUZZ_SEED, default 1) makes a run's mutations reproducible; 0 lets libFuzzer pick.
  if "$bin" -seed="${OGX_FUZZ_SEED:-1}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$art/" -print_final_stats=1 "$work" "fuzz/corpus/$t" > "$dir/$t.log" 2>&1; then
    status=ok
  else
    status=FAILED; failed=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/$t.log" | grep -o '[0-9]*$' | tail -1)
  echo "fuzz: $t: ${execs:-?} executions in ${secs} s: $status"
  if [ "$status" = FAILED ]; then tail -40 "$dir/$t.log"; ls "$art"; fi
done
echo "fuzz: done in $((SECONDS - start)) s"
exit $failed
