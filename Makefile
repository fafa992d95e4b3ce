# make test: set up a virtual environment in .venv, then run the checks (make lint) beside the test suite (make suite).
# make lint: the types (mypy), the style (ruff check, ruff format --check), the layers (lint-imports).
# make format: format the code as make lint wants it (ruff format).
# make demo: set up, then run the demo league of the sample bots.
# make system-deps: the Debian packages the C++ and Go bots build with (installed when run as root).
# make proto: regenerate referee/v2/ and the kits' copies of the protocol; make proto-lint: buf lint + breaking.
# make bench: run the benchmarks (make bench-quick: their short versions; make soak: the long fault soak).
# make browser-deps: Debian's Chromium for the browser tests (make test runs it); make screenshots: docs/*.png.
# The virtual environment's interpreter: the system's own /usr/bin/python3 where it is 3.11 or later and has venv,
# else python3 on PATH; `make PYTHON=...` chooses another. Debian builds its Python with profile-guided and link-time
# optimisation, which a Python built from source (pyenv's, say) lacks unless asked for: Python code runs some 17%
# faster on it, and Python is most of the test suite's CPU (bots, referees, the test workers).
SYSTEM_PYTHON := /usr/bin/python3
PYTHON ?= $(shell $(SYSTEM_PYTHON) -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && echo $(SYSTEM_PYTHON) || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test suite bytecode rewritten-tests lint format demo bench bench-quick soak proto proto-lint proto-baseline node-deps system-deps bubblewrap browser-deps debian-deps screenshots clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

TOOLS := tools
TOOLS_STAMP := $(TOOLS)/node_modules/.installed
BUF := $(TOOLS)/node_modules/.bin/buf

# Development tools from npm (tools/package.json: buf), where npm is present (the tests that need
# them skip, saying why, where it is not). The sample bots' own packages are their builds' business.
node-deps:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -f $(TOOLS_STAMP) ] || [ $(TOOLS)/package-lock.json -nt $(TOOLS_STAMP) ]; then \
			(cd $(TOOLS) && npm ci --no-audit --no-fund --loglevel=error) && touch $(TOOLS_STAMP); \
		fi; \
	else \
		echo "Node.js/npm not found: buf, the Node.js bot and their tests will be skipped"; \
	fi

# The Debian packages the C++ and Go sample bots build with, offline. Installed when this runs as root
# with apt-get (as CI does); otherwise listed, and the C++ and Go bot tests skip naming them.
CPP_PACKAGES := g++ make pkg-config protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
GO_PACKAGES := golang-go golang-google-grpc-dev golang-google-protobuf-dev protoc-gen-go protoc-gen-go-grpc \
	golang-github-golang-protobuf-1-5-dev
SYSTEM_PACKAGES := $(CPP_PACKAGES) $(GO_PACKAGES)
system-deps:
	@missing=$$(for package in $(SYSTEM_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'ok installed' || echo $$package; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	missing=$$(echo $$missing); \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing $$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q --no-install-recommends $$missing >/dev/null \
			|| { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null; } \
			|| echo "could not install $$missing: the C++ and Go bot tests will be skipped"; \
	else \
		echo "not installed: $$missing (the C++ and Go bot tests will be skipped; as root: make system-deps)"; \
	fi


# bubblewrap (bwrap), the sandbox every bot runs in, libseccomp, which compiles its system call filter, and
# slirp4netns, which connects a build's network to the outside without the machine's loopback: installed here where
# make runs as root with apt-get (as in CI); elsewhere the command to run is printed.
bubblewrap:
	@missing=; command -v bwrap >/dev/null 2>&1 || missing=" bubblewrap"; \
	ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing="$$missing libseccomp2"; \
	command -v slirp4netns >/dev/null 2>&1 || missing="$$missing slirp4netns"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing $$missing, the sandbox every bot runs in"; \
			apt-get install -y -qq --no-install-recommends $$missing >/dev/null 2>&1 \
				|| { apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; }; \
		else \
			echo "the sandbox every bot runs in needs$$missing (not installed); install it with: sudo apt-get install$$missing"; \
			exit 1; \
		fi; \
	fi


# The browser tests drive Debian's Chromium through Playwright (which downloads no browser here). Installed
# where this runs as root with apt-get (as CI does); elsewhere the one command to run is printed and the
# browser tests are skipped, saying why. Without its recommended packages: a headless browser needs none of
# them (udev, upower, Mesa's drivers, a printer dialog, a notification daemon, and with them an upgrade of
# systemd and perl: 108 packages and 28 s of a new machine's set-up here, against 19 packages and 8 s).
CHROMIUM := /usr/bin/chromium
browser-deps:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Chromium for the browser tests (apt-get install -y --no-install-recommends chromium)"; \
		(apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
			|| (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null)) \
			|| echo "could not install chromium: the browser tests will be skipped"; \
	else \
		echo "Chromium not found: the browser tests will be skipped; to run them: sudo apt-get install -y --no-install-recommends chromium"; \
	fi

# The checks, each configured in pyproject.toml; referee/v2/ (generated) is never checked or formatted.
# Every check runs, so that one failure hides none of the others' findings.
lint: $(STAMP)
	@status=0; \
	$(BIN)/ruff check --quiet --output-format concise || status=1; \
	$(BIN)/ruff format --check --quiet --output-format concise || status=1; \
	$(BIN)/lint-imports --no-cache || status=1; \
	$(BIN)/mypy || status=1; \
	exit $$status

format: $(STAMP)
	$(BIN)/ruff format

# The Debian packages, one apt-get after another (apt holds one lock at a time).
debian-deps:
	@$(MAKE) --no-print-directory system-deps
	@$(MAKE) --no-print-directory bubblewrap
	@$(MAKE) --no-print-directory browser-deps

# The set-up runs side by side: the virtual environment, npm, and apt (about 35 s less than one after another on a
# fresh machine), npm's and apt's output printed whole when each ends. The checks need only the virtual environment:
# they start as soon as it is ready, beside the rest of the set-up and then the test suite (mypy's 13 s no longer
# come before the first test, nor wait for apt). Their report comes after the suite's, and either failing fails
# make test.
test:
	@$(MAKE) --no-print-directory -j3 --output-sync=target node-deps debian-deps & others=$$!; \
	$(MAKE) --no-print-directory $(STAMP) || { wait $$others; exit 1; }; \
	$(MAKE) --no-print-directory lint >$(VENV)/lint.log 2>&1 & checks=$$!; \
	$(MAKE) --no-print-directory bytecode rewritten-tests; \
	wait $$others || { wait $$checks; exit 1; }; \
	$(MAKE) --no-print-directory suite; suite=$$?; \
	wait $$checks; lint=$$?; cat $(VENV)/lint.log; \
	if [ $$lint != 0 ]; then echo "make lint failed: its report is above"; fi; \
	[ $$suite = 0 ] && [ $$lint = 0 ]

# The test suite alone.
suite: bytecode
	$(BIN)/python -m pytest

# Python writes no bytecode where PYTHONDONTWRITEBYTECODE is set (as on CI machines), so every bot and referee
# process the tests start would compile the referee's modules again: compiled once here (about 9% of the suite's
# CPU). Nothing to do when they are compiled already.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j 0 referee sample_bots/python tests >/dev/null

# Nor does pytest then keep the test modules it rewrites (to explain a failed assert), so each of the suite's
# workers would rewrite them all: 8 s of CPU a worker, against 3 s to read them back. make test rewrites them
# once, while apt and npm still run.
rewritten-tests: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --collect-only -q -n 0 >/dev/null

# The demo league: the sample bots, the Node.js one where Node.js is present. Starts afresh each time.
# It plays no C++ or Go bot, so it needs none of their toolchains (system-deps).
ifneq ($(shell command -v node 2>/dev/null),)
DEMO_LEAGUE := tournaments/demo.yaml
else
DEMO_LEAGUE := tournaments/demo_python.yaml
endif

# The screenshots in docs/ (shown in the README): the pages of the demo league `make demo` plays.
screenshots: $(STAMP) node-deps bubblewrap browser-deps
	$(BIN)/python docs/screenshots.py $(DEMO_LEAGUE)

demo: $(STAMP) node-deps bubblewrap
	rm -rf results/demo
	$(BIN)/referee run $(DEMO_LEAGUE)
	@echo "Next: $(BIN)/referee serve results/demo, then open http://127.0.0.1:8000/ for the standings and replays"

# Regenerate referee/v2/ from proto/, and copy the protocol into each kit, whose bots see only their own
# folder (the generated code and the copies are committed; tests check they are current).
PROTO_COPIES := sample_bots/node/kit/proto/referee/v2 sample_bots/cpp/proto/referee/v2 sample_bots/go/proto/referee/v2
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. proto/referee/v2/bot.proto
	for copy in $(PROTO_COPIES); do mkdir -p $$copy && cp proto/referee/v2/bot.proto $$copy/; done

# buf lint (STANDARD rules) and buf breaking against referee.v2 as released (see buf.yaml).
proto-lint: node-deps
	@test -x $(BUF) || { echo "buf is missing: it comes from npm (@bufbuild/buf); install Node.js and npm"; exit 1; }
	$(BUF) lint
	$(BUF) breaking --against proto/baseline/v2.json

# Rewrite the breaking-change baseline: only when a new protocol version is released.
proto-baseline: node-deps
	$(BUF) build --exclude-source-info -o proto/baseline/v2.json

bench: $(STAMP) bubblewrap browser-deps
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/league.py
	$(BIN)/python bench/leaderboards.py
	$(BIN)/python bench/fairness.py
	$(BIN)/python bench/pondering.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/schedule.py
	$(BIN)/python bench/calibration.py
	$(BIN)/python bench/viewer.py
	$(BIN)/python bench/disk.py
	$(BIN)/python bench/ray_scaling.py
	$(BIN)/python bench/search_strength.py

bench-quick: $(STAMP) bubblewrap browser-deps
	$(BIN)/python bench/engine.py --quick
	$(BIN)/python bench/overhead.py --quick
	$(BIN)/python bench/league.py --quick
	$(BIN)/python bench/leaderboards.py --quick
	$(BIN)/python bench/fairness.py --quick
	$(BIN)/python bench/pondering.py --quick
	$(BIN)/python bench/sandbox.py --quick
	$(BIN)/python bench/schedule.py --quick
	$(BIN)/python bench/calibration.py --quick
	$(BIN)/python bench/viewer.py --games 120
	$(BIN)/python bench/disk.py --quick
	$(BIN)/python bench/ray_scaling.py --quick
	$(BIN)/python bench/search_strength.py --quick

# The long fault soak: hundreds of games of misbehaving bots beside good ones.
soak: $(STAMP) bubblewrap
	$(BIN)/python bench/soak.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
