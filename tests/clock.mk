# tests/clock.mk: the trace clock (runtime/clock.c), included from tests/tests.mk.
#   test_clock   slack_now against clock_gettime(CLOCK_MONOTONIC) on several threads, through
#                the TSC path where the kernel keeps time on the TSC, and with SLACK_TSC=0

$(BUILD)/tests/test_clock: tests/test_clock.c runtime/clock.c runtime/config.c runtime/hook.h \
    runtime/config.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $(filter %.c,$^) $(LDSAN) -lpthread

TEST_UNIT += $(BUILD)/tests/test_clock
