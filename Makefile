# BNMA Studio: `make run` starts the dashboard, `make test` runs lint + tests.
# Both create the virtual environment (.venv) on first use.
# Install: the exact pins of requirements*.txt (reproducible), then this checkout in editable mode
# without dependencies (pyproject.toml declares the same pins for `pip install .`; a test checks
# they agree). Scripts in benchmarks/ and experiments/ import the installed bnma_core; PYTHONPATH=.
# makes them use this checkout's even with another checkout's venv (VENV=...).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run test lint bench venv clean

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m bnma_core.warmup  # compile the numba kernels once (cached on disk)
	touch $@

run: venv
	$(PY) -m streamlit run app.py --server.headless true --server.port $(PORT)

lint: venv
	$(PY) -m ruff check .

test: venv lint
	$(PY) -m pytest -q -n 2 --dist loadfile

bench: venv
	for f in benchmarks/[!_]*.py; do echo "# $$f"; PYTHONPATH=. $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build dist *.egg-info
