#!/usr/bin/env python3
"""Include and call cycles between source files (issue 15's house rule; make test runs it through
tests/test_cycles.sh). A unit is a .c file with its .h of the same name (a module's private
parts, MODULES below, count as the module's). Edges: unit A includes
B's header; unit A's object references a symbol defined in B's object (nm). A cycle between
units (a strongly connected component of more than one) is reported with its edges.
Usage: cycles.py BUILD  (objects in BUILD/lib/{runtime,interpose}, BUILD/cmd/{format,analyzer})"""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DIRS = ["interpose", "runtime", "format", "analyzer"]


# files that belong to another file's unit: the classifier's stages (cls_*.c, cls_internal.h), the
# writer's parts (writer_*.c, writer_int.h)
MODULES = {"analyzer/cls_": "analyzer/classify", "runtime/writer_": "runtime/writer"}


def unit(path):
    d, f = os.path.split(path)
    u = os.path.join(os.path.basename(d), os.path.splitext(f)[0])
    for prefix, owner in MODULES.items():
        if u.startswith(prefix):
            return owner
    return u


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    edges = {}  # (a, b) -> reason

    def add(a, b, why):
        if a != b:
            edges.setdefault((a, b), why)

    units = set()
    for d in DIRS:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if not f.endswith((".c", ".h")):
                continue
            src = os.path.join(d, f)
            units.add(unit(src))
            for line in open(os.path.join(ROOT, src), errors="replace"):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                for cand in (os.path.join(d, inc), os.path.join("format", inc),
                             os.path.join("runtime", inc), os.path.join("analyzer", inc)):
                    if os.path.exists(os.path.join(ROOT, cand)):
                        add(unit(src), unit(cand), "includes " + cand)
                        break
    # symbols: which object defines what, which object references what
    objs = []
    for sub, d in (("lib", "interpose"), ("lib", "runtime"), ("cmd", "format"), ("cmd", "analyzer")):
        od = os.path.join(build, sub, d)
        if not os.path.isdir(od):
            sys.exit("cycles.py: no objects in %s (build first)" % od)
        for f in sorted(os.listdir(od)):
            if f.endswith(".o"):
                objs.append((unit(os.path.join(d, f[:-2] + ".c")), os.path.join(od, f)))
    defined, wanted = {}, {}
    for u, o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVW" and parts[1].isupper():
                defined.setdefault(parts[2], u)
            elif len(parts) == 2 and parts[0] == "U":
                wanted.setdefault(u, set()).add(parts[1])
    for u, syms in wanted.items():
        for s in sorted(syms):
            if s in defined:
                add(u, defined[s], "calls " + s)
    # strongly connected components (Tarjan)
    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    print("cycles: %d units, %d edges (includes and calls)" % (len(units), len(edges)))
    for comp in sccs:
        print("cycle: " + " ".join(comp))
        for (a, b), why in sorted(edges.items()):
            if a in comp and b in comp:
                print("    %s -> %s (%s)" % (a, b, why))
    return 1 if sccs else 0


if __name__ == "__main__":
    sys.exit(main())
