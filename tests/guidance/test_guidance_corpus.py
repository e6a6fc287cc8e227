"""Structured output end to end through the Python API (params.set_guidance), on random-weight models where only the
constraint can make the output valid: every schema of schemas/ generated greedy and sampled (several seeds), in a
batch of two and with beams, on the CPU provider and on the Vulkan provider (Mesa lavapipe), each output checked by
an independent validator (Debian's python3-jsonschema, formats checked); regexes checked with Python's re, Lark
grammars against a hand-written regex of their language; adversarial constraints fail with a clear error.

Models: the golden llama folders with the tiny byte-level tokenizer (build/api-test-models, $OGX_TEST_MODELS) and
the default model (models/ogx-debian-10m). Tests skip with a message when a model is absent."""
import json
import os
import pathlib
import re

import pytest

og = pytest.importorskip("ogx")
jsonschema = pytest.importorskip("jsonschema")

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCHEMAS = sorted((HERE / "schemas").glob("*.json"))
LAVAPIPE = '{"dml": {"hardware_device_type": "cpu"}}'


def _test_model(variant):
    root = pathlib.Path(os.environ.get("OGX_TEST_MODELS", REPO / "build" / "api-test-models"))
    d = root / ("llama-" + variant)
    if not (d / "genai_config.json").exists():
        pytest.skip("test model %s is absent (../shared missing or not configured): test skipped" % d)
    return str(d)


_models = {}


def load(variant, monkeypatch=None):
    """A loaded model (cached), with its tokenizer; the dml variant runs on lavapipe."""
    if variant not in _models:
        if variant == "fp16-dml":
            os.environ["OGX_PROVIDER_OPTIONS"] = LAVAPIPE
        try:
            d = _test_model(variant) if variant != "default" else _default_model()
            model = og.Model(d)
        finally:
            os.environ.pop("OGX_PROVIDER_OPTIONS", None)
        _models[variant] = (model, og.Tokenizer(model))
    return _models[variant]


def _default_model():
    d = REPO / "models" / "ogx-debian-10m" / "int4"
    if not (d / "genai_config.json").exists():
        pytest.skip("the default model folder %s is absent: test skipped" % d)
    return str(d)


def generate(variant, guidance, prompts, *, sample=False, seed=0, beams=1, max_new=200):
    """Texts of the generated parts (EOS required: an output cut at max_length is incomplete)."""
    model, tok = load(variant)
    params = og.GeneratorParams(model)
    padded = max(len(p) for p in prompts)
    opts = dict(batch_size=len(prompts), max_length=padded + max_new, do_sample=sample, num_beams=beams,
                num_return_sequences=beams)
    if sample:
        opts.update(random_seed=seed, top_k=0, temperature=1.0)
    params.set_search_options(**opts)
    params.set_guidance(*guidance)
    gen = og.Generator(model, params)
    gen.append_tokens(prompts)
    while not gen.is_done():
        gen.generate_next_token()
    eos = 2
    texts = []
    last = gen.get_next_tokens().tolist()
    for i in range(len(prompts) * beams):
        out = gen.get_sequence(i)[padded:].tolist()
        if beams == 1:
            # A row that ended before the others holds its EOS; the step that ended the last row appended nothing
            # (as ONNX Runtime GenAI): its EOS is that step's pick.
            ended = eos in out or (len(out) < max_new and last[i] == eos)
            assert ended, "output did not end (max_length reached): %r" % tok.decode(out)
            if eos in out:
                out = out[:out.index(eos)]
        texts.append(tok.decode(out))
    return texts


def bounded_whitespace(schema_text, i):
    """The schema with whitespace bounded where it sets none: llguidance's default (any whitespace between tokens)
    lets a random-weight model emit whitespace until max_length, which no constraint can prevent. Alternates
    compact JSON and at most two spaces/newlines per gap."""
    schema = json.loads(schema_text)
    x = schema.setdefault("x-guidance", {})
    if "whitespace_flexible" not in x and "whitespace_pattern" not in x:
        if i % 2:
            x["whitespace_pattern"] = "[ \\n]{1,2}"
        else:
            x["whitespace_flexible"] = False
    return json.dumps(schema)


RFC3339_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"


def format_checker():
    """The validator's own format checks (date, email, ipv4, uuid), plus RFC 3339 time and date-time, hostname and
    uri (the validator checks those only with packages Debian 12 lacks)."""
    checker = jsonschema.FormatChecker()
    checker.checks("time")(lambda s: not isinstance(s, str) or re.fullmatch(RFC3339_TIME, s) is not None)

    def date_time(s):
        if not isinstance(s, str):
            return True
        m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[tT](.*)", s)
        return bool(m) and checker.conforms(m.group(1), "date") and re.fullmatch(RFC3339_TIME, m.group(2)) is not None

    checker.checks("date-time")(date_time)
    label = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    checker.checks("hostname")(lambda s: not isinstance(s, str) or (
        len(s) <= 253 and re.fullmatch(label + r"(\." + label + r")*", s) is not None))
    uri_char = r"([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})"  # RFC 3986 unreserved, reserved, pct
    checker.checks("uri")(lambda s: not isinstance(s, str) or re.fullmatch(
        r"[A-Za-z][A-Za-z0-9+.\-]*:" + uri_char + "*", s) is not None)
    return checker


FORMATS = format_checker()


def check_json(schema, text):
    value = json.loads(text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls(schema, format_checker=FORMATS).validate(value)
    return value


PROMPTS = [[1, 300, 25, 911], [1, 17, 5]]


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
def test_schema_corpus_cpu(path):
    schema = json.loads(path.read_text())
    data = bounded_whitespace(path.read_text(), SCHEMAS.index(path))
    for text in generate("fp32-cpu", ("json_schema", data), PROMPTS[:1]):
        check_json(schema, text)
    for seed in (1, 2, 3):
        for text in generate("fp32-cpu", ("json_schema", data), PROMPTS[:1], sample=True, seed=seed):
            check_json(schema, text)
    for text in generate("fp32-cpu", ("json_schema", data), PROMPTS):  # a batch of two prompts
        check_json(schema, text)


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
def test_schema_corpus_lavapipe(path):
    schema = json.loads(path.read_text())
    data = bounded_whitespace(path.read_text(), SCHEMAS.index(path) + 1)
    for text in generate("fp16-dml", ("json_schema", data), PROMPTS[:1]):
        check_json(schema, text)
    for text in generate("fp16-dml", ("json_schema", data), PROMPTS[:1], sample=True, seed=7):
        check_json(schema, text)
    if SCHEMAS.index(path) % 3 == 0:  # a batch of two: one packed mask per row on the device
        for text in generate("fp16-dml", ("json_schema", data), PROMPTS):
            check_json(schema, text)


@pytest.mark.parametrize("path", SCHEMAS[::3], ids=[p.stem for p in SCHEMAS[::3]])
def test_schema_corpus_default_model(path):
    schema = json.loads(path.read_text())
    data = bounded_whitespace(path.read_text(), 0)
    for text in generate("default", ("json_schema", data), [[1, 42, 43]], sample=True, seed=5):
        check_json(schema, text)


def test_beams_hypotheses_valid():
    schema = json.loads((HERE / "schemas" / "04_enum_strings.json").read_text())
    for text in generate("fp32-cpu", ("json_schema", bounded_whitespace(json.dumps(schema), 1)), PROMPTS[:1],
                         beams=3):
        check_json(schema, text)


def test_json_object_mode():
    """JSON mode: any JSON object. A random-weight model writes strings of any length, so an output may reach
    max_length unfinished: it must then still be the start of an object; finished ones must parse as objects."""
    model, tok = load("fp32-cpu")
    finished = 0
    for seed in range(1, 7):
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=4 + 60, do_sample=True, random_seed=seed, top_k=0)
        params.set_guidance("json_object", "")
        gen = og.Generator(model, params)
        gen.append_tokens(PROMPTS[:1])
        while not gen.is_done():
            gen.generate_next_token()
        out = gen.get_sequence(0)[4:].tolist()
        if 2 in out:
            finished += 1
            assert isinstance(json.loads(tok.decode(out[:out.index(2)])), dict)
        else:
            assert tok.decode(out).startswith("{")


REGEXES = [r"[a-z]{2,5}@[a-z]{2,4}\.(com|org)", r"(\+1 )?[0-9]{3}-[0-9]{4}", r"(yes|no|maybe)!?",
           r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", r"[A-F0-9]{8}"]


@pytest.mark.parametrize("rx", REGEXES)
def test_regex(rx):
    for sample, seed in ((False, 0), (True, 1), (True, 2)):
        for text in generate("fp32-cpu", ("regex", rx), PROMPTS[:1], sample=sample, seed=seed, max_new=60):
            assert re.fullmatch(rx, text), (rx, text)


LARK = [
    ("""start: expr
expr: term (("+" | "-") term)*
term: NUMBER | "(" expr ")"
NUMBER: /[1-9][0-9]?/
""", None),
    ("""start: "SELECT " cols " FROM " TABLE (" WHERE " COND)? ";"
cols: COL ("," COL)*
COL: "id" | "name" | "age"
TABLE: "users" | "orders"
COND: COL ("=" | ">") /[0-9]{1,3}/
""", r"SELECT (id|name|age)(,(id|name|age))* FROM (users|orders)( WHERE (id|name|age)(=|>)[0-9]{1,3})?;"),
    ("""start: "answer: " %json {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
    "additionalProperties": false, "x-guidance": {"whitespace_flexible": false}}
""", r'answer: \{"ok":(true|false)\}'),
]


def balanced_expr(text):
    return re.fullmatch(r"[0-9+\-()]+", text) and eval(text) is not None  # parses as Python arithmetic


@pytest.mark.parametrize("i", range(len(LARK)))
def test_lark(i):
    grammar, language = LARK[i]
    for sample, seed in ((False, 0), (True, 3), (True, 4)):
        for text in generate("fp32-cpu", ("lark_grammar", grammar), PROMPTS[:1], sample=sample, seed=seed,
                             max_new=80):
            if language:
                assert re.fullmatch(language, text), text
            else:
                assert balanced_expr(text), text


ADVERSARIAL = [
    ("json_schema", "{" * 5000),
    ("json_schema", json.dumps({"enum": ["v%07d" % i for i in range(400000)]})),
    ("json_schema", '{"$ref": "#/$defs/nope"}'),
    ("json_schema", '{"type": "string", "pattern": "(a"}'),
    ("json_schema", '{"type": "integer", "minimum": 3, "maximum": 2}'),
    ("json_schema", '{"type": "array", "minItems": 50000}'),
    ("json_schema", '{"not": {}}'),
    ("json_schema", '{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}'),
    ("regex", "a{99999}{99999}"),
    ("lark_grammar", "start: undefined_rule\n"),
    ("lark_grammar", "start: A\nA: A\n"),
    ("yaml", "a: 1"),
]


@pytest.mark.parametrize("kind,data", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_constraints_fail_cleanly(kind, data):
    model, _ = load("fp32-cpu")
    params = og.GeneratorParams(model)
    with pytest.raises(og.OgxError) as e:
        params.set_guidance(kind, data)
    assert "set_guidance" in str(e.value) or kind in str(e.value)
    # The process stays usable: a valid constraint still works afterwards.
    params.set_guidance("regex", "ok")
