# tests/robust.mk: sanitizer runs of every CPU-only test, included from tests/tests.mk (make test
# itself runs a smoke of both builds: tests/test_sanitizers.sh).
#
#   make test-asan   AddressSanitizer + UndefinedBehaviorSanitizer build in build/asan, then make test
#   make test-tsan   ThreadSanitizer build in build/tsan, then make test
#
# libslack.so, the slack command and the unit tests are instrumented; the stub CUDA libraries and
# the test programs are not (like a real application). tests/e2e/e2e.py preloads the sanitizer
# runtime before libslack.so (ldd says which), so a report or a crash inside libslack fails the
# scenario: a sanitizer error changes the traced program's exit status or stderr.
#
# Settings: leak checking off (the stub and the programs keep what they allocate);
# verify_asan_link_order=0 lets `slack record` (golden tests) preload the instrumented libslack.so
# without libasan first; ThreadSanitizer's die_after_fork=0, or a fork child of a threaded process
# cannot start slack's writer thread. Slower than make test: the whole e2e run gets
# SAN_TEST_TIMEOUT seconds (default 1800), and the SIGKILL scenario expects what was started
# 1.5 s before a kill on disk (450 ms uninstrumented).
SAN_TEST_TIMEOUT ?= 1800

.PHONY: test-asan test-tsan
test-asan:
	@TEST_TIMEOUT=$(SAN_TEST_TIMEOUT) ROBUST_KILL_LAG_MS=1500 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
	  $(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined test

test-tsan:
	@TEST_TIMEOUT=$(SAN_TEST_TIMEOUT) ROBUST_KILL_LAG_MS=1500 \
	  TSAN_OPTIONS=halt_on_error=0:exitcode=66:die_after_fork=0 \
	  $(MAKE) --no-print-directory BUILD=build/tsan SAN=thread test
