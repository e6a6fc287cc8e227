#!/usr/bin/env bash
# Prepares .devrun/ (ignored by git) for the GPU machine's bench/device/run.sh from a finished build/:
# stripped binaries (plus any .devrun/ogx_<variant> A/B builds already there), the Debian shared libraries they
# link, the model shapes, the golden models, the validation layers, llama.cpp's harness and the Vulkan loader debs.
# Usage: scripts/devrun-prepare.sh [BUILD_DIR]   (BUILD_DIR default build)
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
d=.devrun
mkdir -p $d/stage $d/shapes $d/shared/golden
bins=()
for f in $b/tools/ogx/ogx $b/tests/ogx_engine_tests $b/src/providers/vulkan/ogx_vulkan_tests \
         $b/src/providers/vulkan/ogx_vulkan_bench; do
  if [ -f $f ]; then bins+=($f); else echo "devrun-prepare: $f not built, left out (run.sh steps needing it fail)"; fi
done
for f in "${bins[@]}"; do strip -o $d/stage/$(basename $f) $f; done
cp $d/ogx_* $d/stage/ 2>/dev/null || true
(cd $d/stage && tar cJf ../bin.tar.xz *)
rm -rf $d/stage
# Libraries outside the base system of the GPU machine (glibc, libstdc++ and the Vulkan loader are there).
libs=$(for f in "${bins[@]}"; do ldd $f; done | awk '/=> \//{print $3}' | sort -u |
       grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+|libvulkan)\.so')
mkdir -p $d/libstage/lib
for l in $libs; do cp -L $l $d/libstage/lib/; done
(cd $d/libstage && tar cJf ../libs.tar.xz lib)
rm -rf $d/libstage $d/lib
cp ../shared/model-shapes/*.json $d/shapes/
cp -r ../shared/golden/models $d/shared/golden/
cp ../shared/golden/*.json $d/shared/golden/ 2>/dev/null || true
mkdir -p $d/shared/tok  # the Llama 3 tokenizer for run.sh's guidance step
cp ../shared/golden/tokenizers/llama3/tokenizer.json.xz ../shared/golden/tokenizers/llama3/tokenizer_config.json \
  $d/shared/tok/ 2>/dev/null && chmod u+w $d/shared/tok/* || true
ls $d/vulkan-validationlayers_*.deb >/dev/null 2>&1 || (cd $d && apt-get download vulkan-validationlayers >/dev/null)
if [ ! -d $d/llamacpp/work ] && [ -d ../shared/llamacpp-bench ]; then
  cp -r ../shared/llamacpp-bench $d/llamacpp-build
  chmod -R u+w $d/llamacpp-build
  if (cd $d/llamacpp-build && bash build.sh) > $d/llamacpp-build.log 2>&1; then
    mkdir -p $d/llamacpp/work  # only what the GPU machine needs (the working tree that travels is limited)
    cp $d/llamacpp-build/*.sh $d/llamacpp-build/*.py $d/llamacpp/
    cp $d/llamacpp-build/work/llamacpp-vulkan-payload.tar.xz $d/llamacpp/work/
  else
    echo "llama.cpp payload: build failed (see $d/llamacpp-build.log)"
  fi
  rm -rf $d/llamacpp-build
fi
if ! ls .gl/*.deb >/dev/null 2>&1; then
  grep -qx '/.gl/' .git/info/exclude 2>/dev/null || true
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
cp bench/device/run.sh bench/device/env.sh $d/
du -sh $d/* .gl
# The device tool's carry list (at most 8 paths; the goldens and validation layers only for the tests step):
echo "carry: .gl .devrun/bin.tar.xz .devrun/libs.tar.xz .devrun/run.sh .devrun/env.sh .devrun/shapes .devrun/llamacpp" \
  "[.devrun/shared .devrun/vulkan-validationlayers_*.deb for tests]"
