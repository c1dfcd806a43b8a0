# tests/bounded.mk: `slack info` and `slack stats` in bounded memory (included from tests/tests.mk).
#   tests/test_bounded.sh   their peak RSS flat with the trace's length; their output the same in
#                           small windows, slices and value budgets as in one piece, on random
#                           traces from tests/tools/gen_join.c
# The shell test is in TESTS_SH through tests.mk's tests/test_*.sh.

GEN_JOIN := $(BUILD)/tools/gen_join

$(GEN_JOIN): tests/tools/gen_join.c $(BUILD)/cmd/format/format.o $(BUILD)/cmd/format/trace_file.o \
    format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1

TEST_BUILD += $(GEN_JOIN)
