#!/usr/bin/python3
"""Renders chat templates with Python jinja2 configured like transformers' chat template environment.

Usage: render_reference.py SCENARIOS_JSON OUT_JSON TEMPLATE_FILE...
Writes {template_basename: {scenario_name: {"text": str} | {"error": str}}}.
The environment mirrors transformers.utils.chat_template_utils._compile_jinja_template:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols]),
tojson overridden (ensure_ascii=False, indent, separators, sort_keys), raise_exception, strftime_now (fixed date here).
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class AssistantTracker(Extension):
    # {% generation %}...{% endgeneration %}: renders its body (transformers tracks assistant token spans with it).
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    spec = json.load(open(sys.argv[1], encoding="utf-8"))
    env = make_env(datetime(*spec["now"]))
    result = {}
    for path in sys.argv[3:]:
        name = os.path.basename(path)
        with open(path, encoding="utf-8", newline="") as f:
            source = f.read()
        per = {}
        try:
            tmpl = env.from_string(source)
        except Exception as e:  # syntax error: every scenario fails
            for sc in spec["scenarios"]:
                per[sc["name"]] = {"error": f"{type(e).__name__}: {e}"}
            result[name] = per
            continue
        for sc in spec["scenarios"]:
            ctx = dict(spec["context"])
            ctx.update(messages=sc["messages"], tools=spec["tools"] if sc.get("use_tools") else None,
                       documents=None, add_generation_prompt=sc["add_generation_prompt"])
            try:
                per[sc["name"]] = {"text": tmpl.render(**ctx)}
            except Exception as e:
                per[sc["name"]] = {"error": f"{type(e).__name__}: {e}"}
        result[name] = per
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
