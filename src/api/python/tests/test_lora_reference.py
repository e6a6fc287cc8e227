"""LoRA adapters against an independent reference (issue 22): for each architecture ogx builds (llama, mistral,
qwen2, qwen3, phi3, gemma2), a random checkpoint and a random PEFT LoRA (r 8, alpha 16), the fp32 folder built with
--adapter, and ogx's greedy tokens with the adapter file activated must equal PyTorch's: the float64 forward of
src/builder/tests/torch_reference.py over W + (alpha / r) B A, the LoRA formula of PEFT (and PEFT itself where it is
installed; Debian 12 packages python3-torch but not peft or transformers). tools/peft_reference/compare.py runs the
cases; each also checks that the adapter changes the base model's tokens and that no step is a near-tie (the
reference's smallest top-1 / top-2 margin is ~6e-3 here, fp32 against float64 differs by ~1e-5). Skipped without
python3-torch; dml runs on a CPU Vulkan driver (lavapipe) and is skipped without one."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "tools" / "peft_reference"))

torch_missing = importlib.util.find_spec("torch") is None
pytestmark = pytest.mark.skipif(torch_missing, reason="python3-torch is not installed (scripts/setup.sh installs it)")


def vulkan_device_types():
    """The types of the Vulkan devices `ogx devices --json` lists (empty without the tool or a device)."""
    tool = os.environ.get("OGX_TOOL")
    if not tool:
        return []
    out = subprocess.run([tool, "devices", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return []
    return [d["type"] for d in json.loads(out.stdout).get("devices", [])]


CASES = [(a, ()) for a in ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2")] + [
    ("llama", ("--rslora",)),                              # scale alpha / sqrt(r)
    ("phi3", ("--lora-targets", "qkv_proj,down_proj")),    # phi3's fused projections, some modules only
]


@pytest.mark.parametrize("arch,lora_args", CASES)
def test_adapter_tokens_equal_the_torch_lora_reference(arch, lora_args):
    import compare
    tool = os.environ.get("OGX_BUILD_TOOL")
    if not tool:
        pytest.skip("OGX_BUILD_TOOL (the ogx_build binary) is not set")
    types = vulkan_device_types()
    providers = ["cpu"] + (["dml"] if types else [])
    device_type = None if any(t in ("discrete", "integrated") for t in types) else "cpu"
    config = str(REPO / "src" / "builder" / "tests" / "data" / "arch" / f"{arch}.json")
    records = compare.compare(tool, config, providers, 16, device_type=device_type, lora_args=lora_args)
    assert [r["provider"] for r in records] == providers
    for r in records:
        assert r["match"], r
        assert r["adapter_changes_tokens"], r
        assert r["min_margin"] > 1e-3, r
