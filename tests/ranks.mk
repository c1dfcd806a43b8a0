# tests/ranks.mk: the multi-rank report (issue 16; included from tests/tests.mk).
#   tests/tools/gen_ranks.c   synthetic traces of a data-parallel job, one per rank
#   tests/test_ranks.sh       slack report over them: stragglers, waits, clock skew, missing ranks
# tests/data/ranks/ holds the goldens' traces, written by tests/tools/gen_ranks.sh.

GEN_RANKS := $(BUILD)/tools/gen_ranks

$(GEN_RANKS): tests/tools/gen_ranks.c $(BUILD)/cmd/format/format.o $(BUILD)/cmd/format/trace_file.o \
    format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1

TEST_BUILD += $(GEN_RANKS)
