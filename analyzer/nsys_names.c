/* Names shared with Nsight Systems and CUPTI (nsys_names.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "nsys_names.h"

const char *nsys_api_name(uint32_t api_fn) {
  uint32_t id = api_fn & ~SLK_API_DRIVER;
  if (api_fn & SLK_API_DRIVER)
    return id < nsys_driver_cbid_names_count ? nsys_driver_cbid_names[id] : NULL;
  return id < nsys_runtime_cbid_names_count ? nsys_runtime_cbid_names[id] : NULL;
}

static uint32_t find(const char *const *names, unsigned count, const char *name) {
  for (unsigned i = 1; i < count; i++)
    if (names[i] && !strcmp(names[i], name)) return i;
  return 0;
}

uint32_t nsys_api_lookup(const char *name, int domain) {
  uint32_t id;
  if (domain != NSYS_DOMAIN_DRIVER &&
      (id = find(nsys_runtime_cbid_names, nsys_runtime_cbid_names_count, name)))
    return id;
  if (domain != NSYS_DOMAIN_RUNTIME &&
      (id = find(nsys_driver_cbid_names, nsys_driver_cbid_names_count, name)))
    return id | SLK_API_DRIVER;
  return 0;
}

const char *nsys_api_base_name(const char *name, char *buf, size_t len) {
  size_t n = strlen(name);
  if (n >= 6 && name[n - 6] == '_' && name[n - 5] == 'v') n -= 6;
  snprintf(buf, len, "%.*s", (int)n, name);
  return buf;
}

/* Drops one trailing "_v<digits>", "_ptsz" or "_ptds" from name[0..*n); 1 when it did. */
static int drop_suffix(const char *name, size_t *n) {
  static const char *const fixed[] = {"_ptsz", "_ptds"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    size_t k = strlen(fixed[i]);
    if (*n > k && !memcmp(name + *n - k, fixed[i], k)) {
      *n -= k;
      return 1;
    }
  }
  size_t d = *n;
  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
    d--;
  if (d < *n && d >= 2 && name[d - 1] == 'v' && name[d - 2] == '_') {
    *n = d - 2;
    return 1;
  }
  return 0;
}

uint32_t nsys_fn_of_name(const char *name) {
  size_t n = strlen(name);
  while (drop_suffix(name, &n))
    ;
  for (uint32_t fn = 1; fn < SLK_FN_COUNT; fn++) {
    const char *s = slk_fn_name(fn);
    if (strlen(s) == n && !memcmp(s, name, n)) return fn;
  }
  return SLK_FN_UNKNOWN;
}

const char *nsys_memcpy_label(uint8_t copy_kind) {
  static const char *const labels[] = {
      "[CUDA memcpy Unknown]",
      "[CUDA memcpy Host-to-Device]",
      "[CUDA memcpy Device-to-Host]",
      "[CUDA memcpy Host-to-Array]",
      "[CUDA memcpy Array-to-Host]",
      "[CUDA memcpy Array-to-Array]",
      "[CUDA memcpy Array-to-Device]",
      "[CUDA memcpy Device-to-Array]",
      "[CUDA memcpy Device-to-Device]",
      "[CUDA memcpy Host-to-Host]",
      "[CUDA memcpy Peer-to-Peer]",
      "[CUDA memcpy Unified Host-to-Device]",
      "[CUDA memcpy Unified Device-to-Host]",
      "[CUDA memcpy Unified Device-to-Device]",
  };
  return copy_kind < sizeof labels / sizeof labels[0] ? labels[copy_kind] : labels[0];
}
