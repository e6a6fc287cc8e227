#!/usr/bin/env python3
"""ogx chat through a pipe with the default model on the CPU: two greedy turns. The second turn runs only the
conversation's new tokens on the KV cache the first turn left; its answer must equal a fresh generation
(`ogx generate --ids`) of the whole conversation, and the first turn's context must be a prefix of the second's.
Usage: chat_test.py OGX_BINARY MODEL_DIR"""
import json
import subprocess
import sys

ogx, model = sys.argv[1], sys.argv[2]
N = "24"
run = subprocess.run([ogx, "chat", model, "--provider", "cpu", "--greedy", "--max-new-tokens", N, "--json",
                      "--system", "You answer questions about Debian packages."],
                     input="What is apt?\nAnd dpkg?\n", capture_output=True, text=True, timeout=300)
assert run.returncode == 0, run.stderr
turns = [json.loads(line) for line in run.stdout.splitlines()]
assert len(turns) == 2, run.stdout
first, second = turns
assert first["reused_tokens"] == 0 and first["new_tokens"] == len(first["context"]), first
assert len(first["tokens"]) > 0
# The second turn reused the first turn's prompt (and all of the answer that re-tokenized the same) from the cache.
assert second["context"][:len(first["context"])] == first["context"], "turn 1's context is not a prefix of turn 2's"
assert second["reused_tokens"] >= len(first["context"]), second["reused_tokens"]
assert second["new_tokens"] == len(second["context"]) - second["reused_tokens"]
assert second["new_tokens"] < len(second["context"]) / 2, "KV cache not reused: most of the conversation ran again"

fresh = subprocess.run([ogx, "generate", model, "--provider", "cpu", "--greedy", "--max-new-tokens", N, "--json",
                        "--ids", ",".join(map(str, second["context"]))],
                       capture_output=True, text=True, timeout=300)
assert fresh.returncode == 0, fresh.stderr
expected = json.loads(fresh.stdout)["tokens"]
assert second["tokens"] == expected, f"turn 2 with the KV cache kept: {second['tokens']}\nfresh: {expected}"
print(f"ok: turn 2 reused {second['reused_tokens']} of {len(second['context'])} context tokens; "
      f"its {len(expected)} tokens equal a fresh generation")
