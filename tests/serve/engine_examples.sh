#!/usr/bin/env bash
# Runs ONNX Runtime GenAI's Engine examples, unchanged, against ogx: examples/python/engine/model-qa.py (two turns
# on stdin) and continuous-batching.py, from a local checkout of microsoft/onnxruntime-genai, on a model folder with
# a chat template (default: ogx's default model with a small template added). `import onnxruntime_genai` is
# redirected to ogx by a shim; continuous-batching.py's `tqdm` and `datasets` (SQuAD questions) are stood in for
# when Python lacks them (a progress counter and fixed questions).
# usage: tests/serve/engine_examples.sh ORTGENAI_CHECKOUT [BUILD_DIR] [MODEL_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
checkout=$(cd "${1:?usage: $0 ORTGENAI_CHECKOUT [BUILD_DIR] [MODEL_DIR]}" && pwd)
build=$(cd "${2:-$root/build}" && pwd)
python=${OGX_PYTHON:-/usr/bin/python3}
ex="$checkout/examples/python/engine"
[ -f "$ex/model-qa.py" ] || { echo "$checkout has no examples/python/engine/model-qa.py" >&2; exit 2; }
module_dir=$(dirname "$(ls "$build"/src/api/python/ogx*.so | head -1)")
work=$(mktemp -d /tmp/ogx-engine-examples.XXXXXX)
trap 'rm -rf "$work"' EXIT
shim="$work/shim"
mkdir -p "$shim"
echo 'from ogx import *  # noqa: F401,F403 (onnxruntime_genai -> ogx)' >"$shim/onnxruntime_genai.py"
"$python" -c 'import tqdm' 2>/dev/null || cat >"$shim/tqdm.py" <<'PY'
class tqdm:  # stand-in: counts and prints progress
    def __init__(self, total=None, **kw): self.n, self.total = 0, total
    def update(self, n=1): self.n += n; print(f"progress {self.n}/{self.total}", flush=True)
    def close(self): pass
PY
"$python" -c 'import datasets' 2>/dev/null || cat >"$shim/datasets.py" <<'PY'
QUESTIONS = ["What is a package?", "Who maintains Debian?", "What does a compiler do?", "What is a shell?",
             "Where are manual pages kept?", "What is free software?", "What is a kernel?", "What is a daemon?"]
def load_dataset(name, split=None):  # stand-in for SQuAD v2: fixed questions
    return [{"question": q} for q in QUESTIONS]
PY
model=${3:-}
if [ -z "$model" ]; then
  model="$work/model"
  mkdir -p "$model"
  for f in "$root"/models/ogx-debian-10m/int4/*; do ln -s "$f" "$model/"; done
  printf '%s' "{% for m in messages %}{{ '<|' + m['role'] + '|>\n' + m['content'] + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}" >"$model/chat_template.jinja"
fi
export PYTHONPATH="$shim:$module_dir${PYTHONPATH:+:$PYTHONPATH}"
rc=0
echo "== model-qa.py (two questions on stdin)"
(cd "$ex" && printf 'What is a package?\nAnd a library?\n/exit\n' | timeout 300 "$python" model-qa.py -m "$model" -e cpu) || rc=1
echo
echo "== continuous-batching.py -n 8"
(cd "$ex" && timeout 300 "$python" continuous-batching.py -m "$model" -e cpu -n 8 -d) || rc=1
echo "== exit status $rc"
exit $rc
