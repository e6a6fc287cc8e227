#!/usr/bin/env bash
# Installs every build and test dependency of ogx from Debian's packages. Idempotent.
# --runtime: only what building and running the ogx CLI needs (scripts/run.sh, the first run: no test, fuzz, API or
# chart dependencies — clang, matplotlib, nginx, pybind11 are most of the download).
set -euo pipefail
RUNTIME_PKGS=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler      # ONNX ModelProto parsing
  nlohmann-json3-dev                                 # genai_config.json, tokenizer.json
  libvulkan-dev glslc spirv-headers                  # Vulkan provider, shaders compiled at build time
  libicu-dev libpcre2-dev liblzma-dev                # tokenizer: Unicode, regex, .xz goldens
  libsentencepiece-dev                               # SentencePiece tokenizer.model folders
  libflatbuffers-dev flatbuffers-compiler            # ONNX Runtime adapter files (.onnx_adapter)
  libcpp-httplib-dev libcli11-dev                    # ogx serve: HTTP server, argument parsing
)
PKGS=(
  "${RUNTIME_PKGS[@]}"
  libgtest-dev libgmock-dev libbenchmark-dev         # tests and benchmarks
  mesa-vulkan-drivers vulkan-validationlayers        # lavapipe + validation for GPU-less testing
  pybind11-dev python3-dev python3-numpy python3-pytest python3-jinja2 python3-jsonschema
  clang libclang-rt-dev                              # fuzz targets: clang's libFuzzer (scripts/fuzz.sh)
  nginx-light                                        # ogx serve: the scale-out test (tests/serve/nginx_test.mjs)
  python3-matplotlib                                 # bench/plot.py: the charts of bench/
  python3-torch                                      # the LoRA reference (tools/peft_reference, test_lora_reference.py)
)
runtime=0
[ "${1:-}" = --runtime ] && runtime=1 && PKGS=("${RUNTIME_PKGS[@]}")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The official OpenAI client for the `ogx serve` tests (version pinned in tests/serve/package-lock.json), from npm.
if [ $runtime = 0 ] && command -v npm >/dev/null &&
   [ ! -f "$(dirname "$0")/../tests/serve/node_modules/openai/package.json" ]; then
  (cd "$(dirname "$0")/../tests/serve" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: all dependencies present"
