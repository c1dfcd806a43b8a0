# tests/fuzz.mk: fuzzing of the analyzer (tests/fuzz, docs/RELIABILITY.md), included from
# tests/tests.mk.
#
#   make fuzz            builds the libFuzzer targets with clang into $(BUILD)/fuzz and runs each
#                        for FUZZ_SECONDS (default 60) on a copy of its committed corpus; new
#                        inputs stay in $(BUILD)/fuzz/corpus/TARGET, crashes in
#                        $(BUILD)/fuzz/findings/TARGET; the execs per target are printed at the end
#   make fuzz FUZZ_TARGETS=reader FUZZ_SECONDS=600
#   SLACK_FUZZ_NO_HTML=1 make fuzz   the commands target without the HTML pages (faster)
#   make fuzz-build      the fuzzer binaries only
#   make fuzz-merge      minimizes the committed corpora (libFuzzer -merge=1 of the committed
#                        corpus and $(BUILD)/fuzz/corpus/TARGET into tests/fuzz/corpus/TARGET,
#                        inputs cut to FUZZ_MERGE_MAX_LEN bytes)
#   make fuzz-seeds      regenerates the seed inputs from tests/data (tests/fuzz/seeds.c and
#                        make_import_seeds.py) into $(BUILD)/fuzz/seeds/TARGET
#
# make test needs no clang: tests/test_fuzz_replay.sh feeds every committed corpus and regression
# input to the same LLVMFuzzerTestOneInput through tests/fuzz/replay.c, built with $(CC) (and
# $(SAN) when given) as $(BUILD)/fuzz/replay-TARGET.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
# the committed corpora keep small inputs: make test replays them
FUZZ_MERGE_MAX_LEN ?= 8192
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_ALL := reader commands config
ifeq ($(HAVE_SQLITE),1)
FUZZ_ALL += import
endif
FUZZ_TARGETS ?= $(FUZZ_ALL)

# The analyzer as the slack command links it, less main(): every command's entry point.
FUZZ_ANALYZER_SRC := $(filter-out analyzer/main.c,$(SLACK_SRC))
FUZZ_COMMON_SRC := tests/fuzz/fuzz_common.c format/format.c
FUZZ_SRC_reader := tests/fuzz/fuzz_reader.c format/reader.c $(FUZZ_COMMON_SRC)
FUZZ_SRC_commands := tests/fuzz/fuzz_commands.c tests/fuzz/fuzz_json.c $(FUZZ_ANALYZER_SRC) \
    tests/fuzz/fuzz_common.c
FUZZ_SRC_import := tests/fuzz/fuzz_import.c $(FUZZ_ANALYZER_SRC) tests/fuzz/fuzz_common.c
FUZZ_SRC_config := tests/fuzz/fuzz_config.c runtime/config.c $(FUZZ_COMMON_SRC)
FUZZ_LIBS := -l:libzstd.so.1 -lm -lpthread -ldl
ifeq ($(HAVE_SQLITE),1)
FUZZ_LIBS += -lsqlite3
endif
FUZZ_HDRS := $(wildcard tests/fuzz/*.h runtime/*.h analyzer/*.h)

# ---- libFuzzer binaries (clang) ----
FUZZ_CFLAGS := -std=gnu11 -g -O1 $(WARN) -D_GNU_SOURCE -I runtime -I format -I analyzer -I tests/fuzz \
    -I $(CUDA_HOME)/include $(SLACK_DEFS) -fno-omit-frame-pointer \
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_BINS := $(FUZZ_ALL:%=$(FUZZ_DIR)/fuzz-%)

$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

.PRECIOUS: $(FUZZ_DIR)/obj/%.o $(FUZZ_DIR)/cc/%.o

# (a function: a % written in a pattern rule's prerequisites would be the stem)
fuzz_obj = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(1))
.SECONDEXPANSION:
$(FUZZ_DIR)/fuzz-%: $$(call fuzz_obj,$$(FUZZ_SRC_$$*))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(FUZZ_LIBS)

# ---- replay drivers ($(CC), no libFuzzer) ----
FUZZ_REPLAY := $(FUZZ_ALL:%=$(FUZZ_DIR)/replay-%)

$(FUZZ_DIR)/cc/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SLACK_DEFS) -I analyzer -I tests/fuzz -c $< -o $@

# analyzer and format/format.c objects are the slack command's own ($(BUILD)/cmd); the fuzz
# sources and runtime/config.c are built here
fuzz_replay_obj = $(foreach s,$(1),$(if $(filter tests/fuzz/% runtime/config.c,$(s)),\
    $(FUZZ_DIR)/cc/$(s:.c=.o),$(BUILD)/cmd/$(s:.c=.o)))

$(FUZZ_DIR)/replay-%: $$(call fuzz_replay_obj,tests/fuzz/replay.c $$(FUZZ_SRC_$$*))
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDSAN) $(FUZZ_LIBS)

# make test builds the replay drivers (tests/test_fuzz_replay.sh runs them)
TEST_BUILD += $(FUZZ_REPLAY)

# ---- seeds ----
$(FUZZ_DIR)/seeds-tool: tests/fuzz/seeds.c $(BUILD)/cmd/format/reader.o \
    $(BUILD)/cmd/format/format.o $(FUZZ_DIR)/cc/tests/fuzz/fuzz_common.o $(FUZZ_HDRS)
	$(CC) $(CFLAGS_COMMON) -I analyzer -I tests/fuzz -o $@ $(filter %.c %.o,$^) $(LDSAN) $(FUZZ_LIBS)

.PHONY: fuzz fuzz-build fuzz-merge fuzz-seeds
fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz-%)

fuzz-seeds: $(FUZZ_DIR)/seeds-tool
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(FUZZ_DIR)/seeds
	$(FUZZ_DIR)/seeds-tool $(FUZZ_DIR)/seeds tests/data/*.slk tests/data/*/*.slk
	python3 tests/fuzz/make_import_seeds.py tests/data/nsys-small.sqlite $(FUZZ_DIR)/seeds/import

# Each target: a working corpus seeded from the committed one, FUZZ_SECONDS of fuzzing, the
# stats line. -rss_limit_mb: a trace of a few KB that needs 2 GB is a finding.
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/findings/$$t; \
	  cp -n tests/fuzz/corpus/$$t/* tests/fuzz/regressions/$$t/* $(FUZZ_DIR)/corpus/$$t/ \
	    2>/dev/null || true; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
	    -max_len=65536 -print_final_stats=1 \
	    -dict=tests/fuzz/$$t.dict -artifact_prefix=$(FUZZ_DIR)/findings/$$t/ \
	    $(FUZZ_DIR)/corpus/$$t > $(FUZZ_DIR)/$$t.log 2>&1 || \
	    { tail -n 60 $(FUZZ_DIR)/$$t.log; \
	      echo "fuzz: $$t: FINDING in $(FUZZ_DIR)/findings/$$t"; exit 1; }; \
	  grep -h 'stat::number_of_executed_units' $(FUZZ_DIR)/$$t.log | \
	    awk -v t=$$t '{n += $$2} END {printf "fuzz: %s: %d execs, no finding\n", t, n}'; \
	done

fuzz-merge: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/merge-old/$$t $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t; \
	  rm -rf $(FUZZ_DIR)/merge-old/$$t; mv tests/fuzz/corpus/$$t $(FUZZ_DIR)/merge-old/$$t; \
	  mkdir -p tests/fuzz/corpus/$$t; \
	  $(FUZZ_DIR)/fuzz-$$t -merge=1 -rss_limit_mb=2048 -timeout=10 \
	    -max_len=$(FUZZ_MERGE_MAX_LEN) \
	    tests/fuzz/corpus/$$t $(FUZZ_DIR)/merge-old/$$t $(FUZZ_DIR)/corpus/$$t \
	    > $(FUZZ_DIR)/$$t-merge.log 2>&1 || { tail -n 30 $(FUZZ_DIR)/$$t-merge.log; exit 1; }; \
	  echo "fuzz-merge: $$t: $$(ls tests/fuzz/corpus/$$t | wc -l) inputs," \
	    "$$(du -sk tests/fuzz/corpus/$$t | cut -f1) KB"; \
	done
