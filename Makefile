# make test: set up a virtual environment in .venv and run the test suite.
# make demo: set up, then play a demo game between the sample bots.
# make bench: run the benchmarks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo bench proto node-deps clean

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

# Until the league runner lands, the demo is one game of each game between the sample bots.
DEMO_BOTS := --bot "$(BIN)/python sample_bots/python/heuristic_bot.py" --bot "$(BIN)/python sample_bots/python/random_bot.py"
ifneq ($(shell command -v node 2>/dev/null),)
DEMO_NODE_BOT := --bot "node sample_bots/node/bot.js"
endif
demo: $(STAMP) node-deps
	$(BIN)/referee play --game stop_the_bus --seed 7 $(DEMO_BOTS) $(DEMO_NODE_BOT)
	$(BIN)/referee play --game bastard_brag --seed 7 --quiet $(DEMO_BOTS) --bot "$(BIN)/python sample_bots/python/random_bot.py"

# Regenerate referee/v1/ from proto/ (the generated code is committed; a test checks it is current).
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. proto/referee/v1/bot.proto

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
