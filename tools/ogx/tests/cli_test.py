#!/usr/bin/env python3
"""The ogx command line: `ogx --help` lists every command, every command answers --help, an unknown flag is a
usage error (exit 2) naming it and the closest flag, an unknown command suggests the closest one, and the flags
outside checks use parse. Usage: cli_test.py OGX_BINARY MODEL_DIR"""
import json
import re
import subprocess
import sys

ogx, model = sys.argv[1], sys.argv[2]


def run(*args, stdin=""):
    return subprocess.run([ogx, *args], input=stdin, capture_output=True, text=True, timeout=300)


top = run("--help")
assert top.returncode == 0, top.stderr
commands = re.findall(r"^  (\S+)\s", top.stdout, re.M)
for c in ["generate", "chat", "bench", "check", "tokenize", "chat-template", "build", "devices"]:
    assert c in commands, (c, top.stdout)
for c in commands:
    h = run(c, "--help")
    assert h.returncode == 0 and "Usage:" in h.stdout and "--help" in h.stdout, (c, h.stdout, h.stderr)

bad = run("generate", model, "--ids", "1", "--max-new-token", "3")
assert bad.returncode == 2, bad
assert "unknown flag --max-new-token (did you mean --max-new-tokens?)" in bad.stderr, bad.stderr
bad = run("generate", model, "--ids", "1", "--max-new-tokens", "three")
assert bad.returncode == 2 and "--max-new-tokens" in bad.stderr, bad.stderr
bad = run("generate", model)
assert bad.returncode == 2 and "--ids" in bad.stderr, bad.stderr
bad = run("generat")
assert bad.returncode == 2 and "did you mean 'generate'" in bad.stderr, bad.stderr
bad = run("build", "-i", "x", "-o", "y", "-p", "int8")
assert bad.returncode == 2 and "int8" in bad.stderr, bad.stderr

# The flags of the README's synopsis, as scripts call them.
g = run("generate", model, "--ids", "1,1935,1281", "--max-new-tokens", "4", "--min-new-tokens", "4", "--greedy",
        "--provider", "cpu", "--threads", "1", "--json")
assert g.returncode == 0, g.stderr
out = json.loads(g.stdout)
assert len(out["tokens"]) == 4 and "decode_tok_s" in out and "text" in out, out
g2 = run("generate", model, "--prompt=The best way", "--max-new-tokens=3", "--top-k", "40", "--top-p", "0.95",
         "--temperature", "0.8", "--repetition-penalty", "1.1", "--seed", "7", "--json")
assert g2.returncode == 0 and len(json.loads(g2.stdout)["tokens"]) <= 3, g2.stderr
t = run("tokenize", model, "--text", "Hello world", "--json")
assert t.returncode == 0 and json.loads(t.stdout)["ids"], t.stderr
b = run("bench", model, "--prompt-len", "4", "--gen-len", "3", "--repeats", "1", "--provider", "cpu", "--json")
assert b.returncode == 0 and json.loads(b.stdout)["decode_tok_s"] > 0, b.stderr
po = run("generate", model, "--ids", "1", "--provider-option", "device_id=0")
assert po.returncode == 1 and "cpu provider: unknown option 'device_id'" in po.stderr, po.stderr
po = run("generate", model, "--ids", "1", "--max-new-tokens=2", "--provider-option", "int4_gemm=mlas")
assert po.returncode == 0, po.stderr
print(f"ok: {len(commands)} commands answer --help; usage errors exit 2 with the closest flag")
