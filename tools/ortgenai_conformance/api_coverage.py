"""Counts how much of ONNX Runtime GenAI's API ogx offers, from upstream's own sources in a local checkout:
C functions of src/ort_genai_c.h (Oga* -> Ogx* in include/ogx/ogx.h) and Python names of src/python/python.cpp
(module functions, classes and their methods / properties, looked up in the built ogx module).

usage: api_coverage.py ORTGENAI_CHECKOUT [--ogx-h include/ogx/ogx.h] [--module-dir build/src/api/python]
       [--markdown] [--missing]
"""
import argparse
import importlib
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Upstream groups that concern models other than text decoders (for the "text models" column).
NOT_TEXT = re.compile(r"Image|Audio|MultiModal|Processor|StreamingProcessor|Mtp")


def c_functions(header_text, prefix):
    # Declarations: `<EXPORT> <return type> [<API_CALL>] Prefix<Name>(`; comments stripped first.
    text = re.sub(r"/\*.*?\*/", "", header_text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return sorted(set(re.findall(r"\b" + prefix + r"([A-Za-z0-9_]+)\s*\(", text)))


def python_names(cpp_text):
    """[(class or None, name)] of upstream's pybind11 module."""
    names = []
    current = None
    for line in cpp_text.splitlines():
        m = re.search(r'class_<[^>]+>\(m,\s*"([A-Za-z_0-9]+)"', line)
        if m:
            current = m.group(1)
            names.append((None, current))
            continue
        m = re.search(r'\bm\.def\("([A-Za-z_0-9]+)"', line)
        if m:
            current = None
            names.append((None, m.group(1)))
            continue
        m = re.search(r'\.def(?:_static|_property_readonly|_property|_readonly)?\(\s*"([A-Za-z_0-9]+)"', line)
        if m and current:
            names.append((current, m.group(1)))
        m = re.search(r"\.def\(\s*pybind11::init", line)
        if m and current:
            names.append((current, "__init__"))
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout")
    ap.add_argument("--ogx-h", default=os.path.join(ROOT, "include", "ogx", "ogx.h"))
    ap.add_argument("--module-dir", default=os.path.join(ROOT, "build", "src", "api", "python"))
    ap.add_argument("--markdown", action="store_true", help="print the README table")
    ap.add_argument("--missing", action="store_true", help="list what is missing")
    a = ap.parse_args()

    up_c = c_functions(open(os.path.join(a.checkout, "src", "ort_genai_c.h")).read(), "Oga")
    ogx_c = set(c_functions(open(a.ogx_h).read(), "Ogx"))
    c_have = [n for n in up_c if n in ogx_c]
    c_text = [n for n in up_c if not NOT_TEXT.search(n)]
    c_text_have = [n for n in c_text if n in ogx_c]

    sys.path.insert(0, a.module_dir)
    og = importlib.import_module("ogx")
    py = python_names(open(os.path.join(a.checkout, "src", "python", "python.cpp")).read())

    def present(cls, name):
        if cls is None:
            return hasattr(og, name)
        return hasattr(og, cls) and (name == "__init__" or hasattr(getattr(og, cls), name))

    py_have = [n for n in py if present(*n)]
    py_text = [n for n in py if not NOT_TEXT.search(n[0] or n[1])]
    py_text_have = [n for n in py_text if present(*n)]

    if a.markdown:
        print("| API | upstream names | in ogx | text-model names (no image/audio/MTP) | in ogx |")
        print("|---|---|---|---|---|")
        print(f"| C (`ort_genai_c.h` functions) | {len(up_c)} | {len(c_have)} | {len(c_text)} | {len(c_text_have)} |")
        print(f"| Python (classes, methods, functions) | {len(py)} | {len(py_have)} | {len(py_text)} | "
              f"{len(py_text_have)} |")
    else:
        print(f"C: {len(c_have)} / {len(up_c)} (text models: {len(c_text_have)} / {len(c_text)})")
        print(f"Python: {len(py_have)} / {len(py)} (text models: {len(py_text_have)} / {len(py_text)})")
    if a.missing:
        print("missing C:", " ".join("Oga" + n for n in up_c if n not in ogx_c))
        print("missing Python:", " ".join((c + "." if c else "") + n for c, n in py if not present(c, n)))


if __name__ == "__main__":
    main()
