"""Writes the shim directory run.sh puts on PYTHONPATH: a package `onnxruntime_genai` that is ogx, and stand-ins for
`onnx` / `onnxruntime` where this Python has none (upstream's test module imports both at the top).

usage: make_shim.py --module-dir DIR_OF_ogx.so --out SHIM_DIR
"""
import argparse
import importlib.util
import os
import shutil

SHIM = '''"""onnxruntime_genai redirected to ogx (tools/ortgenai_conformance)."""
import sys as _sys
_sys.path.insert(0, {module_dir!r})
import ogx as _ogx
from ogx import *  # noqa: F401,F403
__version__ = _ogx.__version__
'''

STANDIN = '''"""Stand-in for `{name}`, which this Python lacks (tools/ortgenai_conformance): importing works, using it fails."""
__ogx_standin__ = True


def __getattr__(attr):
    raise ImportError("{name}.%s: `{name}` is not installed; ogx's conformance run uses a stand-in module" % attr)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module-dir", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(os.path.join(a.out, "onnxruntime_genai"))
    with open(os.path.join(a.out, "onnxruntime_genai", "__init__.py"), "w") as f:
        f.write(SHIM.format(module_dir=os.path.abspath(a.module_dir)))
    for name in ("onnx", "onnxruntime"):
        if importlib.util.find_spec(name) is None:
            os.makedirs(os.path.join(a.out, name))
            with open(os.path.join(a.out, name, "__init__.py"), "w") as f:
                f.write(STANDIN.format(name=name))
            print(f"shim: stand-in for missing module '{name}'")


if __name__ == "__main__":
    main()
