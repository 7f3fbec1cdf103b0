# The two commands of the README: `make demo` and `make test` (ruff, mypy, pytest).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test venv clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

demo: $(VENV)/.installed
	$(PY) examples/demo.py

test: $(VENV)/.installed
	$(PY) -m ruff check src tests examples
	$(PY) -m mypy
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) demo-output
