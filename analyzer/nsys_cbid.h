/* The generated tables of analyzer/nsys_cbid.c (tests/tools/gen_cbid_table.sh): the CUPTI
 * callback ids' function names, read through nsys_names.h. */
#ifndef SLACK_NSYS_CBID_H
#define SLACK_NSYS_CBID_H

/* Generated tables (nsys_cbid.c): name of each cbid, NULL for ids without a name. */
extern const char *const nsys_runtime_cbid_names[];
extern const unsigned nsys_runtime_cbid_names_count;
extern const char *const nsys_driver_cbid_names[];
extern const unsigned nsys_driver_cbid_names_count;

#endif
