# Two set-up commands: `make up` runs the service, `make test` runs the whole suite.
# Both install what is missing first (Debian packages, then the pinned venv).

SHELL := /bin/bash
PY := .venv/bin/python
DEBIAN_PACKAGES := bubblewrap redis-server chromium chromium-driver util-linux linux-libc-dev

.PHONY: up test check deps venv lint check-challenges docker-engine sandbox-image bench bench-catalogue loadtest compose-check clean

deps:
	@scripts/install-debian-packages.sh $(DEBIAN_PACKAGES)

# The pinned venv, built once per requirements.txt on this machine and linked
# as .venv (scripts/venv.sh says why and where).
venv:
	@scripts/venv.sh

# Run the service on its embedded defaults: SQLite, a local Redis, the bwrap sandbox.
up: deps venv
	@scripts/up.sh

# The Docker engine (Debian's docker.io, dockerd started if needed) and the
# sandbox image, built from a debootstrap base; cached layers are reused.
docker-engine:
	@scripts/docker-engine.sh

sandbox-image: venv docker-engine
	$(PY) -m sandbox.image build

# Grading latency cold and warm, overhead and throughput on every backend (docs/performance.md).
bench: deps venv sandbox-image
	PYTHONPATH=$(CURDIR) $(PY) -m bench.grading

# What a candidate waits for on every challenge: first and warm Submit, split, one at a time (docs/performance.md).
bench-catalogue: deps venv sandbox-image
	PYTHONPATH=$(CURDIR) $(PY) -m bench.catalogue $(BENCH_CATALOGUE_ARGS)

# Simulated candidates over HTTP: pages/s, page and verdict latency, errors, queue depth (docs/performance.md).
# Against LOADTEST_URL (with LOADTEST_REDIS_URL) if set, else a throwaway stack on free ports.
loadtest: deps venv
	@scripts/loadtest.sh $(LOADTEST_ARGS)

# The production stack (docker-compose.yml) from its built images: health, a confined worker, an API grading,
# two workers, a Redis restart mid-queue with nothing lost (scripts/compose_check.py; a few minutes).
# Its images are tagged `check` (MLPREP_TAG), so it never re-tags the :latest a stack on this engine runs.
compose-check: deps venv docker-engine
	MLPREP_TAG=check scripts/build-app-image.sh
	MLPREP_TAG=check $(PY) scripts/compose_check.py $(COMPOSE_CHECK_ARGS)

lint: venv
	$(PY) -m ruff check grader sandbox web tests bench
	$(PY) -m mypy

check-challenges: venv
	$(PY) manage.py check_challenges

# The suite over every core (pytest-xdist, each worker given the next test as it
# frees up; tests/conftest.py puts the longest first, one test per package
# validates it on both backends), lint while the sandbox image builds. Package
# validations that passed before on the same code and backend are remembered
# in var/cache/validated (grader/validation_cache.py). The 30 slowest tests
# are listed at the end (docs/performance.md).
TEST_JOBS ?= $(shell nproc)
# One grading at a time inside each validation: the xdist workers already keep
# every core busy, and more sandboxes than cores would squeeze the reference's
# probe times that validation holds against their limits.
export GRADER_VALIDATE_JOBS ?= 1

test: deps venv
	@$(MAKE) --no-print-directory -j2 lint sandbox-image
	scripts/run-tests.sh -n $(TEST_JOBS) --dist loadgroup --durations=30

# The fast loop while working (issue 30): lint, then the unit and web tests on the fake backend and the packages'
# cheap invariants (files parsed, records current, coverage tables), nothing that starts a real sandbox or a
# browser (marked slow, browser or sandbox: make test runs them). A few minutes at most on this machine.
check: venv
	@$(MAKE) --no-print-directory lint
	scripts/run-tests.sh -n $(TEST_JOBS) -m "not slow and not browser and not sandbox" tests/web tests/grader tests/challenges tests/test_layering.py

clean:
	rm -rf var/cache var/log var/run staticfiles
