# segflow: the two quick-start commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup bytecode demo lint test clean

setup: $(STAMP)

# Byte-compile segflow's own sources (the editable install leaves them as source). Every
# segflow process imports them, and where PYTHONDONTWRITEBYTECODE is set (as on these
# machines) Python would otherwise compile them again in each one: about 0.15 s of CPU
# per process, three at once when a job starts. Quick when nothing changed.
bytecode: setup
	$(BIN)/python -m compileall -q -j 0 services operator

$(STAMP): pyproject.toml requirements.lock
	scripts/setup.sh
	@touch $@

demo: bytecode
	$(BIN)/segflow demo

# Lint and type-check first (settings in pyproject.toml; caches under ~/.cache/segflow, so a
# second run takes a few seconds): ruff for style and likely bugs, mypy for types, strict on
# the public API.
lint: setup
	$(BIN)/ruff check services operator bench tests scripts
	$(BIN)/mypy

# The suite runs on TEST_WORKERS pytest-xdist workers: the tests that need Kubernetes (clusters,
# helm) and those that need the Spark session each stay on one worker (tests/conftest.py).
# Lint runs first: a style or type error fails the suite before its half hour starts. The
# images come next (a second when cached): the Kubernetes tests run their pods from them
# unless SEGFLOW_TEST_PODS=loopback (tests/README.md).
TEST_WORKERS ?= 2
test: bytecode test-deps lint images
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=30 -n $(TEST_WORKERS) --dist loadgroup

# System packages the tests need (redis-server); idempotent.
.PHONY: test-deps
test-deps:
	scripts/install-test-deps.sh

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# The images of images/, built here without a Docker engine (scripts/images/build.sh: a base
# from Debian's packages with mmdebstrap, buildah, umoci), cached in ~/.cache/segflow/images
# and rebuilt only when their inputs change; prints their sizes. Needs root.
.PHONY: images
images:
	scripts/images/build.sh

# Local Kubernetes control plane (etcd + kube-apiserver + controller manager + node agent).
-include scripts/cluster/cluster.mk

# Re-resolve requirements.lock from pyproject.toml's ranges (then commit it).
.PHONY: lock
lock:
	scripts/lock.sh

# Regenerate the gRPC/protobuf stubs (committed) from protos/ with the pinned grpcio-tools.
# Regenerate the reference pages (CLI, StreamJob, Helm values, metrics), the benchmark tables
# and the chart's appVersion from the code (tests/docs/test_reference.py checks they match).
.PHONY: docs-reference
docs-reference: setup
	$(BIN)/python -m segflow.reference --write

.PHONY: protos
protos: setup
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=services --grpc_python_out=services \
		--pyi_out=services protos/segflow/v1/data.proto protos/segflow/v1/control.proto
	@touch services/segflow/v1/__init__.py

# The documentation site (mkdocs.yml): `docs` builds it into site/ in strict mode (a broken
# link, anchor or API reference fails), `docs-serve` serves it with live reload on
# 127.0.0.1:8000, `docs-shots` takes its screenshots into docs/images/.
.PHONY: docs docs-serve docs-shots
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

docs-serve: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

docs-shots: setup
	BIN=$(BIN) scripts/docs-shots.sh
