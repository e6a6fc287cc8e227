#!/usr/bin/env bash
# Runs ONNX Runtime GenAI's own Python tests and Python examples against ogx, from a local checkout of
# microsoft/onnxruntime-genai (nothing is fetched, nothing is copied into ogx). `import onnxruntime_genai` is
# redirected to ogx by a shim package on PYTHONPATH; upstream's test models come from the checkout
# (test/models), and the models upstream's tests build or download (phi-2, phi-3-mini, ...) are stood in for by
# ogx's default model (see README.md for which tests need what).
# usage: tools/ortgenai_conformance/run.sh ORTGENAI_CHECKOUT [BUILD_DIR] [-- extra pytest arguments]
# Prints a pass/fail table per test and per example; writes it (and the raw logs) under $OGX_CONFORMANCE_OUT
# (default: a temporary folder, printed at the end). Exit status 0 whatever the table says (it is a report).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 ORTGENAI_CHECKOUT [BUILD_DIR] [-- pytest args]" >&2; exit 2; }
checkout=$(cd "$1" && pwd); shift
build="$root/build"
if [ $# -ge 1 ] && [ "$1" != "--" ]; then build=$(cd "$1" && pwd); shift; fi
[ "${1:-}" = "--" ] && shift
python=${OGX_PYTHON:-/usr/bin/python3}
for f in test/python/test_onnxruntime_genai_api.py examples/python/model-generate.py; do
  [ -f "$checkout/$f" ] || { echo "$checkout is not an onnxruntime-genai checkout (no $f)" >&2; exit 2; }
done
module=$(ls "$build"/src/api/python/ogx*.so 2>/dev/null | head -1 || true)
[ -n "$module" ] || { echo "no ogx Python module under $build/src/api/python (build the ogx_python target)" >&2; exit 2; }
out=${OGX_CONFORMANCE_OUT:-$(mktemp -d /tmp/ogx-conformance.XXXXXX)}
mkdir -p "$out"

# The shim: onnxruntime_genai = ogx; plus stand-ins for onnx / onnxruntime when Python lacks them (upstream's test
# module imports both at the top; the few tests that use them then fail with a message naming the stand-in).
shim="$out/shim"
"$python" "$root/tools/ortgenai_conformance/make_shim.py" --module-dir "$(dirname "$module")" --out "$shim"

# --test_models DIR: upstream resolves its checked-in models as DIR/../models/... and builder-made models as
# DIR/<name>/<precision>/<device>. Both live in a scratch tree: models -> the checkout's test/models, and each
# builder-made model name -> ogx's default model (int4, CPU), which has a tokenizer and a chat template.
data="$out/test_data"
rm -rf "$data"; mkdir -p "$data/test_models"
ln -s "$checkout/test/models" "$data/models"
standin="$root/models/ogx-debian-10m/int4"
for name in phi-2 phi-3-mini phi-4-mini gemma llama qwen-2.5-0.5b; do
  mkdir -p "$data/test_models/$name/int4"
  ln -s "$standin" "$data/test_models/$name/int4/cpu"
done
# The dml-parametrized tests (ogx offers DirectML's name, so upstream's list of devices is ["dml"]): the default
# model's fp16 folder with the dml provider in its config (lavapipe when no GPU is present), files linked.
gpu=1
"$build/tools/ogx/ogx" devices --json 2>/dev/null | grep -q '"type": "\(discrete\|integrated\|virtual\)' || gpu=0
dml_standin="$data/dml_standin"
mkdir -p "$dml_standin"
for f in "$root/models/ogx-debian-10m/fp16"/*; do ln -s "$f" "$dml_standin/$(basename "$f")"; done
rm "$dml_standin/genai_config.json"
"$python" - "$root/models/ogx-debian-10m/fp16/genai_config.json" "$dml_standin/genai_config.json" "$gpu" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model"]["decoder"]["session_options"]["provider_options"] = [{"dml": {} if sys.argv[3] == "1" else
                                                                  {"hardware_device_type": "cpu"}}]
json.dump(c, open(sys.argv[2], "w"), indent=4)
PY
for name in phi-2 phi-3-mini phi-4-mini gemma llama; do ln -s "$dml_standin" "$data/test_models/$name/int4/dml"; done
# test_hidden_states[dml] reads qwen-2.5-0.5b/int4/dml's hidden_states output ([2, 4, 896] after a prompt of 4, then
# [2, 1, 896]): a random-weight Qwen2 of that hidden size (2 layers, a small vocabulary) built by `ogx build
# --include-hidden-states`, as the reference builder's include_hidden_states. It runs on the Vulkan provider (a GPU,
# else lavapipe).
if [ -x "$build/tools/ogx/ogx" ]; then
  cat >"$data/qwen_hidden_shape.json" <<'JSON'
{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 1024,
 "num_hidden_layers": 2, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 1024,
 "max_position_embeddings": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": true,
 "bos_token_id": 1, "eos_token_id": 2}
JSON
  "$build/tools/ogx/ogx" build --config "$data/qwen_hidden_shape.json" --random-weights --include-hidden-states \
    -p int4 -e dml -o "$data/test_models/qwen-2.5-0.5b/int4/dml" -q >"$out/qwen-hidden-build.log" 2>&1 ||
    echo "(the hidden-states stand-in did not build: $out/qwen-hidden-build.log)"
  # Without a GPU the folder names the CPU Vulkan driver (lavapipe), which ogx otherwise never picks on its own.
  if [ $gpu = 0 ]; then
    "$python" - "$data/test_models/qwen-2.5-0.5b/int4/dml/genai_config.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
for entry in c["model"]["decoder"]["session_options"]["provider_options"]:
    entry.setdefault("dml", {})["hardware_device_type"] = "cpu"
json.dump(c, open(p, "w"), indent=4)
PY
  fi
fi

export PYTHONPATH="$shim${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
tests=(test_onnxruntime_genai_api.py models/test_n_gram_decoding.py models/test_speculative_decoding.py)
present=()
for t in "${tests[@]}"; do [ -f "$checkout/test/python/$t" ] && present+=("$t"); done
echo "== pytest: ${present[*]}"
(cd "$checkout/test/python" && timeout 900 "$python" -m pytest -p no:cacheprovider -q -rA "${present[@]}" \
   --test_models "$data/test_models" --junitxml "$out/pytest.xml" "$@") >"$out/pytest.log" 2>&1 || true

# The examples, unchanged, on the stand-in model; interactive ones get their input on stdin.
ex="$checkout/examples/python"
run_example() {  # name, stdin text, args...
  local name=$1 input=$2; shift 2
  echo "== example $name $*"
  local rc=0
  (cd "$ex" && printf '%b' "$input" | timeout 300 "$python" "$name" "$@") >"$out/example-${name%.py}.log" 2>&1 || rc=$?
  echo "$rc" >"$out/example-${name%.py}.rc"
}
run_example model-generate.py "" -m "$standin" -e cpu --non_interactive -pr "The Debian package" --max_length 48
run_example model-qa.py "" -m "$standin" -e cpu --max_length 64 --timings --non_interactive -up "What is a package?"
run_example model-chat.py "What is a package?\nquit()\n" -m "$standin" -e cpu --max_length 64

"$python" "$root/tools/ortgenai_conformance/report.py" --out "$out" | tee "$out/report.md"
echo "(logs and report in $out)"
