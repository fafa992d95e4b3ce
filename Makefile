# make test: set up a virtual environment in .venv and run the test suite.
# make demo: set up, then run the demo league of the sample bots.
# make bench: run the benchmarks (make bench-quick: their short versions; make soak: the long fault soak).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo bench bench-quick soak proto node-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

NODE_BOT := sample_bots/node
NODE_STAMP := $(NODE_BOT)/node_modules/.installed

# The Node.js sample bot's packages, where Node.js is present (its tests skip, saying why, where it is not).
node-deps:
	@if command -v npm >/dev/null 2>&1 && [ -f $(NODE_BOT)/package-lock.json ]; then \
		if [ ! -f $(NODE_STAMP) ] || [ $(NODE_BOT)/package-lock.json -nt $(NODE_STAMP) ]; then \
			(cd $(NODE_BOT) && npm ci --no-audit --no-fund --loglevel=error) && touch $(NODE_STAMP); \
		fi; \
	else \
		echo "Node.js/npm not found: the Node.js bot will not run and its tests will be skipped"; \
	fi

test: $(STAMP) node-deps
	$(BIN)/python -m pytest

# The demo league: the sample bots, the Node.js one where Node.js is present. Starts afresh each time.
ifneq ($(shell command -v node 2>/dev/null),)
DEMO_LEAGUE := tournaments/demo.yaml
else
DEMO_LEAGUE := tournaments/demo_python.yaml
endif
demo: $(STAMP) node-deps
	rm -rf results/demo
	$(BIN)/referee run $(DEMO_LEAGUE)

# Regenerate referee/v1/ from proto/ (the generated code is committed; a test checks it is current).
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. proto/referee/v1/bot.proto

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/league.py

bench-quick: $(STAMP)
	$(BIN)/python bench/engine.py --quick
	$(BIN)/python bench/overhead.py --quick
	$(BIN)/python bench/league.py --quick

# The long fault soak: hundreds of games of misbehaving bots beside good ones.
soak: $(STAMP)
	$(BIN)/python bench/soak.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
