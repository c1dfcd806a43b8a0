# tests/classify.mk: unit tests of the classifier (analyzer/classify.c, its stages cls_*.c and
# analyzer/steps.c) on hand-built timelines, included from tests/tests.mk.
CLS_OBJ := $(patsubst analyzer/%.c,$(BUILD)/cmd/analyzer/%.o,analyzer/classify.c \
    $(wildcard analyzer/cls_*.c))
$(BUILD)/tests/test_classify: tests/test_classify.c tests/tb.h $(CLS_OBJ) analyzer/cls_internal.h \
    $(BUILD)/cmd/analyzer/steps.o $(BUILD)/cmd/analyzer/join.o $(BUILD)/cmd/format/reader.o \
    $(BUILD)/cmd/analyzer/frames.o $(BUILD)/cmd/analyzer/u64map.o $(BUILD)/cmd/analyzer/radix.o \
    $(BUILD)/cmd/analyzer/tail.o $(BUILD)/cmd/format/format.o analyzer/classify.h analyzer/steps.h \
    analyzer/join.h analyzer/tail.h \
    format/reader.h format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I analyzer -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread -ldl -lm

TEST_UNIT += $(BUILD)/tests/test_classify

# compute hints (analyzer/hints.c) on hand-built timelines
$(BUILD)/tests/test_hints: tests/test_hints.c $(BUILD)/cmd/analyzer/hints.o \
    $(BUILD)/cmd/analyzer/frames.o $(BUILD)/cmd/format/reader.o $(BUILD)/cmd/analyzer/join.o \
    $(BUILD)/cmd/analyzer/radix.o $(BUILD)/cmd/analyzer/u64map.o \
    $(BUILD)/cmd/format/format.o analyzer/hints.h format/reader.h format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I analyzer -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread -ldl -lm

TEST_UNIT += $(BUILD)/tests/test_hints

# steps and causes on training loops of random shapes (the classifier judged on loops it was not
# tuned on)
$(BUILD)/tests/test_steps_random: tests/test_steps_random.c tests/tb.h $(CLS_OBJ) \
    analyzer/cls_internal.h \
    $(BUILD)/cmd/analyzer/steps.o $(BUILD)/cmd/analyzer/join.o $(BUILD)/cmd/format/reader.o \
    $(BUILD)/cmd/analyzer/frames.o $(BUILD)/cmd/analyzer/u64map.o $(BUILD)/cmd/analyzer/radix.o \
    $(BUILD)/cmd/analyzer/tail.o $(BUILD)/cmd/format/format.o analyzer/classify.h analyzer/steps.h \
    format/reader.h format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -I analyzer -o $@ $(filter %.c %.o,$^) $(LDSAN) -l:libzstd.so.1 -lpthread -ldl -lm

TEST_UNIT += $(BUILD)/tests/test_steps_random
