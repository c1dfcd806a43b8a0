# tests/analyzer.mk: tests of the trace codec, the trace reader and the slack command (owned with
# analyzer/), included from tests/tests.mk.
#   test_format   format/format.c's record codec
#   test_reader   format/reader.c and join.c on files written by format/trace_file.c
#   test_radix    analyzer/radix.c and trace_data_sort against the comparison sorts they replace
#   golden/run.sh the slack command's output on a sample trace, against tests/golden/*.out

ANALYZER_TEST_DEPS := format/format.h format/reader.h analyzer/join.h

$(BUILD)/tests/test_format: tests/test_format.c $(BUILD)/cmd/format/format.o $(ANALYZER_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c %.o,$^) $(LDSAN) -lpthread

$(BUILD)/tests/test_reader: tests/test_reader.c $(BUILD)/cmd/format/reader.o \
    $(BUILD)/cmd/analyzer/join.o $(BUILD)/cmd/analyzer/radix.o $(BUILD)/cmd/format/format.o \
    $(BUILD)/cmd/format/trace_file.o $(ANALYZER_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I analyzer -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread

$(BUILD)/tests/test_radix: tests/test_radix.c $(BUILD)/cmd/analyzer/radix.o \
    $(BUILD)/cmd/format/reader.o $(BUILD)/cmd/format/format.o analyzer/radix.h \
    $(ANALYZER_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I analyzer -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread

TEST_UNIT += $(BUILD)/tests/test_format $(BUILD)/tests/test_reader $(BUILD)/tests/test_radix
TESTS_SH += tests/golden/run.sh
