#!/usr/bin/env python3
"""Chat: one generator keeps the whole conversation, so each turn only runs the model on the new tokens.

Mirrors onnxruntime-genai's examples/python/model-chat.py; the only change for ogx is the import.
    PYTHONPATH=build/src/api/python python3 examples/python/model-chat.py -m MODEL_DIR -e dml
Without --prompt, user turns are read from stdin until an empty line or end of input.
"""
import argparse
import sys

import ogx as og  # was: import onnxruntime_genai as og


def common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def turns(args):
    if args.prompt:
        yield from args.prompt
        return
    while True:
        try:
            text = input("User: ")
        except EOFError:
            return
        if not text.strip():
            return
        yield text


def main(args):
    config = og.Config(args.model_path)
    if args.execution_provider != "follow_config":
        config.clear_providers()
        if args.execution_provider != "cpu":
            config.append_provider(args.execution_provider)
    model = og.Model(config)
    tokenizer = og.Tokenizer(model)
    if args.verbose:
        print("Model loaded (%s, running on %s)" % (model.type, model.device_type), file=sys.stderr)

    params = og.GeneratorParams(model)
    params.set_search_options(max_length=args.max_length, do_sample=args.do_sample)
    generator = og.Generator(model, params)
    history = [{"role": "system", "content": args.system_prompt}] if args.system_prompt else []

    for text in turns(args):
        history.append({"role": "user", "content": text})
        tokens = tokenizer.encode(tokenizer.apply_chat_template(history, add_generation_prompt=True))
        if len(tokens) + args.max_new_tokens > args.max_length:
            print("(conversation too long for max_length %d; ending)" % args.max_length)
            break
        # Keep what the generator already holds; run the model only on the rest.
        kept = common_prefix(generator.get_sequence(0).tolist(), tokens.tolist())
        if kept == len(tokens):
            kept -= 1  # something must be appended
        generator.rewind_to(kept)
        generator.append_tokens(tokens[kept:])

        stream = tokenizer.create_stream()
        reply = []
        print("Assistant: ", end="", flush=True)
        while not generator.is_done() and len(reply) < args.max_new_tokens:
            generator.generate_next_token()
            token = int(generator.get_next_tokens()[0])
            reply.append(token)
            print(stream.decode(token), end="", flush=True)
        print(stream.flush())
        history.append({"role": "assistant", "content": tokenizer.decode(reply)})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-m", "--model_path", required=True, help="ONNX Runtime GenAI model folder")
    parser.add_argument("-e", "--execution_provider", default="follow_config",
                        choices=["follow_config", "cpu", "dml", "vulkan"])
    parser.add_argument("-p", "--prompt", action="append", help="a user turn (repeatable); default: read stdin")
    parser.add_argument("-s", "--system_prompt", default="You are a helpful assistant.")
    parser.add_argument("-l", "--max_length", type=int, default=2048, help="max tokens in the whole conversation")
    parser.add_argument("-n", "--max_new_tokens", type=int, default=256, help="max tokens per reply")
    parser.add_argument("-ds", "--do_sample", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    main(parser.parse_args())
