# One entry point per job. Every target sets up what it needs first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup toolchains test test-fast test-nightly demo bench lint clean train-face

$(STAMP): pyproject.toml
	@echo "setup: python environment in $(VENV)/ (pip install -e '.[test]', about a minute)"
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

# All tests, in parallel on every core: pytest (with progress) and lit beside it; one summary line
# at the end. test-fast leaves out the tests marked slow (many seconds each); CI runs all.
test: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tools/run_tests.py

test-fast: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tools/run_tests.py --fast

# Re-train face-4's shipped weights (benchmarks/real/edgeml-rnnpool-face-4/trained/) on the
# generated head scenes: torch in its own .venv-train (tools/train/README.md), CPU, about
# 40 minutes on the shared 2 cores. Not run by the tests (they load the shipped weights).
train-face:
	test -x .venv-train/bin/python || ($(PY) -m venv .venv-train && \
	  .venv-train/bin/pip install -q torch==2.13.0 numpy)
	.venv-train/bin/python tools/face/train.py --images 480 --batch 4 --epochs 2
	.venv-train/bin/python tools/face/reference.py

# Thousands of fuzz cases and differential programs (x86 and AVR): about 5 minutes.
test-nightly: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n auto -p no:cacheprovider -m nightly test/python/fuzz

bench: setup
	$(BIN)/python tools/bench.py
	$(BIN)/python tools/bench.py --face
	$(BIN)/python tools/bench.py --face-search
	$(BIN)/python tools/bench.py --face-ap
	$(BIN)/python tools/bench.py --posit
	$(BIN)/python tools/bench.py --ort
	$(BIN)/python tools/bench.py --profile
	$(BIN)/python tools/bench.py --cmsis
	$(BIN)/python tools/bench.py --int4
	$(BIN)/python tools/bench.py --tflm

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .cache
