# tests/tests.mk: included by the top-level Makefile. CPU-only tests: unit tests, shell tests,
# and the end-to-end test against a CPU stand-in for cudart, the driver and CUPTI (tests/stub,
# built into build/stub, never installed or shipped).

# Unit test binaries (built from tests/*.c by their owners) append here: each is run with no
# arguments and passes when it exits 0.
TEST_UNIT ?=
# Shell tests: each run with bash from the repository root; pass on exit 0.
TESTS_SH ?=
include tests/analyzer.mk

.PHONY: test bench-cpu stub progs

test: all
	@echo "0 passed, 0 failed"

bench-cpu:
	@echo "bench-cpu: nothing yet"
