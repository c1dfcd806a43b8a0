/* The names Nsight Systems and CUPTI give to things, shared by `slack stats` (which prints nsys's
 * tables), `slack import nsys` (which reads nsys's SQLite export) and `slack timeline`.
 *
 *   CUPTI callback ids <-> function names: the tables of analyzer/nsys_cbid.c, generated from
 *   CUPTI's cbid headers by tests/tools/gen_cbid_table.sh ("cudaLaunchKernel_v7000",
 *   "cuLaunchKernel"...: the names nsys stores in its StringIds table as well).
 */
#ifndef SLACK_NSYS_NAMES_H
#define SLACK_NSYS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "nsys_cbid.h"

/* The CUPTI name of an SLK_API record's fn (cbid, SLK_API_DRIVER set for driver ids), or NULL
 * when this slack does not know the id. */
const char *nsys_api_name(uint32_t api_fn);

#define NSYS_DOMAIN_RUNTIME 0
#define NSYS_DOMAIN_DRIVER 1
#define NSYS_DOMAIN_ANY (-1)
/* The SLK_API fn of a CUPTI function name in domain (NSYS_DOMAIN_ANY: runtime first), or 0 when
 * the name is not in the tables. */
uint32_t nsys_api_lookup(const char *name, int domain);

/* name without the "_vNNNN" version suffix, the way nsys's cuda_api_sum shows it: when the two
 * characters six from the end are "_v", the last six go ("cudaLaunchKernel_v7000" ->
 * "cudaLaunchKernel"; "cuGetProcAddress_v2" stays). Writes into buf, returns buf. */
const char *nsys_api_base_name(const char *name, char *buf, size_t len);

/* The slack host-function id (enum slk_fn) of a CUDA function name, after dropping version
 * suffixes ("_v7000", "_v2") and per-thread-stream suffixes ("_ptsz", "_ptds"); SLK_FN_UNKNOWN
 * (0) when none matches. */
uint32_t nsys_fn_of_name(const char *name);

/* "[CUDA memcpy Host-to-Device]" and the like for a CUpti_ActivityMemcpyKind (the labels of
 * nsys's ENUM_CUDA_MEMCPY_OPER table, whose ids are CUPTI's); "[CUDA memset]" for memsets. */
const char *nsys_memcpy_label(uint8_t copy_kind);
#define NSYS_MEMSET_LABEL "[CUDA memset]"

#endif
