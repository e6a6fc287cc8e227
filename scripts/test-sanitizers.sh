#!/usr/bin/env bash
# CI's sanitizer stage: the CPU kernel and engine tests (and the other cheap CPU-only suites) built with
# AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer into build-asan (no Vulkan, no public APIs), run with
# leak detection on and UBSan halting at its first report. Only the test targets are built. Extra arguments go to
# cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${OGX_JOBS:-$(nproc)}
dir=build-asan
targets=(ogx_cpu_kernel_tests ogx_engine_tests ogx_tokenizer_tests ogx_chat_template_tests ogx_builder_tests
         ogx_guidance_tests)
start=$SECONDS

# -O1 -g1 (line tables only): half the compile time of -O2 -g, and still file:line in every report.
flags="-O1 -g1 -DNDEBUG"
mkdir -p "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DOGX_SANITIZE=ON -DOGX_WITH_VULKAN=OFF -DOGX_WITH_API=OFF \
  -DOGX_WITH_PYTHON=OFF "$@" > "$dir/configure.log" || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
echo "sanitizers: built in $((SECONDS - start)) s"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$dir/src/providers/cpu/tests/ogx_cpu_kernel_tests" --gtest_brief=1
"$dir/tests/ogx_engine_tests" --gtest_brief=1 --gtest_filter="-*vulkan*:*Vulkan*"  # no Vulkan in this build
"$dir/src/genai/tokenizer/tests/ogx_tokenizer_tests" --gtest_brief=1
"$dir/src/genai/chat_template/ogx_chat_template_tests" --gtest_brief=1
"$dir/src/genai/guidance/tests/ogx_guidance_tests" --gtest_brief=1  # structured output: untrusted schemas, grammars
"$dir/src/builder/tests/ogx_builder_tests" --gtest_brief=1 --gtest_filter="BuilderLimits*"  # size limits (issue 17)
echo "sanitizers: clean (build and tests in $((SECONDS - start)) s)"
