#!/usr/bin/env python3
"""Turns a slack trace into the few tables of an nsys SQLite export that nsys's stats reports
read, from `slack dump` output, so that tests/tools/nsys_stats_ref.py can compute the reports of
a slack-native trace the nsys way:

    dump_to_nsys.py SLACK TRACE.slk OUT.sqlite

Kernels keep their names as recorded (compare with `slack stats --mangled`); CUDA API calls are
the HOST records (the calls slack's hooks saw), named by their function, as `slack stats` takes
them for a slack trace. Copy kinds are CUPTI's, as in nsys's ENUM_CUDA_MEMCPY_OPER.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys

FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')
LABELS = ["Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host",
          "Array-to-Array", "Array-to-Device", "Device-to-Array", "Device-to-Device",
          "Host-to-Host", "Peer-to-Peer"]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    slack, trace, out = sys.argv[1:]
    if os.path.exists(out):
        os.unlink(out)
    db = sqlite3.connect(out)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, demangledName INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, bytes INTEGER,
                                                 copyKind INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, bytes INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, nameId INTEGER);
    """)
    db.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, '', ?)", enumerate(LABELS))
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[s], s))
        return strings[s]

    dump = subprocess.run([slack, "dump", "--kind", "kernel,memcpy,memset,host", trace],
                          check=True, capture_output=True, text=True).stdout
    for line in dump.splitlines():
        kind, _, rest = line.partition(" ")
        f = {k: v for k, v in FIELD.findall(rest)}
        start, end = int(f.get("start", 0)), int(f.get("end", 0))
        end = max(end, start)
        if kind == "kernel":
            name = json.loads(f["name"]) if f.get("name", "").startswith('"') else "?"
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?)",
                       (start, end, sid(name)))
        elif kind == "memcpy":
            kind_id = int(f.get("copy_kind", 0))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, ?)",
                       (start, end, int(f.get("bytes", 0)), kind_id if kind_id < 11 else 0))
        elif kind == "memset":
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?)",
                       (start, end, int(f.get("bytes", 0))))
        elif kind == "host":
            fn = f.get("fn", "unknown")
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?)",
                       (start, end, sid("unknown" if fn.startswith("#") else fn)))
    db.commit()
    db.close()


if __name__ == "__main__":
    main()
