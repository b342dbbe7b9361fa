#!/usr/bin/env python3
"""user/'s folders are its layers, lowest first:

  base      log, options, util: no bloomtap type
  core      pure user space, no bpf(2): Bloomier, watch LPM and lists,
            digests, captures, rtnetlink
  instance  what calls bpf(2): probe, create, link, drop host, sketch,
            SPIE ring, keeper, archive, watch maps, replay
  report    the answers the CLI and the API share: heavy, drops, trace,
            path trace, flows, counters, IPFIX
  agent     bloomtap run: configuration, loop, HTTP, metrics
  cmd       one file a command, cmd_* only, and main

A module is a folder and a file's name without its extension (x.c and
x.h are one module). Two checks: no include goes from a folder to a
higher one, and no import circle (a strongly connected set of more than
one module) exists, even inside a folder; each failure is named with the
include that makes it. And a command is a leaf: a file of cmd/ defines
nothing for other files but cmd_* (and main). Then each check is shown
failing on a copy of the tree: a planted upward include (instance/spie.c
including report/trace_query.h), a planted circle (instance/kernel.c
including create.h: the circle create -> drops -> kernel -> create that
the kernel command's own file removed) and a planted export from
cmd/stats.c. Ends with "N passed, N failed"."""
import glob
import os
import re
import shutil
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = ["base", "core", "instance", "report", "agent", "cmd"]
INCLUDE = re.compile(r'^#include "([^"]+)\.h"', re.M)
# a definition at file scope that is not static: "type name(" at column 0
EXPORTED = re.compile(r'^(?!static\b|typedef\b|struct\b[^(]*\{|#|/|\s)[A-Za-z_][^;=(\n]*?\b(\w+)\(', re.M)


def graph(src):
    """{module: {imported module: the file whose include it is}}, and the
    files found outside any layer's folder."""
    g, stray = {}, []
    for f in sorted(glob.glob(os.path.join(src, "**", "*.[ch]"), recursive=True)):
        rel = os.path.relpath(f, src)
        folder = os.path.dirname(rel)
        if folder not in LAYERS:
            stray.append(rel)
            continue
        m = os.path.splitext(rel)[0]
        edges = g.setdefault(m, {})
        for inc in INCLUDE.findall(open(f, encoding="utf-8").read()):
            # "x.h" is the including file's folder's; "folder/x.h" names one
            target = inc if "/" in inc else folder + "/" + inc
            if target != m and os.path.exists(os.path.join(src, target + ".h")):
                edges.setdefault(target, rel)
    return g, stray


def upward(g):
    """(including file, included module) pairs that point up a layer."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [(f, b) for a, edges in sorted(g.items()) for b, f in sorted(edges.items())
            if rank[b.split("/")[0]] > rank[a.split("/")[0]]]


def circles(g):
    """The strongly connected sets of more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def exported(src):
    """(file, name) of what cmd/ files define for others: only cmd_* and
    main may be (a command is a leaf; what it shares lives below)."""
    out = []
    for f in sorted(glob.glob(os.path.join(src, "cmd", "*.c"))):
        for name in EXPORTED.findall(open(f, encoding="utf-8").read()):
            if not name.startswith("cmd_") and name != "main":
                out.append((os.path.relpath(f, src), name))
    return out


def describe(g, comp):
    return "; ".join("%s includes %s.h" % (g[a][b], b) for a in comp for b in g[a] if b in comp)


def planted(src, path, old, new):
    """The graph of a copy of src with one include added to path."""
    tmp = tempfile.mkdtemp()
    try:
        copy = os.path.join(tmp, "user")
        shutil.copytree(src, copy)
        f = os.path.join(copy, path)
        text = open(f, encoding="utf-8").read()
        assert old in text, "%s holds no %s to plant beside" % (path, old)
        open(f, "w", encoding="utf-8").write(text.replace(old, new + "\n" + old, 1))
        return graph(copy)[0]
    finally:
        shutil.rmtree(tmp)


def main():
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print("  %s  %s" % ("ok  " if ok else "FAIL", what))
        passed += ok
        failed += not ok

    src = os.path.join(TOP, "user")
    g, stray = graph(src)
    check(not stray, "every file of user/ in a layer's folder (%s)%s" % (
        ", ".join(LAYERS), ": not " + ", ".join(stray) if stray else ""))
    up = upward(g)
    check(not up, "no include points up a layer (%d modules, %d imports)%s" % (
        len(g), sum(len(e) for e in g.values()),
        "".join("; %s includes %s.h" % u for u in up)))
    found = circles(g)
    check(not found, "no import circle%s" % "".join(
        "; %s (%s)" % (" <-> ".join(c), describe(g, c)) for c in found))
    ex = exported(src)
    check(not ex, "the commands are leaves: cmd/ defines only cmd_* and main for others%s" % (
        "".join("; %s defines %s" % e for e in ex)))
    # each check can fail
    p = planted(src, "instance/spie.c", '#include "spie.h"', '#include "report/trace_query.h"')
    check(("instance/spie.c", "report/trace_query") in upward(p),
          "a planted upward include (instance/spie.c -> report/trace_query.h) is named")
    p = planted(src, "instance/kernel.c", '#include "kernel.h"', '#include "create.h"')
    c = [c for c in circles(p) if "instance/kernel" in c and "instance/create" in c]
    check(bool(c), "a planted circle (instance/kernel.c -> create.h) is named%s" % (
        ": " + " <-> ".join(c[0]) if c else ""))
    tmp = tempfile.mkdtemp()
    try:
        copy = os.path.join(tmp, "user")
        shutil.copytree(src, copy)
        with open(os.path.join(copy, "cmd", "stats.c"), "a", encoding="utf-8") as f:
            f.write("\nint bt_stats_shared(int x)\n{\n\treturn x;\n}\n")
        check(("cmd/stats.c", "bt_stats_shared") in exported(copy),
              "a planted export (cmd/stats.c defines bt_stats_shared) is named")
    finally:
        shutil.rmtree(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
