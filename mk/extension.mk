# The VS Code extension: build, package, unit tests, real-editor end-to-end tests, `make run`.
# Included by the Makefile, which defines $(PY) and $(STAMP) (the venv). Every target installs
# what it needs, idempotently; caches (node_modules/, .cache/, dist/) make the second run fast.

CACHE_DIR := .cache
NPM_STAMP := node_modules/.metis-installed
VSCE_TARGET ?= linux-x64
VSIX := dist/metis-memory-$(VSCE_TARGET).vsix
HELPER_VSIX := $(CACHE_DIR)/e2e/metis-e2e-helper.vsix
PYTHON_STANDIN_VSIX := $(CACHE_DIR)/e2e/ms-python-standin.vsix
BUNDLE_STAMP := dist/.bundled.stamp
# Holds the target dist/bundled/ was built for; rewritten (so newer) only when it changes.
BUNDLE_TARGET := dist/.bundled-target
EXT_SOURCES := $(shell find extension/src -name '*.ts')
PY_SOURCES := $(shell find server/metis_memory -type f -not -path '*/__pycache__/*' 2>/dev/null)
VSCE := node_modules/.bin/vsce package --no-dependencies
RUN_PORT ?= 8080
# The folder `make run` opens (`make run RUN_WORKSPACE=~/project` for one of yours, or an empty
# one to see the first run: "Create Memory" in the status bar).
RUN_WORKSPACE ?= examples/workspace
# What `make test` adds (the Makefile reads these): the checks, the builds and the bundle's
# tests (no editor: one core, where the reliability pass leaves the other), then the editors.
# What takes minutes only on a fresh machine (code-server's native build, npm ci's) starts in
# the first step, beside the Python suite: on a warm cache it is instant.
EXTENSION_AHEAD_TARGETS := e2e-deps extension-deps
EXTENSION_BUILD_TARGETS := test-extension e2e-ready test-bundle
EXTENSION_TEST_TARGETS := test-editors

.PHONY: extension-deps build-extension vsix test-extension e2e-deps e2e-ready test-e2e \
	test-bundle test-editors run FORCE

extension-deps: $(NPM_STAMP)

# `npm ci` once per lock file, in the shared developer cache; a clone gets hard links to it.
$(NPM_STAMP): package.json package-lock.json scripts/install-node-modules.sh
	scripts/install-node-modules.sh
	@touch $@

build-extension: dist/extension.js

dist/extension.js: $(NPM_STAMP) $(EXT_SOURCES) scripts/build-extension.mjs
	node scripts/build-extension.mjs

$(BUNDLE_TARGET): FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VSCE_TARGET)" ] || echo "$(VSCE_TARGET)" > $@

# The server and its dependencies for CPython 3.10-3.15 (binary wheels for $(VSCE_TARGET)); each
# version's installed dependencies are kept in $(DEV_CACHE)/bundle/, which every clone shares.
$(BUNDLE_STAMP): $(BUNDLE_TARGET) $(STAMP) pyproject.toml $(PY_SOURCES) extension/python/server.py scripts/bundle_python.py
	$(PY) scripts/bundle_python.py dist/bundled --target $(VSCE_TARGET) --cache-dir $(DEV_CACHE)/bundle
	@touch $@

vsix: $(VSIX)

# vsce matches every file under its folder against every ignore pattern, compiling each
# pattern anew each time: from the project root (.venv/, .cache/) that took 57-68 s of CPU.
# It packages a staging folder of hard links to exactly what .vscodeignore admits instead.
# vsce scans every file for secrets with secretlint, whose profiler (10.x, what vsce asks for)
# searched all its earlier marks at each mark: 47 of the 50 s vsce took on this VSIX's 1,913
# files. package.json's "overrides" pins @secretlint/profiler 13.1.0, which fixed that
# (secretlint/secretlint#1673) with the same API: 10 s, the same scan, the same findings.
VSIX_FILES := package.json .vscodeignore LICENSE CHANGELOG.md extension/README.md dist/extension.js \
	dist/bundled extension/images/icon.png extension/walkthrough docs/images
VSIX_STAGE := $(CACHE_DIR)/vsix-stage

$(VSIX): dist/extension.js $(BUNDLE_STAMP) package.json .vscodeignore extension/README.md LICENSE CHANGELOG.md extension/images/icon.png $(wildcard extension/walkthrough/*.md) $(wildcard docs/images/*.png)
	rm -rf $(VSIX_STAGE) && mkdir -p $(VSIX_STAGE)
	cp -al --parents $(VSIX_FILES) $(VSIX_STAGE)/
	@# Bytecode a run of dist/bundled/ left: .vscodeignore cannot drop it (vsce lets the
	@# negation '!dist/bundled/**' win over any later pattern).
	find $(VSIX_STAGE) -name __pycache__ -prune -exec rm -rf {} +
	cd $(VSIX_STAGE) && $(CURDIR)/$(VSCE) --target $(VSCE_TARGET) --readme-path extension/README.md -o $(CURDIR)/$@
	rm -rf $(VSIX_STAGE)
	@echo "built $@ ($$(du -h $@ | cut -f1)); install: code --install-extension $@"

# dist/extension.js first: its build may rewrite the generated agent patterns tsc reads.
test-extension: $(NPM_STAMP) $(STAMP) dist/extension.js
	node_modules/.bin/tsc --noEmit -p .
	node_modules/.bin/eslint extension/src extension/test
	node_modules/.bin/prettier --check extension/src extension/test
	node scripts/build-extension.mjs --tests
	METIS_PYTHON=$(PY) node --test out/unit/

# Debian's headless Chromium (tests/e2e/lib/ui.ts says why not the full browser) and
# code-server (from npm, with the Node 24 it needs) under .cache/. The Makefile's system-deps
# installs these Debian packages with the other goals' (in one go).
E2E_BROWSER_APT = chromium-headless-shell
E2E_APT = $(E2E_BROWSER_APT) $(shell scripts/install-code-server.sh --apt-packages $(CACHE_DIR))
APT_e2e-deps = $(E2E_APT)
APT_test-e2e = $(E2E_APT)
APT_test-editors = $(E2E_APT)
APT_test-bundle = $(E2E_APT)
APT_e2e-ready = $(E2E_APT)
APT_run = $(E2E_APT)
EXTENSION_TEST_APT = $(E2E_APT)

e2e-deps: system-deps
	@scripts/apt-install.sh $(E2E_BROWSER_APT)
	@scripts/install-code-server.sh $(CACHE_DIR)

$(HELPER_VSIX): $(NPM_STAMP) $(wildcard tests/e2e/helper-extension/src/*.ts) tests/e2e/helper-extension/package.json
	node scripts/build-extension.mjs --e2e
	@mkdir -p $(dir $@)
	cd tests/e2e/helper-extension && ../../../$(VSCE) -o ../../../$@

# Stands in for ms-python.python, which no registry here carries (tests/e2e/python-standin).
# After the helper's: both recipes rebuild both bundles (--e2e), which must not run at once.
$(PYTHON_STANDIN_VSIX): $(NPM_STAMP) $(wildcard tests/e2e/python-standin/src/*.ts) tests/e2e/python-standin/package.json | $(HELPER_VSIX)
	node scripts/build-extension.mjs --e2e
	@mkdir -p $(dir $@)
	cd tests/e2e/python-standin && ../../../$(VSCE) -o ../../../$@

# Everything the end-to-end tests run, built, and the VSIXes installed for code-server: here,
# where make test has a core to spare, not by the first two test files at once.
e2e-ready: e2e-deps $(VSIX) $(HELPER_VSIX) $(PYTHON_STANDIN_VSIX)
	node scripts/build-extension.mjs --e2e
	node out/e2e/install.js $(VSIX) $(HELPER_VSIX) $(PYTHON_STANDIN_VSIX)

E2E_ENV = METIS_VSIX=$(VSIX) METIS_HELPER_VSIX=$(HELPER_VSIX) METIS_PYTHON_STANDIN_VSIX=$(PYTHON_STANDIN_VSIX)
# The test files, by their sources (out/e2e/ may hold a removed test's old build).
E2E_BUNDLE_TEST := out/e2e/bundle.test.js
E2E_EDITOR_TESTS := $(filter-out $(E2E_BUNDLE_TEST),$(patsubst tests/e2e/%.ts,out/e2e/%.js,$(wildcard tests/e2e/*.test.ts)))

test-e2e: test-bundle test-editors

# The launcher and the bundled servers on every CPython here, without an editor.
test-bundle: e2e-ready
	$(E2E_ENV) node --test $(E2E_BUNDLE_TEST)

# Two editors at a time (one per core): each test file starts its own code-server on a free
# port with its own user-data and extensions dir (tests/e2e/lib/codeServer.ts). Within make test,
# three at a time saved about 10 s of 5 min 30 s (325-334 s against 339-342 s) and made a first
# command wait past its test's bound once, so two it stays.
# The last run's screenshots and logs go first (here: a test file that cleared them would take
# those of the files that ran before it, failures' included).
test-editors: e2e-ready
	rm -rf tests/e2e/artifacts
	$(E2E_ENV) node --test --test-concurrency=2 $(E2E_EDITOR_TESTS)

run: e2e-deps $(VSIX)
	scripts/run-code-server.sh $(VSIX) $(RUN_WORKSPACE) $(RUN_PORT)
