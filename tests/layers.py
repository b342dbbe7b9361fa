#!/usr/bin/env python3
"""No import circle in user/: a module is a file's name without its
extension (x.c and x.h are module x), and module a imports module b when
a.c or a.h includes b.h. Any circle (a strongly connected set of more
than one module) fails, named with the includes that close it. A header
of types several files share (agent_state.h) is a module of its own, so
that sharing a type is not a circle. Then the same check on a copy of the
tree with a planted include (kernel.c including create.h, the circle
create -> drops -> kernel -> create that the kernel command's own file
removed) must fail: the check can fail.
Ends with "N passed, N failed"."""
import glob
import os
import re
import shutil
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^#include "([^"/]+)\.h"', re.M)


def graph(src):
    """{module: {imported module: the file whose include it is}}"""
    g = {}
    for f in sorted(glob.glob(os.path.join(src, "*.[ch]"))):
        m = os.path.splitext(os.path.basename(f))[0]
        edges = g.setdefault(m, {})
        for inc in INCLUDE.findall(open(f, encoding="utf-8").read()):
            if inc != m and os.path.exists(os.path.join(src, inc + ".h")):
                edges.setdefault(inc, os.path.basename(f))
    return g


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


def describe(g, comp):
    return "; ".join("%s includes %s.h" % (g[a][b], b) for a in comp for b in g[a] if b in comp)


def main():
    passed = failed = 0
    src = os.path.join(TOP, "user")
    g = graph(src)
    found = circles(g)
    if found:
        for comp in found:
            print("  FAIL  an import circle in user/: %s (%s)" % (" <-> ".join(comp), describe(g, comp)))
        failed += 1
    else:
        passed += 1
        print("  ok    no import circle among user/'s %d modules (%d imports)" % (
            len(g), sum(len(e) for e in g.values())))
    # the check can fail: a planted include closes a circle
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "user")
        shutil.copytree(src, copy)
        k = os.path.join(copy, "kernel.c")
        text = open(k, encoding="utf-8").read()
        open(k, "w", encoding="utf-8").write(text.replace('#include "kernel.h"',
                                                          '#include "create.h"\n#include "kernel.h"', 1))
        planted = circles(graph(copy))
        if any("kernel" in c and "create" in c for c in planted):
            passed += 1
            print("  ok    a planted include (kernel.c -> create.h) is named: %s" % (
                " <-> ".join(next(c for c in planted if "kernel" in c))))
        else:
            failed += 1
            print("  FAIL  a planted circle (kernel.c -> create.h) was not found")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
