"""The parallelisms the engine's tests run their pipelines at (helpers: support.pipelines)."""
import pytest

from support.pipelines import PARALLELISMS


@pytest.fixture(params=PARALLELISMS, ids=lambda p: f"p{p}")
def parallelism(request):
    return request.param
