#!/usr/bin/env python3
"""user/'s folders are its layers, lowest first:

  base      log, options, util: no bloomtap type
  core      pure user space, no bpf(2): Bloomier, watch LPM and lists,
            digests, captures, rtnetlink, the SPIE filter's math, drop
            reasons' names, the archive
  instance  what calls bpf(2): probe, create, link, drop host, sketch,
            SPIE ring, keeper, watch maps, replay
  report    the answers the CLI and the API share: heavy, drops, trace,
            path trace, flows, counters, IPFIX
  agent     bloomtap run: configuration, loop, HTTP, metrics
  cmd       one file a command, cmd_* only, and main

A module is a folder and a file's name without its extension (x.c and
x.h are one module). The checks: no include goes from a folder to a
higher one, and no import circle (a strongly connected set of more than
one module) exists, even inside a folder; each failure is named with the
include that makes it. Then each layer's own rule. base/ includes
nothing of include/ (bloomtap.h, hash.h: no bloomtap type). base/ and
core/ make no bpf(2) call: no libbpf function that makes one (bpf_*,
as bpf_map_lookup_elem and bpf_object__load; ring_buffer__*,
perf_buffer__*, libbpf_probe_*; the BTF loads into and from the kernel),
no syscall(__NR_bpf), no <bpf/bpf.h>, <bpf/libbpf.h> or skeleton (base/
log.c's <bpf/libbpf.h> alone, for libbpf's print hook); comments and
strings are not read. Each file of instance/ calls bpf(2) or works on an
instance's objects (struct bt_instance, struct bt_spie_maps: the maps
mmapped): one that does neither belongs in core/. agent/ is bloomtap
run: of cmd/, only run.c includes it. A command is a leaf: a file of
cmd/ defines nothing for other files but cmd_* (and main), and each
cmd/X.c but main.c defines cmd_X. Then each check is shown failing on
a copy of the tree: a planted upward include (instance/spie.c including
report/trace_query.h), a planted circle (instance/kernel.c including
create.h: the circle create -> drops -> kernel -> create that the kernel
command's own file removed), base/util.c including bloomtap.h, a
bpf_map_lookup_elem call in core/archive.c and <bpf/bpf.h> in
core/bloom.c, a pure file in instance/, cmd/stats.c including
agent/agent.h, a planted export from cmd/stats.c and a planted extra.c in cmd/
without cmd_extra. Ends with "N passed, N failed"."""
import glob
import os
import re
import shutil
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = ["base", "core", "instance", "report", "agent", "cmd"]
INCLUDE = re.compile(r'^#include "([^"]+)\.h"', re.M)
# what makes a bpf(2) call: libbpf's syscall wrappers and object API
# (bpf_*), its buffers and probes, the BTF loads into and from the kernel,
# and the syscall itself; read in code with comments and strings blanked
BPF_CALL = re.compile(r'\b(bpf_\w+|(?:user_)?ring_buffer__\w+|perf_buffer__\w+|libbpf_probe_\w+|'
                      r'btf__(?:load_into_kernel|load_from_kernel_by_id\w*|get_from_id))\s*\(|'
                      r'\bsyscall\s*\(\s*(?:__NR_bpf|SYS_bpf)\b')
BPF_HEADER = re.compile(r'^#\s*include\s*[<"](bpf/bpf\.h|bpf/libbpf\.h|[\w/.]*\.skel\.h)[>"]', re.M)
# the one exception below instance/: libbpf's log goes to bloomtap's logger
# (libbpf_set_print), which makes no bpf(2) call
BPF_HEADER_OK = {("base/log.c", "bpf/libbpf.h")}
# an instance's objects, for a file of instance/ that works on them
# without a call of its own (the ring mmapped, the keeper)
INSTANCE_OBJECT = re.compile(r'\bstruct bt_(?:instance|spie_maps)\b')
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
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


def code(text):
    """text with its comments and string literals blanked."""
    return NOISE.sub(lambda m: '""' if m.group(0)[0] == '"' else " ", text)


def sources(src, folders):
    """(path relative to src, text) of the folders' files."""
    for folder in folders:
        for f in sorted(glob.glob(os.path.join(src, folder, "*.[ch]"))):
            yield os.path.relpath(f, src), open(f, encoding="utf-8").read()


def base_types(src):
    """(file, header) where base/ includes one of include/'s headers."""
    inc = os.path.join(os.path.dirname(src), "include")
    return [(rel, h) for rel, text in sources(src, ["base"])
            for h in re.findall(r'^#\s*include\s*"([^"]+)"', text, re.M)
            if os.path.exists(os.path.join(inc, h))]


def bpf_below(src):
    """(file, what) of each bpf(2) call or header in base/ and core/."""
    out = []
    for rel, text in sources(src, ["base", "core"]):
        out += [(rel, "<%s>" % h) for h in BPF_HEADER.findall(text)
                if (rel, h) not in BPF_HEADER_OK]
        out += [(rel, m.group(1) or "syscall(__NR_bpf)") for m in BPF_CALL.finditer(code(text))]
    return out


def instance_pure(src):
    """The files of instance/ that neither call bpf(2) nor work on an
    instance's objects."""
    return [rel for rel, text in sources(src, ["instance"])
            if rel.endswith(".c") and not BPF_CALL.search(code(text))
            and not BPF_HEADER.search(text) and not INSTANCE_OBJECT.search(code(text))]


def agent_users(g):
    """The files of cmd/ but run.c that include agent/."""
    return [(f, b) for a, edges in sorted(g.items()) if a.startswith("cmd/") and a != "cmd/run"
            for b, f in sorted(edges.items()) if b.startswith("agent/")]


def commands_named(src):
    """The files of cmd/ (but main.c) that define no cmd_ of their name."""
    return [rel for rel, text in sources(src, ["cmd"])
            if rel.endswith(".c") and rel != "cmd/main.c"
            and not re.search(r'^int cmd_%s\(' % os.path.basename(rel)[:-2], text, re.M)]


def copy_with(src, path, old, new):
    """A copy of src (its parent too: include/ is read beside it) with new
    put before old in path, or path made of new when old is None; the
    copy's user/ and the folder to remove."""
    tmp = tempfile.mkdtemp()
    try:
        copy = os.path.join(tmp, "user")
        shutil.copytree(src, copy)
        shutil.copytree(os.path.join(os.path.dirname(src), "include"), os.path.join(tmp, "include"))
        f = os.path.join(copy, path)
        if old is None:
            text = new
        else:
            text = open(f, encoding="utf-8").read()
            assert old in text, "%s holds no %s to plant beside" % (path, old)
            text = text.replace(old, new + "\n" + old, 1)
        open(f, "w", encoding="utf-8").write(text)
    except BaseException:
        shutil.rmtree(tmp)
        raise
    return copy, tmp


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
    bt = base_types(src)
    check(not bt, "base/ holds no bloomtap type: it includes nothing of include/%s" % (
        "".join("; %s includes %s" % b for b in bt)))
    below = bpf_below(src)
    check(not below, "base/ and core/ make no bpf(2) call: no libbpf call, <bpf/bpf.h>, "
          "<bpf/libbpf.h> or skeleton%s" % "".join("; %s: %s" % b for b in below))
    pure = instance_pure(src)
    check(not pure, "each file of instance/ calls bpf(2) or works on an instance's objects%s" % (
        "".join("; %s does neither: it belongs in core/" % f for f in pure)))
    au = agent_users(g)
    check(not au, "agent/ is bloomtap run: of cmd/, only run.c includes it%s" % (
        "".join("; %s includes %s.h" % a for a in au)))
    ex = exported(src)
    check(not ex, "the commands are leaves: cmd/ defines only cmd_* and main for others%s" % (
        "".join("; %s defines %s" % e for e in ex)))
    unnamed = commands_named(src)
    check(not unnamed, "each cmd/X.c defines cmd_X%s" % "".join("; not " + f for f in unnamed))
    # each check can fail
    p = planted(src, "instance/spie.c", '#include "spie.h"', '#include "report/trace_query.h"')
    check(("instance/spie.c", "report/trace_query") in upward(p),
          "a planted upward include (instance/spie.c -> report/trace_query.h) is named")
    p = planted(src, "instance/kernel.c", '#include "kernel.h"', '#include "create.h"')
    c = [c for c in circles(p) if "instance/kernel" in c and "instance/create" in c]
    check(bool(c), "a planted circle (instance/kernel.c -> create.h) is named%s" % (
        ": " + " <-> ".join(c[0]) if c else ""))
    for path, old, new, why, found in [
            ("base/util.c", '#include "util.h"', '#include "bloomtap.h"',
             "a planted bloomtap type (base/util.c includes bloomtap.h)",
             lambda c: ("base/util.c", "bloomtap.h") in base_types(c)),
            ("core/archive.c", "int bt_archive_write(",
             "static int peek(int fd, void *v) { return bpf_map_lookup_elem(fd, &fd, v); }",
             "a planted bpf(2) call (core/archive.c calls bpf_map_lookup_elem)",
             lambda c: ("core/archive.c", "bpf_map_lookup_elem") in bpf_below(c)),
            ("core/bloom.c", '#include "bloom.h"', "#include <bpf/bpf.h>",
             "a planted bpf(2) header (core/bloom.c includes <bpf/bpf.h>)",
             lambda c: ("core/bloom.c", "<bpf/bpf.h>") in bpf_below(c)),
            ("instance/pure.c", None, '#include "spie.h"\n\nint bt_pure(int x)\n{\n\treturn x;\n}\n',
             "a planted pure file of instance/ (instance/pure.c)",
             lambda c: "instance/pure.c" in instance_pure(c)),
            ("cmd/stats.c", '#include "base/common.h"', '#include "agent/agent.h"',
             "a planted use of agent/ (cmd/stats.c includes agent/agent.h)",
             lambda c: ("cmd/stats.c", "agent/agent") in agent_users(graph(c)[0])),
            ("cmd/extra.c", None, "int cmd_other(int argc, char **argv)\n{\n\treturn 0;\n}\n",
             "a planted command file without its command (cmd/extra.c, no cmd_extra)",
             lambda c: "cmd/extra.c" in commands_named(c))]:
        copy, tmp = copy_with(src, path, old, new)
        try:
            check(found(copy), why + " is named")
        finally:
            shutil.rmtree(tmp)
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
