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

# The whole package is type-checked (config: pyproject.toml [tool.mypy]).
MYPY_FILES := src/headrace

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks tools
	$(VENV)/bin/mypy $(MYPY_FILES)

format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks tools
	$(VENV)/bin/ruff check --fix src tests benchmarks tools

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
