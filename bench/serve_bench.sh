#!/usr/bin/env bash
# `ogx serve` under load on a GPU: builds a random-weight folder of a shape (or takes a folder), starts the server on
# the Vulkan provider, and runs bench/serve_load.py at each concurrency level (aggregate tokens/s, p50/p99 time to
# first token and latency), then stops the server. Python standard library only on the client side.
# usage: bench/serve_bench.sh OGX_BINARY (SHAPE.json PRECISION | MODEL_DIR) [CLIENTS=1,8,32,64] [MAX_TOKENS=128]
#        [PROMPT_TOKENS=128]   (environment: OUT=dir for the JSON and logs, SERVE_ARGS=extra ogx serve arguments,
#        TEMPERATURE=0.8: the requests' temperature, 0 = greedy; TOP_P=1: their top_p; FREQUENCY_PENALTY=0: their
#        frequency_penalty)
# e.g. bash bench/serve_bench.sh .devrun/ogx .devrun/shapes/llama-3.2-1b.json fp16 1,8,32,64
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ogx=$1; shift
if [ -d "$1" ]; then
  dir=$1; shift; tag=$(basename "$dir")
else
  shape=$1 prec=$2; shift 2
  tag=$(basename "$shape" .json)-$prec
  dir=/dev/shm/serve-$tag
  [ -f "$dir/genai_config.json" ] ||
    "$ogx" build --config "$shape" --random-weights -p "$prec" -e dml -o "$dir" >/dev/null
fi
clients=${1:-1,8,32,64} max_tokens=${2:-128} prompt_tokens=${3:-128}
out=${OUT:-/tmp}
max_clients=$(echo "$clients" | tr ',' '\n' | sort -n | tail -1)
log=$out/serve-$tag.log
# --max-batch: every client decodes at once (where the provider keeps one KV cache, ogx serve warns about it).
"$ogx" serve "$dir" --provider dml --port 0 --max-batch "$max_clients" --max-queue "$max_clients" \
  ${SERVE_ARGS:-} >"$out/serve-$tag.stdout" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  url=$(grep -o 'http://[^ ]*' "$out/serve-$tag.stdout" 2>/dev/null || true)
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { echo "ogx serve exited: $(tail -3 "$log")" >&2; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "ogx serve did not start" >&2; exit 1; }
echo "serve $tag at $url (clients $clients, prompt $prompt_tokens, max_tokens $max_tokens)"
python3 "$here/serve_load.py" --url "$url" --clients "$clients" --max-tokens "$max_tokens" \
  --prompt-tokens "$prompt_tokens" --temperature "${TEMPERATURE:-0.8}" --top-p "${TOP_P:-1}" \
  --frequency-penalty "${FREQUENCY_PENALTY:-0}" --json "$out/serve-$tag.json"
# Where the time per generated token went (the engine's phases) and whether decode steps were queued ahead.
python3 - "$url" "$out/metrics-$tag.txt" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=10).read().decode()
open(sys.argv[2], "w").write(text)
v = {}
for line in text.splitlines():
    m = re.match(r'(ogx_engine_[a-z_]+|ogx_session_stat\{stat="([a-z_]+)"\}) ([0-9.e+-]+)$', line)
    if m: v[m.group(2) or m.group(1)] = float(m.group(3))
n = v.get("ogx_engine_generated_tokens_total", 0) or 1
ms = lambda k: "%.3f" % (1000 * v.get(k, 0) / n)
print("metrics per generated token (ms): step %s, decode %s, prompt %s, lock wait %s; session runs %d, queued %d, "
      "dropped %d, submits %d" % (ms("ogx_engine_step_seconds_total"), ms("ogx_engine_decode_seconds_total"),
      ms("ogx_engine_prompt_seconds_total"), ms("ogx_engine_lock_wait_seconds_total"), v.get("runs", 0),
      v.get("queued_runs", 0), v.get("dropped_runs", 0), v.get("submits", 0)))
PY
kill -TERM $pid; wait $pid || true
