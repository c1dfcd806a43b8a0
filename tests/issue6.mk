# tests/issue6.mk: tests of slack stats, import and timeline (included from tests/tests.mk).
#   tests/test_import.sh         slack import nsys on tests/data/nsys-small.sqlite (cut from the
#                                shared sample by tests/tools/make_nsys_fixture.py), its errors
#   tests/test_stats.sh          slack stats against nsys's definitions (tests/tools/nsys_stats_ref.py)
#   tests/test_stats_sample.sh   the same on the whole shared sample, when ../shared/data has it
#   tests/test_timeline.sh       slack timeline: JSON checked by tests/tools/check_timeline.py
#   build/tools/slk_recompress   rewrites .slk files with their chunks compressed again (tool only)
#   make bench-timeline          a 10-million-event synthetic trace through slack timeline, with
#                                peak RSS at 1, 3 and 10 million events (BENCH_EVENTS to change)
# The shell tests are in TESTS_SH through tests.mk's tests/test_*.sh.

GEN_TRACE := $(BUILD)/tools/gen_trace

$(GEN_TRACE): tests/tools/gen_trace.c $(BUILD)/cmd/format/format.o $(BUILD)/cmd/format/trace_file.o \
    format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1

# The test scripts run the generator: build it with everything else `make test` builds.
TEST_BUILD += $(GEN_TRACE)

# tests/tools/slk_recompress.c: rewrites traces in place with their chunks compressed again
# (tests/data/README.md); no test runs it, `make test` builds it so that it keeps building.
SLK_RECOMPRESS := $(BUILD)/tools/slk_recompress

$(SLK_RECOMPRESS): tests/tools/slk_recompress.c $(BUILD)/cmd/format/format.o \
    $(BUILD)/cmd/format/reader.o $(BUILD)/cmd/format/trace_file.o format/format.h format/reader.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread

TEST_BUILD += $(SLK_RECOMPRESS)

# The whole nsys sample lives beside the repository (shared/ in CI). Without it
# tests/test_stats_sample.sh says SKIP, and `make test` counts it as skipped.

BENCH_EVENTS ?= 1000000 3000000 10000000
.PHONY: bench-timeline
bench-timeline: all $(GEN_TRACE)
	@BUILD=$(BUILD) bash tests/tools/bench_timeline.sh $(BENCH_EVENTS)

# Every analyzer command's records/s and peak RSS at 1, 10 and 50 million records
# (docs/PERFORMANCE.md "Analyzer throughput"); BENCH_ANALYZER_RECORDS to change the sizes.
BENCH_ANALYZER_RECORDS ?= 1000000 10000000 50000000
.PHONY: bench-analyzer
bench-analyzer: all $(GEN_TRACE)
	@BUILD=$(BUILD) bash tests/tools/bench_analyzer.sh $(BENCH_ANALYZER_RECORDS)
