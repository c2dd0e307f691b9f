# Every target installs what it needs, idempotently; stamps make the second run fast.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Bytecode is written, as Python does by default, even where the environment says not to
# (PYTHONDONTWRITEBYTECODE is set on these machines): else every pytest worker rewrites and
# compiles every test module, and every server, CLI and hook a test starts compiles the
# package and its libraries again (a server: 0.9 s, not 0.6). The parallel Python pass went
# from 357 to 336 CPU-s. Everything it writes is git-ignored (__pycache__/).
export PYTHONDONTWRITEBYTECODE =

# What every clone on the machine shares (scripts/dev-cache.sh): code-server, Node 24, the agent
# hosts, the bundled dependencies, the npm packages and mypy's cache, by version or key;
# .cache/ links to them.
DEV_CACHE := $(shell scripts/dev-cache.sh root)

.PHONY: help venv test system-deps python-test-deps test-python test-python-parallel \
	test-python-reliability test-reliability test-explore lint typecheck clean bench bench-check bench-history \
	screenshots

# Every target the README names (tests/packaging/test_user_docs.py keeps it so); CONTRIBUTING.md has the rest.
help:
	@echo "make run          - VS Code (code-server) with the extension on examples/workspace, at"
	@echo "                    http://localhost:$(RUN_PORT) (make run RUN_PORT=9000 for another port,"
	@echo "                    make run RUN_WORKSPACE=~/project for a folder of yours)"
	@echo "make test         - the whole suite: lint, types, Python, language server, extension, end-to-end"
	@echo "make vsix         - the extension with its bundled server: $(VSIX)"
	@echo "                    (make vsix VSCE_TARGET=darwin-arm64 for another platform)"
	@echo "make lint         - ruff, lint-imports, actionlint;  make typecheck - mypy --strict"
	@echo "make bench        - the language-server benchmark (make bench-check: exit 1 on a missed target)"
	@echo "make bench-history - the write log's rows of it alone"
	@echo "make test-reliability - the reliability tests at their full load (make test runs a quarter)"
	@echo "make test-explore - the property tests on new random examples (make test's are fixed)"
	@echo "make screenshots  - the documentation's pictures, from the end-to-end tests, into docs/images"
	@echo "make clean        - remove .venv, .cache, dist, node_modules and the tools' caches"
	@echo "make help         - this list"

# A venv without pip's own install (7 s): the machine's pip (22.3+ installs into another
# environment) puts uv in it, and uv installs the project, with pip beside it, in about 4 s
# where pip takes about 20. uv reads no pip.conf, so where it cannot reach the index (a
# mirror set only for pip), pip does the install instead. The libraries' bytecode is written
# as each is first imported (PYTHONDONTWRITEBYTECODE above), not all 5,900 files ahead.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(PY) install --quiet uv \
		|| { $(PY) -m ensurepip --upgrade && $(PY) -m pip install --quiet uv; }
	$(VENV)/bin/uv pip install --python $(PY) --quiet pip -e ".[dev]" \
		|| { $(PY) -m ensurepip --upgrade && $(PY) -m pip install --quiet -e ".[dev]"; }
	@touch $(STAMP)

venv: $(STAMP)

# Debian packages, by the goal that needs them (mk/extension.mk adds its own). system-deps
# installs those of every goal asked for in one call, so a fresh machine runs one `apt-get
# update`; each target still asks for its own (instant once installed), whatever the goal.
LINT_APT := shellcheck
PYTHON_TEST_APT := neovim emacs-nox elpa-eglot
APT_lint = $(LINT_APT)
APT_python-test-deps = $(PYTHON_TEST_APT)
APT_test-python = $(PYTHON_TEST_APT)
APT_test-python-parallel = $(PYTHON_TEST_APT)
APT_test = $(LINT_APT) $(PYTHON_TEST_APT) $(EXTENSION_TEST_APT)
APT_system-deps = $(APT_test)

system-deps:
	@scripts/apt-install.sh $(sort $(foreach goal,$(MAKECMDGOALS),$(APT_$(goal))))

lint: $(STAMP) system-deps
	$(VENV)/bin/ruff check server tests scripts bench
	$(VENV)/bin/ruff format --check server tests scripts bench
	$(VENV)/bin/lint-imports  # the layers and the rest of pyproject.toml's import contracts
	@scripts/apt-install.sh $(LINT_APT)  # actionlint checks the workflows' shell steps with it
	$(VENV)/bin/actionlint .github/workflows/*.yml

typecheck: $(STAMP)
	$(VENV)/bin/mypy --cache-dir $(DEV_CACHE)/mypy  # entries checked by hash: clones may share

# Debian's Neovim and Emacs (with eglot) for the other-editor tests (tests/editors/neovim, tests/editors/emacs);
# Claude Code, Codex, Gemini CLI and Copilot CLI, pinned, for the real-host tests (tests/real_hosts).
python-test-deps: system-deps
	@scripts/apt-install.sh $(PYTHON_TEST_APT)
	@scripts/install-agent-hosts.sh .cache

# The reliability tests run on their own pytest (they load the machine on purpose; `make test`
# runs them beside the extension's build, which takes about one core), at a quarter of their
# load: every test and every check runs, with 4 writers x 50 operations and 125 kills. `make test-reliability` runs the full figures docs/reliability.md reports.
RELIABILITY_SCALE ?= 0.25

test-python: test-python-parallel test-python-reliability

test-python-parallel: $(STAMP) python-test-deps
	$(PY) -m pytest tests --ignore=tests/e2e --ignore=tests/reliability -n auto

test-python-reliability: $(STAMP)
	METIS_RELIABILITY_SCALE=$(RELIABILITY_SCALE) $(PY) -m pytest tests/reliability

test-reliability: $(STAMP)
	METIS_RELIABILITY_SCALE=1 $(PY) -m pytest tests/reliability -s

# The property tests (Hypothesis) on new random examples: `make test` draws the same ones on
# every run (tests/conftest.py), so that it is deterministic. A failure found here is printed
# with its example; keep it as a plain test beside the property.
test-explore: $(STAMP)
	METIS_HYPOTHESIS_PROFILE=explore METIS_RELIABILITY_SCALE=$(RELIABILITY_SCALE) \
		$(PY) -m pytest tests --ignore=tests/e2e -m hypothesis -n auto

# The extension, the real-editor end-to-end tests and `make run` live in mk/extension.mk.
-include mk/extension.mk

# The documentation's pictures (CONTRIBUTING.md, "Documentation pictures"): the end-to-end
# files that take one (docScreenshot), then update-doc-images.mjs copies them into docs/images
# with the hash of the UI sources that tests/packaging/test_doc_images.py checks.
DOC_IMAGE_TESTS = $(patsubst tests/e2e/%.ts,out/e2e/%.js,$(shell grep -l docScreenshot tests/e2e/*.test.ts))

screenshots: e2e-ready
	rm -rf tests/e2e/artifacts/docs
	$(E2E_ENV) node --test --test-concurrency=2 $(DOC_IMAGE_TESTS)
	node scripts/update-doc-images.mjs

# In three steps, each after the last, each one's parts side by side where they leave a core
# idle, their output printed whole as each ends. First the Python suite (on both cores, about
# 88% busy) beside lint and mypy (one core, about 25 s) and, on a fresh machine only, the
# installs of code-server and the npm packages (which made step 2 wait for them: a fresh
# machine's run 344 -> 331 s here); then the reliability pass (about one
# core: its tests take turns, 80-100 s) beside building the extension and its VSIX (npm
# packages, tsc, eslint, vsce: mostly one, about 60 s) and then the bundle's tests (no editor);
# then the editors, which load both cores alone. (Started beside the reliability pass's end,
# the editors stretched it from 84 to 237 s and left the machine less busy.)
test: system-deps  # every step's Debian packages, in one apt-get run
	@$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck test-python-parallel \
		$(EXTENSION_AHEAD_TARGETS)
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-python-reliability $(EXTENSION_BUILD_TARGETS)
	@$(MAKE) --no-print-directory $(EXTENSION_TEST_TARGETS)

# Timings live here, not in `make test`: ratios to a minimal pygls server measured in the same run.
# On compiled libraries, as an installed server has them: the venv compiles its libraries as
# they are first imported, and a first import would time the compiling. server/ too (an
# editable install; under PYTHONDONTWRITEBYTECODE each hook would compile what changed).
# Node 24 runs the plugins' memory reader.
bench: $(STAMP)
	$(PY) -m compileall -q -j0 $(VENV)/lib server > /dev/null || true  # a file that will not compile is not the bench's concern
	scripts/install-node24.sh .cache
	cd bench && ../$(PY) run.py

bench-history: $(STAMP)  # the write log's rows alone (issue 41): a write with it and without, log, blame
	cd bench && ../$(PY) history_case.py

bench-check: $(STAMP)
	$(PY) -m compileall -q -j0 $(VENV)/lib server > /dev/null || true
	scripts/install-node24.sh .cache
	cd bench && ../$(PY) run.py --check

clean:
	rm -rf $(VENV) .cache dist node_modules .mypy_cache .ruff_cache .pytest_cache
