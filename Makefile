# segflow: the two quick-start commands are `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	scripts/setup.sh
	@touch $@

demo: setup
	$(BIN)/segflow demo

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# Local Kubernetes control plane (etcd + kube-apiserver + controller manager + node agent).
-include scripts/cluster/cluster.mk
