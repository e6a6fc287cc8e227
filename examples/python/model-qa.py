#!/usr/bin/env python3
"""Question answering: each question is answered from a fresh generator (no history).

Mirrors onnxruntime-genai's examples/python/model-qa.py; the only change for ogx is the import.
    PYTHONPATH=build/src/api/python python3 examples/python/model-qa.py -m MODEL_DIR -e dml
Without --prompt, questions are read from stdin until an empty line or end of input.
"""
import argparse
import sys
import time

import ogx as og  # was: import onnxruntime_genai as og


def search_options(args):
    names = ["do_sample", "max_length", "min_length", "top_p", "top_k", "temperature", "repetition_penalty"]
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def load(args):
    config = og.Config(args.model_path)
    if args.execution_provider != "follow_config":
        config.clear_providers()
        if args.execution_provider != "cpu":
            config.append_provider(args.execution_provider)
    model = og.Model(config)
    if args.verbose:
        print("Model loaded (%s, running on %s)" % (model.type, model.device_type), file=sys.stderr)
    return model


def questions(args):
    if args.prompt:
        yield from args.prompt
        return
    while True:
        try:
            text = input("Input: ")
        except EOFError:
            return
        if not text.strip():
            return
        yield text


def main(args):
    model = load(args)
    tokenizer = og.Tokenizer(model)
    options = search_options(args)
    for text in questions(args):
        messages = []
        if args.system_prompt:
            messages.append({"role": "system", "content": args.system_prompt})
        messages.append({"role": "user", "content": text})
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        input_tokens = tokenizer.encode(prompt)

        params = og.GeneratorParams(model)
        params.set_search_options(**options)
        generator = og.Generator(model, params)
        generator.append_tokens(input_tokens)
        stream = tokenizer.create_stream()

        start = time.perf_counter()
        new_tokens = 0
        print("Output: ", end="", flush=True)
        try:
            while not generator.is_done():
                generator.generate_next_token()
                new_token = generator.get_next_tokens()[0]
                print(stream.decode(new_token), end="", flush=True)
                new_tokens += 1
        except KeyboardInterrupt:
            print("  --control+c pressed, aborting generation--")
        print(stream.flush())
        if args.timings:
            elapsed = time.perf_counter() - start
            print("Prompt tokens: %d, new tokens: %d, %.1f tokens/s" %
                  (len(input_tokens), new_tokens, new_tokens / elapsed if elapsed > 0 else 0.0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-m", "--model_path", required=True, help="ONNX Runtime GenAI model folder")
    parser.add_argument("-e", "--execution_provider", default="follow_config",
                        choices=["follow_config", "cpu", "dml", "vulkan"],
                        help="provider: the model's genai_config.json, cpu, or dml/vulkan (the GPU provider)")
    parser.add_argument("-p", "--prompt", action="append", help="a question (repeatable); default: read stdin")
    parser.add_argument("-s", "--system_prompt", help="system message")
    parser.add_argument("-l", "--max_length", type=int, help="max tokens in prompt + answer")
    parser.add_argument("-i", "--min_length", type=int, help="min tokens in prompt + answer")
    parser.add_argument("-ds", "--do_sample", action="store_true", default=None, help="sample instead of greedy")
    parser.add_argument("--top_p", type=float)
    parser.add_argument("--top_k", type=int)
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--repetition_penalty", type=float)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("-g", "--timings", action="store_true", help="print token counts and speed")
    main(parser.parse_args())
