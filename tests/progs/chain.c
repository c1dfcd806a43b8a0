/* Known native call chains for the call-site tests (tests/test_callsites.sh): main calls
 * slack_chain_a, which calls slack_chain_b, which calls slack_chain_c, which synchronizes; then
 * slack_chain_deep recurses argv[1] levels (default 20000) before it synchronizes. The chain's
 * functions are exported (tests/tests.mk: --export-dynamic-symbol) so that dladdr names them. */
#include <stdio.h>
#include <stdlib.h>

#include "stub_api.h"

#define NOINLINE __attribute__((noinline, used))

NOINLINE int slack_chain_c(void) {
  int r = (int)cudaDeviceSynchronize();
  __asm__ volatile("" ::: "memory"); /* no tail call: the frame stays */
  return r;
}
NOINLINE int slack_chain_b(void) { return slack_chain_c() + 1; }
NOINLINE int slack_chain_a(void) { return slack_chain_b() + 1; }

NOINLINE int slack_chain_deep(int n) {
  if (n == 0) return (int)cudaDeviceSynchronize();
  int r = slack_chain_deep(n - 1);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

int main(int argc, char **argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 20000;
  int r = slack_chain_a();
  int d = slack_chain_deep(depth);
  printf("chain %d %d\n", r, d - depth);
  return r == 2 && d == depth ? 0 : 1;
}
