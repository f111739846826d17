# Topic Atlas: `make run` builds the default corpus's cache (if missing or stale) and serves the dashboard;
# `make test` runs the checks (ruff, mypy, import-linter) and the test suite. Both create .venv first, only when
# requirements.txt or pyproject.toml changed; the project is installed editable, with its command `topic-atlas`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The default corpus: the whole conference, else its 951-paper sample, else the bundled 19 abstracts.
INPUT ?= $(firstword $(wildcard ../shared/data/iclr2025/iclr2025_abstracts.parquet ../shared/data/iclr2025/papers.parquet) data/sample/iclr2025_seed_abstracts.txt)
# An atlas of several collections instead: `make run COLLECTIONS=data/collections/all-venues.toml` builds
# caches/all-venues (named after the file) from every collection it lists.
COLLECTIONS ?=
ifeq ($(COLLECTIONS),)
CACHE ?= caches/default
BUILD_INPUT := --input $(INPUT)
INPUT_FILES := $(INPUT)
else
CACHE ?= caches/$(basename $(notdir $(COLLECTIONS)))
BUILD_INPUT := --collections $(COLLECTIONS)
INPUT_FILES := $(COLLECTIONS)
endif
PORT ?= 8501
# pytest-xdist workers for `make test` (tests of one file share a worker and its fixtures); 0 runs them in this process.
# Three on two cores: the tests wait on servers, browsers and child processes for a third of their time (docs/testing.md).
TEST_WORKERS ?= 3
# More pytest arguments for the test targets, e.g. PYTEST_ARGS="-k lineage" or "--atlas-seed 7 --atlas-threads 2".
PYTEST_ARGS ?=
# The settings `make test-sweep` runs the suite under: another seed and thread count stand in for another CPU, whose
# floating-point results differ as theirs do (tests/conftest.py).
SWEEP_SETTINGS ?= "--atlas-seed 7 --atlas-threads 2" "--atlas-seed 2026 --atlas-threads 1"
# Every module of the pipeline, in every subfolder, and the command that runs the build: a change to any of them
# rebuilds the cache.
PIPELINE_SOURCES := $(shell find pipeline -name '*.py' -not -path '*/__pycache__/*') \
	topic_atlas/cli.py topic_atlas/commands/build.py topic_atlas/atlas.py topic_atlas/inputs.py
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ATLAS_EMBEDDING_CACHE ?= $(CURDIR)/.cache/embeddings.sqlite
export NUMBA_CACHE_DIR ?= $(CURDIR)/.cache/numba

.PHONY: setup run cache lint test test-fast test-sweep clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m topic_atlas.precompile
	touch $@

# Rebuild when the cache is missing or older than the input or the pipeline code.
$(CACHE)/manifest.json: $(VENV)/.installed $(INPUT_FILES) $(PIPELINE_SOURCES)
	$(BIN)/topic-atlas build $(BUILD_INPUT) --cache $(CACHE)

cache: $(CACHE)/manifest.json

# The page is run once as soon as the server answers, so its first visitor finds the caches filled
# (topic_atlas/warm_up.py). Two glibc malloc arenas instead of 8 per core: each session's script thread would otherwise grow and keep its own
# (bench/load.py measures the server's memory with the same setting).
run: cache
	$(BIN)/python -m topic_atlas.warm_up --port $(PORT) &
	MALLOC_ARENA_MAX=2 $(BIN)/streamlit run dashboard/app.py --server.address 127.0.0.1 --server.port $(PORT) -- --cache $(CACHE)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The edit loop: unit and small-corpus tests, none that builds a real cache or drives Chromium (tests/conftest.py).
test-fast: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow" $(PYTEST_ARGS)

# The whole suite under each of SWEEP_SETTINGS in turn; any failure is a test that holds on one machine only.
test-sweep: setup
	@for setting in $(SWEEP_SETTINGS); do \
		echo "== make test-sweep: $$setting"; \
		$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $$setting $(PYTEST_ARGS) || exit 1; \
	done

clean:
	rm -rf $(CACHE) .pytest_cache
