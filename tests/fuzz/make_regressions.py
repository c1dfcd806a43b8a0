#!/usr/bin/env python3
"""The named regression inputs of tests/fuzz/regressions (docs/RELIABILITY.md), written by hand
for the findings of issue 18 and of the fuzzers; the fuzzers' own minimized inputs sit beside
them (*-fuzzer.slk, and the classifier's overflow past 2^63, which only a fuzzer-made trace
reaches: commands/classify-times-past-2p63-fuzzer.slk). Regenerate with

    python3 tests/fuzz/make_regressions.py tests/fuzz

Trace inputs are whole .slk files (they begin with the file magic, so the fuzz targets take them
as they are and the slack command can open them: tests/test_fuzz_findings.sh runs it on them);
import inputs are in fuzz_import.c's format.
"""
import os
import struct
import sys
import zlib

# ---- the trace format (docs/FORMAT.md) ----


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(v):
    v = ((v + 2**63) % 2**64) - 2**63  # as the int64_t difference the writer takes
    return ((v << 1) ^ (v >> 63)) & (2**64 - 1)


STRING, KERNEL, HOST, MARKER = 1, 2, 7, 8


class Chunk:
    """Records of one chunk with the codec's delta state: a start is coded against the previous
    end of its key (GPU stream or host thread), a corr against the previous corr."""

    def __init__(self):
        self.records = []
        self.last_end = {}
        self.corr = 0

    def add(self, kind, fields):
        """fields: ints (varints) or bytes (a str field: length, then the bytes)."""
        body = b"".join(varint(f) if isinstance(f, int) else varint(len(f)) + f for f in fields)
        self.records.append(bytes([kind]) + varint(len(body)) + body)
        return self

    def _start(self, key, start, dur):
        base = self.last_end.get(key, 0)
        self.last_end[key] = (start + dur) % 2**64
        return zigzag(start - base)

    def _corr(self, corr):
        d = zigzag(corr - self.corr)
        self.corr = corr
        return d

    def string(self, sid, text):
        return self.add(STRING, [sid, text])

    def kernel(self, start, dur, name, corr=0, device=0, stream=7):
        # device, stream, start, end, corr, name, grid xyz, block xyz, shmem, regs, graph_id
        s = self._start(("gpu", device, stream), start, dur)
        return self.add(KERNEL, [device, stream, s, dur, self._corr(corr), name,
                                 2, 2, 2, 2, 2, 2, 0, 32, 0])

    def host(self, tid, start, dur, fn, corr=0):
        # tid, start, end, fn, stream, bytes, copy_kind, flags, result, callsite, corr?
        s = self._start(("tid", tid), start, dur)
        c = self._corr(corr) + 1 if corr else 0
        return self.add(HOST, [tid, s, dur, fn, 0, 0, 0, 0, 0, 0, c])

    def marker(self, tid, start, dur, name):
        s = self._start(("tid", tid), start, dur)
        return self.add(MARKER, [tid, s, dur, name])


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def zstd_raw_frame(raw, content_size=True):
    """A zstd frame of raw (uncompressed) blocks: no zstd module needed."""
    frame = bytearray(struct.pack("<I", 0xFD2FB528))
    if content_size:
        frame += bytes([0xA0])  # single segment, 4-byte content size, no checksum
        frame += struct.pack("<I", len(raw))
    else:
        frame += bytes([0x00, 0x80])  # no content size; window 2^(10+16) bytes
    blocks = [raw[i:i + 65536] for i in range(0, len(raw), 65536)] or [b""]
    for i, b in enumerate(blocks):
        last = 1 if i == len(blocks) - 1 else 0
        frame += struct.pack("<I", (len(b) << 3) | last)[:3] + b
    return bytes(frame)


def chunk(c, payload_len=None, raw_len=None, content_size=True):
    records = c.records
    raw = b"".join(records)
    payload = zstd_raw_frame(raw, content_size)
    h = struct.pack("<IIII", 0x434B4C53, len(payload) if payload_len is None else payload_len,
                    len(raw) if raw_len is None else raw_len, len(records))
    h += struct.pack("<QQII", 0, 0, crc32c(payload), 0)
    return h + payload


def trace(body, chunks):
    body = body.encode()
    return b"SLACKTR\0" + struct.pack("<HHI", 2, 2, len(body)) + body + b"".join(chunks)


HEADER = "pid=42\nclock=CLOCK_MONOTONIC\n"
LAUNCH = 1  # cudaLaunchKernel in SLK_FN_LIST

# ---- import inputs (fuzz_import.c) ----
T_KERNEL, T_RUNTIME, T_STRINGS = 0, 4, 6


def v_null():
    return b"\x00"


def v_i64(v):
    return b"\x04" + struct.pack("<q", v)


def v_text(s):
    s = s.encode()
    return bytes([6, len(s)]) + s


def kernel_row(start, end, shmem_static, shmem_dynamic):
    # start end deviceId streamId correlationId globalPid demangledName shortName gridX gridY
    # gridZ blockX blockY blockZ staticSharedMemory dynamicSharedMemory registersPerThread
    # graphId graphNodeId
    vals = [v_i64(start), v_i64(end), v_i64(0), v_i64(7), v_i64(1), v_i64(1 << 24), v_i64(1),
            v_null()] + [v_i64(1)] * 6 + [v_i64(shmem_static), v_i64(shmem_dynamic), v_i64(32),
                                          v_null(), v_null()]
    return bytes([T_KERNEL]) + b"".join(vals)


def runtime_row(start, end, name_id):
    # start end eventClass globalTid correlationId nameId returnValue
    vals = [v_i64(start), v_i64(end), v_i64(0), v_i64((1 << 24) | 5), v_i64(1), v_i64(name_id),
            v_i64(0)]
    return bytes([T_RUNTIME]) + b"".join(vals)


def strings_row(sid, text):
    return bytes([T_STRINGS]) + v_i64(sid) + v_text(text)


NO_TABLES_LEFT_OUT = bytes(7)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz"
    files = {
        # issue 18: a kernel named by string id 0xfffffff0 made `slack timeline` zero-fill
        # id-indexed caches of 4 and 32 GiB
        "regressions/commands/timeline-string-id-0xfffffff0.slk":
            trace(HEADER, [chunk(Chunk().kernel(1000, 500, 0xFFFFFFF0))]),
        # fuzzer: a record naming a string before its STRING record: the timeline cached "?" as
        # needing no escaping, then wrote the real text unescaped (invalid JSON)
        "regressions/commands/timeline-string-used-before-defined.slk":
            trace(HEADER, [chunk(Chunk().marker(9, 1000, 10, 5)
                                 .string(5, b'quote " newline \n end').marker(9, 2000, 10, 5))]),
        # issue 18: a STRING record without its bytes: memcpy from NULL in strings_define
        "regressions/reader/string-without-bytes.slk":
            trace(HEADER, [chunk(Chunk().add(STRING, [5]).kernel(10, 10, 5))]),
        # issue 18: a chunk that declares a payload of almost 1 GiB in a file of a few bytes:
        # the reader reserved it before finding the file too short
        "regressions/reader/payload-len-past-end-of-file.slk":
            trace(HEADER, [chunk(Chunk().kernel(10, 10, 0), payload_len=(1 << 30) - 1)]),
        # a raw length of almost 1 GiB with a frame that does not say its size: the reader
        # reserved it before decompressing; now the frame's bound (one block: 128 KiB) stops it
        "regressions/reader/raw-len-past-frame-bound.slk":
            trace(HEADER, [chunk(Chunk().kernel(10, 10, 0), raw_len=(1 << 30) - 1,
                                 content_size=False)]),
        # issue 18: shared memory sizes whose sum overflows int64 (convert_gpu)
        "regressions/import/kernel-shared-memory-overflow":
            NO_TABLES_LEFT_OUT + strings_row(1, "k") + runtime_row(100, 200, 2) +
            strings_row(2, "cudaLaunchKernel") +
            kernel_row(150, 300, 2**63 - 1, 2**63 - 1),
        # issue 18: no kernel, copy or memset with a correlation id: qsort(NULL, 0) in load_corr
        # (tables 0-2 left out)
        "regressions/import/no-gpu-work": bytes([7, 0, 0, 0, 0, 0, 0]) +
            strings_row(2, "cudaDeviceSynchronize") + runtime_row(100, 200, 2),
        # a window of almost 2^64 ns made the time axis of `slack report --html` and `slack diff
        # --html` loop for ever (t += step wrapped past the span): fixed in analyzer/html.c
        "regressions/commands/html-time-axis-span-near-2p64.slk":
            trace(HEADER, [chunk(Chunk().string(1, b"k").kernel(0, 100, 1)
                                 .kernel(2**64 - 1000, 965, 1, stream=8))]),
    }
    for name, data in files.items():
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    print("make_regressions: %d inputs in %s" % (len(files), out))


if __name__ == "__main__":
    main()
