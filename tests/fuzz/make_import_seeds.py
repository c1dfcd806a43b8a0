#!/usr/bin/env python3
"""Seed inputs of the "import" fuzz target from an nsys SQLite export (make fuzz-seeds).

    make_import_seeds.py EXPORT.sqlite OUTDIR

Writes a few inputs in fuzz_import.c's format (the tables it creates, then rows of typed
values), cut from the export: the first rows of every table, a window in the middle of the
capture with every string, and the same window with a column of the kernel table left out (the
importer then reads shortName). TABLES must stay in step with `tables` in fuzz_import.c.
"""
import os
import sqlite3
import struct
import sys

TABLES = [
    ("CUPTI_ACTIVITY_KIND_KERNEL",
     ["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName",
      "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory",
      "dynamicSharedMemory", "registersPerThread", "graphId", "graphNodeId"]),
    ("CUPTI_ACTIVITY_KIND_MEMCPY",
     ["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind",
      "srcKind", "dstKind", "graphId", "graphNodeId"]),
    ("CUPTI_ACTIVITY_KIND_MEMSET",
     ["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "memKind",
      "graphId", "graphNodeId"]),
    ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
     ["start", "end", "deviceId", "streamId", "correlationId", "globalPid", "syncType",
      "deprecatedSyncType", "eventId"]),
    ("CUPTI_ACTIVITY_KIND_RUNTIME",
     ["start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"]),
    ("NVTX_EVENTS", ["start", "end", "globalTid", "text", "textId", "eventType"]),
    ("StringIds", ["id", "value"]),
    ("TARGET_INFO_GPU", ["id", "name", "smCount", "totalMemory"]),
    ("ThreadNames", ["nameId", "priority", "globalTid"]),
    ("META_DATA_EXPORT", ["name", "value"]),
    ("META_DATA_CAPTURE", ["name", "value"]),
    ("TARGET_INFO_SESSION_START_TIME", ["utcEpochNs"]),
    ("TARGET_INFO_SYSTEM_ENV", ["name", "value"]),
]


def value(v):
    if v is None:
        return b"\x00"
    if isinstance(v, int):
        for t, fmt in ((1, "<b"), (2, "<h"), (3, "<i"), (4, "<q")):
            try:
                return bytes([t]) + struct.pack(fmt, v)
            except struct.error:
                continue
        return b"\x00"
    if isinstance(v, float):
        return b"\x05" + struct.pack("<d", v)
    raw = v.encode("utf-8", "replace") if isinstance(v, str) else bytes(v)
    raw = raw[:255]
    return bytes([6 if isinstance(v, str) else 7, len(raw)]) + raw


def rows(db, table, cols, where="", limit=30):
    have = {r[1] for r in db.execute('PRAGMA table_info("%s")' % table)}
    if not have:
        return []
    sel = ", ".join('"%s"' % c if c in have else "NULL" for c in cols)
    order = " ORDER BY start" if "start" in have else ""
    q = 'SELECT %s FROM "%s" %s%s LIMIT %d' % (sel, table, where if "start" in have else "",
                                               order, limit)
    return db.execute(q).fetchall()


def seed(db, prefix, where, limit, strings_limit):
    out = bytearray(prefix)
    for t, (table, cols) in enumerate(TABLES):
        lim = strings_limit if table in ("StringIds", "META_DATA_CAPTURE",
                                         "TARGET_INFO_SYSTEM_ENV") else limit
        for r in rows(db, table, cols, where, lim):
            out.append(t)
            for v in r:
                out += value(v)
    return bytes(out)


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    db = sqlite3.connect("file:%s?mode=ro" % src, uri=True)
    t0, t1 = db.execute("SELECT min(start), max(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    mid = (t0 + t1) // 2
    window = "WHERE start >= %d" % mid
    none = bytes(7)
    seeds = {
        "first-rows": seed(db, none, "", 12, 40),
        "middle": seed(db, none, window, 25, 200),
        # kernel table without demangledName (column 6): the importer falls back to shortName
        "no-demangled-name": seed(db, bytes([0, 0, 0, 6, 0, 0, 0]), window, 10, 200),
        # no StringIds table (bit 6): names become [nsys string N]
        "no-strings": seed(db, bytes([1 << 6, 0, 0, 0, 0, 0, 0]), window, 10, 0),
    }
    for name, data in seeds.items():
        with open(os.path.join(outdir, "nsys-small-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
