#!/usr/bin/env python3
"""Reference for `slack stats`: the four nsys stats reports computed straight from an Nsight
Systems SQLite export, the way nsys 2025.3 defines them (SQL over the export, median and sample
standard deviation as aggregate functions, SQLite's round()), printed as nsys's CSV.

    nsys_stats_ref.py EXPORT.sqlite REPORT        CSV of one report
    nsys_stats_ref.py EXPORT.sqlite --totals      JSON: counts and sums per table, straight SQL

REPORT is cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum or cuda_gpu_mem_size_sum.
tests/test_import.sh compares `slack stats --format csv` on the imported trace with this.
"""
import csv
import json
import math
import sqlite3
import sys


class Median:
    def __init__(self):
        self.v = []

    def step(self, x):
        if x is not None:
            self.v.append(x)

    def finalize(self):
        if not self.v:
            return None
        v = sorted(self.v)
        n = len(v)
        return float(v[n // 2]) if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


class StdDev:  # sample standard deviation; 0 for a single value
    def __init__(self):
        self.v = []

    def step(self, x):
        if x is not None:
            self.v.append(x)

    def finalize(self):
        n = len(self.v)
        if n < 2:
            return 0.0
        mean = sum(self.v) / n
        return math.sqrt(sum((x - mean) ** 2 for x in self.v) / (n - 1))


def connect(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    db.create_aggregate("median", 1, Median)
    db.create_aggregate("stdev", 1, StdDev)
    return db


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# Per report: the rows (name, value) it summarizes. Values are durations, or bytes for mem_size.
def sources(db, report):
    t = tables(db)
    if report == "cuda_api_sum":
        # nsys shows the name without a trailing "_vNNNN"
        return ["""SELECT CASE substr(s.value, -6, 2) WHEN '_v'
                       THEN substr(s.value, 1, length(s.value) - 6) ELSE s.value END,
                       r."end" - r.start, r.nameId
                FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r LEFT JOIN StringIds AS s ON s.id = r.nameId"""]
    if report == "cuda_gpu_kern_sum":
        return ["""SELECT s.value, k."end" - k.start, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
                   JOIN StringIds AS s ON s.id = k.demangledName"""]
    size = report == "cuda_gpu_mem_size_sum"
    q = []
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in t:
        q.append("""SELECT '[CUDA memcpy ' || e.label || ']', %s, e.label
                    FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e
                    ON e.id = m.copyKind""" % ("m.bytes" if size else 'm."end" - m.start'))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in t:
        q.append("SELECT '[CUDA memset]', %s, 'memset' FROM CUPTI_ACTIVITY_KIND_MEMSET"
                 % ("bytes" if size else '"end" - start'))
    return q


def report_rows(db, report):
    q = sources(db, report)
    if not q:
        return []
    union = " UNION ALL ".join(q)
    time = report != "cuda_gpu_mem_size_sum"
    # group by the name id for API calls (as nsys does), by the name otherwise
    key = "grp" if report == "cuda_api_sum" else "name"
    rows = db.execute(f"""
        WITH ops(name, v, grp) AS ({union}),
        summary AS (SELECT min(name) AS name, sum(v) AS total, count(*) AS num, avg(v) AS avg,
                           median(v) AS med, min(v) AS min, max(v) AS max, stdev(v) AS sd
                    FROM ops GROUP BY {key}),
        totals AS (SELECT sum(total) AS total FROM summary)
        SELECT round(total * 100.0 / (SELECT total FROM totals), 1), total, num, round(avg, 1),
               round(med, 1), min, max, round(sd, 1), name, avg, med, sd
        FROM summary""").fetchall()
    if report == "cuda_gpu_kern_sum":
        rows.sort(key=lambda r: (-r[1], r[2], r[8]))
    else:
        rows.sort(key=lambda r: (-r[1], r[8]))
    out = []
    for pct, total, num, avg, med, mn, mx, sd, name, ravg, rmed, rsd in rows:
        if time:
            out.append(["%.1f" % pct, str(total), str(num), "%.1f" % avg, "%.1f" % med, str(mn),
                        str(mx), "%.1f" % sd, name])
        else:  # sizes in MB (10^6 bytes), three decimals
            out.append(["%.3f" % (total / 1e6), str(num), "%.3f" % (ravg / 1e6),
                        "%.3f" % (rmed / 1e6), "%.3f" % (mn / 1e6), "%.3f" % (mx / 1e6),
                        "%.3f" % (rsd / 1e6), name])
    return out


HEADERS = {
    "cuda_api_sum": ["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)",
                     "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"],
    "cuda_gpu_kern_sum": ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                          "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"],
    "cuda_gpu_mem_time_sum": ["Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)",
                              "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation"],
    "cuda_gpu_mem_size_sum": ["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)",
                              "Max (MB)", "StdDev (MB)", "Operation"],
}


def totals(db):
    t = tables(db)
    out = {}
    for name, table, extra in [("kernels", "CUPTI_ACTIVITY_KIND_KERNEL", ""),
                               ("memcpys", "CUPTI_ACTIVITY_KIND_MEMCPY", ", sum(bytes)"),
                               ("memsets", "CUPTI_ACTIVITY_KIND_MEMSET", ", sum(bytes)"),
                               ("api_calls", "CUPTI_ACTIVITY_KIND_RUNTIME", ""),
                               ("syncs", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "")]:
        if table not in t:
            out[name] = {"count": 0, "ns": 0, "bytes": 0}
            continue
        r = db.execute(f'SELECT count(*), coalesce(sum("end" - start), 0){extra} FROM {table}'
                       ).fetchone()
        out[name] = {"count": r[0], "ns": r[1], "bytes": (r[2] or 0) if extra else 0}
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    db = connect(sys.argv[1])
    if sys.argv[2] == "--totals":
        print(json.dumps(totals(db), indent=1))
        return
    report = sys.argv[2]
    if report not in HEADERS:
        sys.exit("unknown report " + report)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(HEADERS[report])
    for row in report_rows(db, report):
        w.writerow(row)


if __name__ == "__main__":
    main()
