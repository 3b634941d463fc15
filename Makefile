# The two commands of the README: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench fuzz lint format clean peers

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,image,test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/headrace demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	@for script in benchmarks/*.py; do \
		echo "== $$script"; $(PY) $$script || exit 1; \
	done

# Fuzz every compiled kernel with numba's bounds checks on (FUZZ_SECONDS=3600 by default); prints
# inputs tried, crashes, hangs and failures, and keeps the inputs of any finding.
FUZZ_SECONDS ?= 3600
fuzz: $(STAMP)
	$(PY) tools/fuzz.py --seconds $(FUZZ_SECONDS) --boundscheck

# Optional peers for side-by-side benchmarks (tf.data, PyTorch DataLoader). Not needed for tests.
peers: $(STAMP)
	$(PY) -m pip install --quiet tensorflow-cpu 'torch==2.13.0'

# Type-checked so far (the typed profiler contract and what reads it); add modules as they pass.
MYPY_FILES := src/headrace/core/counters.py src/headrace/profile
# The facade, the user-facing iterator, the tuner, io, image, ray and the adapters.
MYPY_FILES += src/headrace/tune src/headrace/io src/headrace/image src/headrace/ray
MYPY_FILES += src/headrace/__init__.py src/headrace/__main__.py src/headrace/version.py src/headrace/cli.py
MYPY_FILES += src/headrace/dataset.py src/headrace/data.py src/headrace/experimental.py src/headrace/iterator.py
MYPY_FILES += src/headrace/readers.py src/headrace/recipes.py src/headrace/lookahead.py
MYPY_FILES += src/headrace/demo.py src/headrace/demo_torch.py
MYPY_FILES += src/headrace/torch.py src/headrace/jax.py src/headrace/keras.py src/headrace/tf.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks tools
	$(VENV)/bin/mypy $(MYPY_FILES)

format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks tools
	$(VENV)/bin/ruff check --fix src tests benchmarks tools

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
