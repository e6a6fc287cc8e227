"""Runs onnx.checker.check_model (full external-data check) on an ONNX Runtime GenAI model.

Two documented adjustments, applied to a temporary copy next to the model so external data resolves:
  1. SimplifiedLayerNormalization is an ONNX Runtime contrib op that ORT (and the reference builder) register
     in the default domain; ONNX itself has no such op, so any checker rejects it (the reference exports too).
     The copy moves those nodes to com.microsoft, where the checker treats them as custom ops.
  2. When the installed onnx is older than the model (Debian 12: onnx 1.12, IR 8, opset 17), the copy's
     ir_version and default-domain opset are lowered to what the checker knows.
Exit code 0: the checker accepted the model.
"""
import os
import sys
import tempfile

import onnx

path = sys.argv[1]
m = onnx.load(path, load_external_data=False)
for n in m.graph.node:
    if n.op_type == "SimplifiedLayerNormalization" and n.domain in ("", "ai.onnx"):
        n.domain = "com.microsoft"
m.ir_version = min(m.ir_version, onnx.IR_VERSION)
for o in m.opset_import:
    if o.domain in ("", "ai.onnx"):
        o.version = min(o.version, onnx.defs.onnx_opset_version())
fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=os.path.dirname(os.path.abspath(path)))
os.close(fd)
try:
    onnx.save(m, tmp)
    onnx.checker.check_model(tmp)
except PermissionError:
    raise
finally:
    os.remove(tmp)
print("onnx checker: ok", path)
