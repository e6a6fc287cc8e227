"""Fixtures of the ogx Python tests: the test model folders (golden models of ../shared with the tiny tokenizer,
assembled by CMake under build/api-test-models; $OGX_TEST_MODELS points there) and the seed document."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[4]


def _models_root():
    env = os.environ.get("OGX_TEST_MODELS")
    return pathlib.Path(env) if env else REPO / "build" / "api-test-models"


def _shared_dir():
    env = os.environ.get("OGX_SHARED_DIR")
    return pathlib.Path(env) if env else REPO.parent / "shared"


def _model(variant):
    d = _models_root() / ("llama-" + variant)
    if not (d / "genai_config.json").exists():
        pytest.skip("test model %s is absent (../shared missing or not configured): test skipped" % d)
    return str(d)


@pytest.fixture
def model_dir():
    """The llama fp32-cpu golden model with a tokenizer; its genai_config.json selects no provider (CPU)."""
    return _model("fp32-cpu")


@pytest.fixture
def dml_model_dir():
    """The llama fp16-dml golden model with a tokenizer; its genai_config.json selects the dml provider."""
    return _model("fp16-dml")


@pytest.fixture
def shared_dir():
    d = _shared_dir()
    if not d.exists():
        pytest.skip("../shared is absent (reference material): test skipped")
    return d


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch):
    """Tests start without OGX_PROVIDER_OPTIONS; the ones that need it set it."""
    monkeypatch.delenv("OGX_PROVIDER_OPTIONS", raising=False)


# Errors a dml model may raise where it cannot run: no Vulkan in this build or on this machine, or graph execution
# not wired into this build yet.
DML_UNAVAILABLE = ("cannot run model graphs in this build yet", "no vulkan")  # "no Vulkan device", "no vulkan (dml)"


def dml_unavailable(error):
    return any(s in str(error).lower() for s in DML_UNAVAILABLE)
