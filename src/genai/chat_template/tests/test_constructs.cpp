// One test per Jinja construct; expected strings are what Python jinja2 (transformers' environment) renders.
#include <gtest/gtest.h>

#include "common/error.h"
#include "genai/chat_template/chat_template.h"

using nlohmann::ordered_json;
using ogx::jinja::Template;

namespace {
std::string R(const std::string& src, const ordered_json& ctx = ordered_json::object()) {
  ogx::jinja::RenderOptions opts;
  opts.now = 1721988000;
  return Template::parse(src).render(ctx, opts);
}
}  // namespace

TEST(ChatTemplateConstructs, OutputAndLiterals) {
  EXPECT_EQ(R("a{{ 1 }}b{{ 'x' }}{{ \"y\" }}"), "a1bxy");
  EXPECT_EQ(R("{{ 1.0 }} {{ 2.5e3 }} {{ 1e-7 }} {{ true }} {{ none }} {{ False }}"), "1.0 2500.0 1e-07 True None False");
  EXPECT_EQ(R("{{ [1, 'a', none] }} {{ {'k': 'v', 'n': 1} }} {{ (1,) }}"), "[1, 'a', None] {'k': 'v', 'n': 1} (1,)");
  EXPECT_EQ(R("{{ undefined_var }}|{{ x.y if x is defined }}"), "|");
  EXPECT_EQ(R("{{ 'it\\'s' }} {{ ['it\\'s'] }}"), "it's [\"it's\"]");
}

TEST(ChatTemplateConstructs, WhitespaceControl) {
  EXPECT_EQ(R("a  {{- 'b' -}}  c"), "abc");
  EXPECT_EQ(R("x\n  {% if true %}\n  y\n  {% endif %}\nz"), "x\n  y\nz");  // trim_blocks + lstrip_blocks
  EXPECT_EQ(R("x\n  {%+ if true %}y{% endif %}"), "x\n  y");
  EXPECT_EQ(R("{# comment #}\na"), "a");
  EXPECT_EQ(R("a\n"), "a");  // keep_trailing_newline=False
  EXPECT_EQ(R("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
}

TEST(ChatTemplateConstructs, IfElifElse) {
  const char* t = "{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %}";
  EXPECT_EQ(R(t, {{"n", 1}}), "one");
  EXPECT_EQ(R(t, {{"n", 2}}), "two");
  EXPECT_EQ(R(t, {{"n", 5}}), "many");
  EXPECT_EQ(R("{{ 'y' if 0 else 'n' }}"), "n");
}

TEST(ChatTemplateConstructs, ForLoop) {
  ordered_json ctx = {{"xs", {"a", "b", "c"}}};
  EXPECT_EQ(R("{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}", ctx),
            "103TrueFalse3;212FalseFalse3;321FalseTrue3;");
  EXPECT_EQ(R("{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }}|{% endfor %}", ctx), "-b|a-c|b-|");
  EXPECT_EQ(R("{% for x in xs %}{{ loop.cycle('o', 'e') }}{% endfor %}", ctx), "oeo");
  EXPECT_EQ(R("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(R("{% for x in xs if x != 'b' %}{{ x }}{{ loop.length }}{% endfor %}", ctx), "a2c2");
  EXPECT_EQ(R("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }} {% endfor %}"), "a=1 b=2 ");
  EXPECT_EQ(R("{% for x in xs %}{% if x == 'b' %}{% continue %}{% endif %}{% if x == 'c' %}{% break %}{% endif %}{{ x }}{% endfor %}", ctx), "a");
  EXPECT_EQ(R("{% for c in 'ab' %}{{ c }}.{% endfor %}"), "a.b.");
  EXPECT_EQ(R("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");  // loop scope
}

TEST(ChatTemplateConstructs, SetAndNamespace) {
  EXPECT_EQ(R("{% set a, b = 1, 2 %}{{ a + b }}"), "3");
  EXPECT_EQ(R("{% set s %}hi {{ 1 }}{% endset %}[{{ s }}]"), "[hi 1]");
  EXPECT_EQ(R("{% set s | upper %}hi{% endset %}{{ s }}"), "HI");
  EXPECT_EQ(R("{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"), "3");
}

TEST(ChatTemplateConstructs, MacrosAndCall) {
  EXPECT_EQ(R("{% macro m(a, b='d') %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(1, b=2) }}"), "1-d 1-2");
  EXPECT_EQ(R("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}"), "<in>");
  EXPECT_EQ(R("{% macro w() %}{{ caller(5) }}{% endmacro %}{% call(x) w() %}[{{ x }}]{% endcall %}"), "[5]");
  EXPECT_EQ(R("{% filter upper %}abc{% endfilter %}"), "ABC");
  EXPECT_EQ(R("{% generation %}g{% endgeneration %}"), "g");
}

TEST(ChatTemplateConstructs, Operators) {
  EXPECT_EQ(R("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ 4 / 2 }}"), "3 -4 1 2 1024 3.5 2.0");
  EXPECT_EQ(R("{{ 'a' ~ 1 ~ none }} {{ 'ab' * 2 }} {{ [1] + [2] }} {{ 1 + 2.0 }}"), "a1None abab [1, 2] 3.0");
  EXPECT_EQ(R("{{ 1 < 2 < 3 }} {{ 'b' in 'abc' }} {{ 3 not in [1, 2] }} {{ 'k' in {'k': 1} }}"), "True True True True");
  EXPECT_EQ(R("{{ not 1 or 0 }} {{ 1 and 'x' }} {{ none or 'd' }}"), "0 x d");
  EXPECT_EQ(R("{{ 'hello'[::-1] }} {{ [1,2,3,4][1:3] }} {{ 'abc'[-1] }} {{ [1,2,3][::2] }}"), "olleh [2, 3] c [1, 3]");
  EXPECT_EQ(R("{{ '%s-%d' % ('a', 3) }}"), "a-3");
}

TEST(ChatTemplateConstructs, StringMethods) {
  EXPECT_EQ(R("{{ '  x  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a\\n'.rstrip() }}"), "x|axx|a");
  EXPECT_EQ(R("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}"), "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']");
  EXPECT_EQ(R("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}"),
            "True True Hello World Hello");
  EXPECT_EQ(R("{{ 'aaa'.replace('a', 'b', 2) }} {{ '{} and {x}'.format(1, x=2) }} {{ '-'.join(['a', 'b']) }} {{ 'AbC'.upper() }}{{ 'AbC'.lower() }}"),
            "bba 1 and 2 a-b ABCabc");
}

TEST(ChatTemplateConstructs, DictMethods) {
  ordered_json ctx = {{"d", {{"b", 1}, {"a", 2}}}};
  EXPECT_EQ(R("{{ d.keys() | list }} {{ d.values() | list }} {{ d.get('a') }} {{ d.get('z', 'dflt') }} {{ d.get('z') }}", ctx),
            "['b', 'a'] [1, 2] 2 dflt None");
  EXPECT_EQ(R("{{ d['b'] }}{{ d.b }}{{ d.zz }}", ctx), "11");
}

TEST(ChatTemplateConstructs, Filters) {
  ordered_json ctx = {{"users", {{{"name", "b"}, {"age", 3}}, {{"name", "a"}, {"age", 1}}, {{"name", "c"}, {"age", 2}}}}};
  EXPECT_EQ(R("{{ users | map(attribute='name') | join(',') }}", ctx), "b,a,c");
  EXPECT_EQ(R("{{ users | sort(attribute='age') | map(attribute='name') | list }}", ctx), "['a', 'c', 'b']");
  EXPECT_EQ(R("{{ users | selectattr('age', 'gt', 1) | map(attribute='name') | join }}", ctx), "bc");
  EXPECT_EQ(R("{{ users | rejectattr('name', 'equalto', 'a') | list | length }}", ctx), "2");
  EXPECT_EQ(R("{{ [1, 2, 3, 4] | select('even') | list }} {{ [1, 2, 3] | reject('odd') | list }}"), "[2, 4] [2]");
  EXPECT_EQ(R("{{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ ['b', 'A', 'a'] | unique | list }}"), "[1, 2, 3] [3, 2, 1] ['b', 'A']");
  EXPECT_EQ(R("{{ {'b': 1, 'a': 2} | dictsort }} {{ [1, 2] | reverse | list }} {{ 'ab' | reverse }}"), "[('a', 2), ('b', 1)] [2, 1] ba");
  EXPECT_EQ(R("{{ [1, 2, 3] | first }}{{ [1, 2, 3] | last }}{{ [1, 2, 3] | length }}{{ 'abc' | count }}{{ [1, 2, 3] | sum }}{{ [4, 2, 9] | min }}{{ [4, 2, 9] | max }}"), "1333629");
  EXPECT_EQ(R("{{ x | default('d') }} {{ '' | default('e', true) }} {{ '  t ' | trim }} {{ 'a' | upper }}{{ 'B' | lower }}"), "d e t Ab");
  EXPECT_EQ(R("{{ '3' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }} {{ 1 | string }} {{ -3 | abs }} {{ 2.567 | round(2) }} {{ 2.5 | round }}"), "4 0 2.5 1 3 2.57 2.0");
  EXPECT_EQ(R("{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ {'a': 1} | items | list }}"), "[[1, 2], [3, 4], [5]] [('a', 1)]");
  EXPECT_EQ(R("{{ 'a\\nb' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}"), "a\n  b|  a\n  b");
  EXPECT_EQ(R("{{ '<a & \"b\">' | escape }} {{ 'x y' | title }} {{ 'ab' | capitalize }} {{ 'aXa' | replace('a', 'b') }}"),
            "&lt;a &amp; &#34;b&#34;&gt; X Y Ab bXb");
  EXPECT_EQ(R("{{ 'x' | safe }} {{ ['a', 'b'] | map('upper') | list }}"), "x ['A', 'B']");
}

TEST(ChatTemplateConstructs, ToJson) {
  ordered_json ctx = {{"v", {{"b", {1, 2.0, "é\n\"", true, nullptr}}, {"a", ordered_json::object()}}}};
  EXPECT_EQ(R("{{ v | tojson }}", ctx), "{\"b\": [1, 2.0, \"é\\n\\\"\", true, null], \"a\": {}}");
  EXPECT_EQ(R("{{ v | tojson(indent=2) }}", ctx),
            "{\n  \"b\": [\n    1,\n    2.0,\n    \"é\\n\\\"\",\n    true,\n    null\n  ],\n  \"a\": {}\n}");
  EXPECT_EQ(R("{{ {'b': 1, 'a': [1]} | tojson(separators=(',', ':'), sort_keys=true) }}"), "{\"a\":[1],\"b\":1}");
}

TEST(ChatTemplateConstructs, Tests) {
  EXPECT_EQ(R("{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ 'a' is string }}{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}"),
            "FalseTrueTrueTrueTrueTrueTrue");
  EXPECT_EQ(R("{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ true is boolean }}{{ true is true }}{{ 0 is false }}"),
            "TrueTrueTrueTrueTrueFalse");
  EXPECT_EQ(R("{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 1 is in [1] }}{{ 2 is equalto 2 }}{{ 2 is eq 3 }}{{ none is sameas none }}{{ range is callable }}"),
            "TrueTrueTrueTrueTrueFalseTrueTrue");
  EXPECT_EQ(R("{{ 1 is not none }}"), "True");
}

TEST(ChatTemplateConstructs, Globals) {
  EXPECT_EQ(R("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1) }}"), "[0, 1, 2] [1, 3, 5] {'a': 1}");
  EXPECT_EQ(R("{{ strftime_now('%Y-%m-%d %H:%M') }}"), "2024-07-26 10:00");
  EXPECT_THROW(R("{{ raise_exception('bad role') }}"), ogx::Error);
}

TEST(ChatTemplateConstructs, UndefinedSemantics) {
  EXPECT_EQ(R("{% if not u %}falsy{% endif %}{{ u | length }}{% for x in u %}x{% endfor %}{{ u == u }}"), "falsy0True");
  EXPECT_EQ(R("{{ d.missing is defined }}", {{"d", ordered_json::object()}}), "False");
  EXPECT_THROW(R("{{ u.attr }}"), ogx::Error);   // attribute of undefined raises (default Undefined)
  EXPECT_THROW(R("{{ u + 1 }}"), ogx::Error);
  EXPECT_THROW(R("{{ [1].append(2) }}"), ogx::Error);  // immutable sandbox
}
