# One entry point per job. Every target sets up what it needs first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup toolchains test pytest lit demo bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP) toolchains

toolchains:
	bash tools/install_toolchains.sh

# The main job on the bundled default example.
demo: setup
	$(BIN)/python tools/demo.py

# All tests: pytest, then lit; one summary line at the end.
test: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tools/run_tests.py

bench: setup
	$(BIN)/python tools/bench.py

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .cache
