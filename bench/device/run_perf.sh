#!/bin/bash
# Device run: decode benchmarks (and optional profile) of synthetic shapes on the H200.
# Usage: bash .devrun/run_perf.sh "PRECISIONS" "SHAPES" [profile]
set -o pipefail
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
(cd .devrun && tar xJf libs.tar.xz)
export LD_LIBRARY_PATH=$PWD/.devrun/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1
for shape in $2; do for prec in $1; do
  extra=""; [ "$3" = profile ] && extra="--provider-option enable_profiling=1"
  timeout 300 ./.devrun/ogx bench --synthetic .devrun/shapes/$shape.json --precision $prec --provider vulkan $extra \
    --prompt-len 128 --gen-len 128 --repeats 3 --json > $OUT/${3:-bench}_${shape}_$prec.json 2> $OUT/${3:-bench}_${shape}_$prec.err
  echo "$shape $prec: $(grep -o '"decode_tok_s":[0-9.]*\|"prefill_tok_s":[0-9.]*\|"dispatches":[0-9.]*\|"replay_run_us":[0-9.]*\|"gpu_us (step total)":[0-9.]*' $OUT/${3:-bench}_${shape}_$prec.json | tr '\n' ' ')"
done; done
