# The two commands of the README: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-latest lock bench fuzz lint format clean peers

# Installs the exact versions in constraints.txt (a new release cannot turn `make test` red), then
# compiles the kernels once (`python -m headrace.warmup`), so the first run does not wait for them.
# The editable install leaves src/ without bytecode, and where PYTHONDONTWRITEBYTECODE is set (many
# containers and CI images) every run would compile headrace's modules again: compileall writes it once.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,image,test]'
	$(PY) -m compileall -q src
	$(PY) -m headrace.warmup
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/headrace demo

test: $(STAMP)
	$(PY) -m pytest -q

# The suite against the newest release of every dependency (no constraints), in its own venv: run it to
# see a breaking release on purpose. If it passes, `make lock` moves constraints.txt to those versions.
LATEST := .venv-latest
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet -e '.[dev,image,test]'
	$(LATEST)/bin/python -m pip freeze --exclude-editable | grep -v '^headrace' > $(LATEST)/freeze.txt
	$(LATEST)/bin/python -m pytest -q -p no:cacheprovider

# Refresh constraints.txt from the versions test-latest installed (run `make test-latest` first).
lock:
	@test -f $(LATEST)/freeze.txt || { echo "run make test-latest first"; exit 1; }
	{ head -2 constraints.txt; cat $(LATEST)/freeze.txt; } > constraints.txt.new && mv constraints.txt.new constraints.txt
	@echo "constraints.txt updated; commit it"

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

# The whole package is type-checked (config: pyproject.toml [tool.mypy]); the layers every stage
# runs on (core, runtime, ops) also with every function annotated.
MYPY_FILES := src/headrace
MYPY_STRICT_FILES := src/headrace/core src/headrace/runtime src/headrace/ops

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks tools
	$(VENV)/bin/mypy $(MYPY_FILES)
	$(VENV)/bin/mypy --disallow-untyped-defs $(MYPY_STRICT_FILES)

format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks tools
	$(VENV)/bin/ruff check --fix src tests benchmarks tools

clean:
	rm -rf $(VENV) $(LATEST) build *.egg-info src/*.egg-info .pytest_cache src/headrace/_kernel_cache
