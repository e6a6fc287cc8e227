#!/usr/bin/env python3
"""Load generator for `ogx serve` (or any OpenAI-compatible server): C concurrent streaming clients, each sending
requests back to back, reporting aggregate generated tokens/s and p50/p99 time to first token and latency.
Python standard library only (runs on a GPU machine with nothing installed).

Prompts are random token ids (POST /v1/completions with "prompt": [ids]), so folders without a tokenizer
(`ogx build --random-weights`) work. A request ends at --max-tokens or EOS; tokens/s counts the tokens the usage
reports (random-weight models rarely pick EOS).

usage: bench/serve_load.py --url http://127.0.0.1:8080 --clients 1,8,32,64 [--requests 4] [--prompt-tokens 128]
                           [--max-tokens 128] [--api-key KEY] [--json OUT.json]
"""
import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
import urllib.parse


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(-(-p * len(s) // 100)) - 1))]


def one_request(url, prompt, max_tokens, api_key, seed, temperature=0.8, top_p=1.0, frequency_penalty=0.0):
    """Streams one completion; returns (ttft_s, latency_s, completion_tokens, finish_reason)."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600)
    req = {"model": "bench", "prompt": prompt, "max_tokens": max_tokens, "temperature": temperature,
           "seed": seed, "stream": True, "stream_options": {"include_usage": True}}
    if top_p != 1.0:
        req["top_p"] = top_p
    if frequency_penalty != 0.0:
        req["frequency_penalty"] = frequency_penalty
    body = json.dumps(req)
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    t0 = time.perf_counter()
    conn.request("POST", "/v1/completions", body, headers)
    res = conn.getresponse()
    if res.status != 200:
        raise RuntimeError("HTTP %d: %s" % (res.status, res.read()[:300]))
    ttft, tokens, finish, done = None, 0, None, False
    buf = b""
    while not done:
        chunk = res.read1(65536) if hasattr(res, "read1") else res.read(1)
        if not chunk:
            break
        buf += chunk
        while b"\n\n" in buf:
            event, buf = buf.split(b"\n\n", 1)
            data = event.decode().removeprefix("data: ").strip()
            if data == "[DONE]":
                done = True
                break
            j = json.loads(data)
            if "error" in j:
                raise RuntimeError(j["error"]["message"])
            if j.get("choices") and ttft is None:
                ttft = time.perf_counter() - t0
            for c in j.get("choices", []):
                if c.get("finish_reason"):
                    finish = c["finish_reason"]
            if j.get("usage"):
                tokens = j["usage"]["completion_tokens"]
    latency = time.perf_counter() - t0
    conn.close()
    if not done:
        raise RuntimeError("the stream ended without data: [DONE]")
    return ttft if ttft is not None else latency, latency, tokens, finish


def run_level(args, clients):
    ttfts, latencies, tokens, errors = [], [], [0], []
    lock = threading.Lock()
    rng = random.Random(clients)

    def client(c):
        for k in range(args.requests):
            prompt = [rng.randrange(10, args.vocab) for _ in range(args.prompt_tokens)]
            try:
                t, l, n, _ = one_request(args.url, prompt, args.max_tokens, args.api_key, c * 1000 + k,
                                         args.temperature, args.top_p, args.frequency_penalty)
                with lock:
                    ttfts.append(t)
                    latencies.append(l)
                    tokens[0] += n
            except Exception as e:  # counted: the run reports lost requests
                with lock:
                    errors.append(str(e))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    return {
        "clients": clients, "requests": clients * args.requests, "completed": len(latencies), "errors": len(errors),
        "first_error": errors[0] if errors else None, "seconds": round(seconds, 3), "tokens": tokens[0],
        "tokens_per_s": round(tokens[0] / seconds, 1),
        "ttft_p50_ms": round(1000 * percentile(ttfts, 50), 1), "ttft_p99_ms": round(1000 * percentile(ttfts, 99), 1),
        "latency_p50_ms": round(1000 * percentile(latencies, 50), 1),
        "latency_p99_ms": round(1000 * percentile(latencies, 99), 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--clients", default="1,8,32,64", help="comma-separated concurrency levels")
    ap.add_argument("--requests", type=int, default=4, help="requests per client at each level")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=1000, help="prompt ids are drawn from [10, vocab)")
    ap.add_argument("--api-key", default="")
    ap.add_argument("--temperature", type=float, default=0.8, help="0: greedy (argmax)")
    ap.add_argument("--top-p", type=float, default=1.0, help="the requests' top_p (1: not sent)")
    ap.add_argument("--frequency-penalty", type=float, default=0.0, help="the requests' frequency_penalty (0: not sent)")
    ap.add_argument("--json", default="", help="also write the results here")
    args = ap.parse_args()
    results = []
    print("| clients | requests | completed | tokens/s | TTFT p50 ms | TTFT p99 ms | latency p50 ms | latency p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for c in [int(x) for x in args.clients.split(",")]:
        r = run_level(args, c)
        results.append(r)
        print("| %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            r["clients"], r["requests"], r["completed"], r["tokens_per_s"], r["ttft_p50_ms"], r["ttft_p99_ms"],
            r["latency_p50_ms"], r["latency_p99_ms"]), flush=True)
        if r["errors"]:
            print("  %d errors, first: %s" % (r["errors"], r["first_error"]), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"url": args.url, "prompt_tokens": args.prompt_tokens, "max_tokens": args.max_tokens,
                       "levels": results}, f, indent=1)
    return 1 if any(r["errors"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
