"""The images, built once per session through scripts/images/build.sh's cache (the first
fresh run pays for the build: the first test that needs them gets the time)."""
import pytest

from support.containers import BUILD_TIMEOUT, build_images


def pytest_collection_modifyitems(items):
    for item in items:
        if "images" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT + 300))
            return


@pytest.fixture(scope="session")
def images(tmp_path_factory):
    return build_images(str(tmp_path_factory.mktemp("images") / "manifest.json"))
