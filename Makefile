# slack: make builds build/libslack.so and build/slack; make test runs every CPU-only test.
CUDA_HOME ?= /usr/local/cuda
CC ?= cc
BUILD ?= build
SAN ?=
OPT ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS_COMMON := -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -I format -I runtime -I $(CUDA_HOME)/include
ifneq ($(SAN),)
CFLAGS_COMMON += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDSAN := -fsanitize=$(SAN)
endif
HAVE_SQLITE := $(shell test -f /usr/include/sqlite3.h && echo 1)

LIB_SRC := $(sort $(wildcard interpose/*.c) $(wildcard runtime/*.c)) format/format.c format/trace_file.c
SLACK_SRC := $(sort $(wildcard analyzer/*.c) $(wildcard format/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/lib/%.o)
SLACK_OBJ := $(SLACK_SRC:%.c=$(BUILD)/cmd/%.o)

SLACK_LIBS := -l:libzstd.so.1 -lm
ifeq ($(HAVE_SQLITE),1)
SLACK_DEFS := -DSLACK_HAVE_SQLITE=1
SLACK_LIBS += -lsqlite3
endif

.PHONY: all test demo deps bench clean format check-format install uninstall
all: $(BUILD)/libslack.so $(BUILD)/slack

# libslack.so links neither cudart, libcuda nor libcupti: it finds them at run time.
$(BUILD)/libslack.so: $(LIB_OBJ) interpose/exports.map
	$(CC) -shared -o $@ $(LIB_OBJ) $(LDSAN) -Wl,--version-script=interpose/exports.map -Wl,-z,nodelete -ldl -lpthread -l:libzstd.so.1

$(BUILD)/lib/%.o: %.c $(wildcard format/*.h runtime/*.h interpose/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(LIB_SAN_EXTRA) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

# ThreadSanitizer looks its interceptors up with dlsym while it starts, before it can take a
# function-entry event: the files on libslack's dlsym path record none (GCC instruments function
# entry and exit even under no_sanitize("thread")); make test-tsan crashed at start without it
ifneq ($(findstring thread,$(SAN)),)
TSAN_NO_FUNC := -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
$(BUILD)/lib/interpose/dl.o $(BUILD)/lib/runtime/realsym.o $(BUILD)/lib/interpose/driver.o \
$(BUILD)/lib-nop/interpose/dl.o $(BUILD)/lib-nop/runtime/realsym.o $(BUILD)/lib-nop/interpose/driver.o: \
  LIB_SAN_EXTRA := $(TSAN_NO_FUNC)
endif

# The same sources with -DSLACK_NOP (runtime/hook.h): every wrapper passes straight through and
# tracing never starts. The baseline of the hooks' cost (make bench, scripts/bench/run.sh).
LIB_NOP_OBJ := $(LIB_SRC:%.c=$(BUILD)/lib-nop/%.o)
$(BUILD)/libslack-nop.so: $(LIB_NOP_OBJ) interpose/exports.map
	$(CC) -shared -o $@ $(LIB_NOP_OBJ) $(LDSAN) -Wl,--version-script=interpose/exports.map -Wl,-z,nodelete -ldl -lpthread -l:libzstd.so.1

$(BUILD)/lib-nop/%.o: %.c $(wildcard format/*.h runtime/*.h interpose/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(LIB_SAN_EXTRA) -DSLACK_NOP -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/slack: $(SLACK_OBJ)
	$(CC) -o $@ $^ $(LDSAN) $(SLACK_LIBS) -lpthread

$(BUILD)/cmd/%.o: %.c $(wildcard format/*.h analyzer/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SLACK_DEFS) -I analyzer -c $< -o $@

include tests/tests.mk

# Debian packages the build needs; `make deps` installs the missing ones when root.
DEPS := build-essential libzstd-dev libsqlite3-dev libunwind8 python3 clang-format xz-utils
deps:
	@missing=$$(for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "slack needs: sudo apt-get install -y $$missing" >&2; exit 1; fi

demo: deps
	@$(MAKE) -s all
	@scripts/demo.sh

# CPU benchmark of slack's cost per event (never part of `make test`; no GPU needed):
# scripts/bench/cpu_bench.py, through a cudart that returns at once and through tests/stub.
BENCH_DIR := $(BUILD)/bench
$(BENCH_DIR)/null/libcudart.so.13: scripts/bench/null_cudart.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcudart.so.13 -o $@ $<

$(BENCH_DIR)/cpu_loop: scripts/bench/cpu_loop.c $(BENCH_DIR)/null/libcudart.so.13
	$(CC) $(CFLAGS_COMMON) -o $@ $< -L $(BENCH_DIR)/null -l:libcudart.so.13 -ldl

$(BENCH_DIR)/zstd_levels: scripts/bench/zstd_levels.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< -l:libzstd.so.1

$(BENCH_DIR)/libbare_cupti.so: scripts/bench/bare_cupti.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -fPIC -shared -o $@ $< -ldl

bench: all stub $(BUILD)/libslack-nop.so $(BENCH_DIR)/cpu_loop $(BENCH_DIR)/zstd_levels \
    $(BENCH_DIR)/libbare_cupti.so
	@BUILD=$(BUILD) python3 scripts/bench/cpu_bench.py --zstd

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)
check-format:
	@clang-format --dry-run -Werror $(FORMAT_FILES) && echo "clang-format: clean"

# make install PREFIX=DIR: DIR/bin/slack, DIR/lib/libslack.so (where `slack record` looks first,
# from bin/../lib) and the docs in DIR/share/doc/slack. Into the system's library path (the
# default /usr/local, as root) ldconfig runs, so that LD_PRELOAD=libslack.so works by name.
PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/doc/slack
	install -m 755 $(BUILD)/slack $(DESTDIR)$(PREFIX)/bin/slack
	install -m 644 $(BUILD)/libslack.so $(DESTDIR)$(PREFIX)/lib/libslack.so
	install -m 644 README.md LICENSE docs/*.md $(DESTDIR)$(PREFIX)/share/doc/slack/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig > /dev/null; then ldconfig; fi
	@echo "installed: $(DESTDIR)$(PREFIX)/bin/slack, $(DESTDIR)$(PREFIX)/lib/libslack.so"
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/slack $(DESTDIR)$(PREFIX)/lib/libslack.so
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/slack

clean:
	rm -rf $(BUILD)
