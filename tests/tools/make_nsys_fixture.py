#!/usr/bin/env python3
"""Cuts a small test fixture out of an Nsight Systems SQLite export:

    make_nsys_fixture.py BIG.sqlite SMALL.sqlite [KERNELS]

Keeps the first KERNELS kernels (default 2000) and every copy, memset, synchronization and CUDA
API call that starts before the next kernel would, with the tables they refer to (strings, enums,
GPU, threads and processes of the traced process, capture metadata less its environment
variables). Same schema as the source: CREATE statements are copied. tests/data/nsys-small.sqlite
is this script's output for ../shared/data/nsys-probe-2025.3.1.sqlite.xz (decompressed).
"""
import os
import sqlite3
import sys

ACTIVITY = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            "CUPTI_ACTIVITY_KIND_RUNTIME"]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    nkern = int(sys.argv[3]) if len(sys.argv) == 4 else 2000
    if os.path.exists(dst):
        os.unlink(dst)
    db = sqlite3.connect(dst)
    db.execute("ATTACH DATABASE ? AS big", ("file:%s?mode=ro" % src,))
    tables = {name: sql for name, sql in db.execute(
        "SELECT name, sql FROM big.sqlite_master WHERE type = 'table'")}

    def copy(table, where="1"):
        if table not in tables:
            return
        db.execute(tables[table])
        db.execute(f"INSERT INTO main.{table} SELECT * FROM big.{table} WHERE {where}")

    row = db.execute("SELECT start FROM big.CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start "
                     "LIMIT 1 OFFSET ?", (nkern,)).fetchone()
    cut = row[0] if row else 1 << 62
    pid = db.execute("SELECT (globalTid >> 24) & 16777215 FROM big.CUPTI_ACTIVITY_KIND_RUNTIME "
                     "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    same_pid = f"(globalTid >> 24) & 16777215 = {pid}"
    for t in ACTIVITY:
        copy(t, f"start < {cut}")
    copy("ThreadNames", same_pid)
    copy("PROCESSES", f"pid = {pid}")
    copy("META_DATA_CAPTURE", "name NOT LIKE '%ENVIRONMENT_VARIABLE%'")
    copy("TARGET_INFO_SYSTEM_ENV", "name NOT IN ('DeviceEnvironment', 'CpuInfo')")
    for t in ["META_DATA_EXPORT", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME",
              "TARGET_INFO_CUDA_DEVICE", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
              "ENUM_CUPTI_SYNC_TYPE", "ENUM_NSYS_EVENT_TYPE", "ENUM_NSYS_EVENT_CLASS",
              "ENUM_CUDA_KERNEL_LAUNCH_TYPE"]:
        copy(t)
    db.execute(tables["StringIds"])
    db.execute("""INSERT INTO main.StringIds SELECT * FROM big.StringIds WHERE id IN (
                    SELECT demangledName FROM main.CUPTI_ACTIVITY_KIND_KERNEL
                    UNION SELECT shortName FROM main.CUPTI_ACTIVITY_KIND_KERNEL
                    UNION SELECT mangledName FROM main.CUPTI_ACTIVITY_KIND_KERNEL
                    UNION SELECT nameId FROM main.CUPTI_ACTIVITY_KIND_RUNTIME
                    UNION SELECT nameId FROM main.ThreadNames)""")
    db.commit()
    db.execute("DETACH DATABASE big")
    db.execute("VACUUM")
    db.close()
    counts = sqlite3.connect(dst)
    for t in ACTIVITY:
        print(t, counts.execute(f"SELECT count(*) FROM {t}").fetchone()[0])


if __name__ == "__main__":
    main()
