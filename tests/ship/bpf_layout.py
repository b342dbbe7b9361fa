#!/usr/bin/env python3
"""bpf/'s entry points and knobs, each in one place:

  bloomtap.bpf.c  every SEC() program of bloomtap.bpf.o, a few lines over
                  its stage (a static __always_inline function in a header)
  config.bpf.h    every knob user space sets before load: the const
                  volatile constants (.rodata) and cfg_keys (.bss)

drops_host.bpf.c is an object of its own (the host's drop program), and
keeps its SEC() program. Two checks over bpf/: no SEC() program outside
bloomtap.bpf.c and drops_host.bpf.c, and no knob (a const volatile or a
cfg_* object at file scope) outside config.bpf.h; each failure is named
by file and line. Then each check is shown failing on a copy of bpf/: a
SEC("tc") program planted in egress.bpf.h, a const volatile planted in
spie.bpf.h. Ends with "N passed, N failed"."""
import glob
import os
import re
import shutil
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRIES = "bloomtap.bpf.c"
OWN_OBJECT = "drops_host.bpf.c"
CONFIG = "config.bpf.h"
# a program's section: SEC("...") other than a map's or the license's
PROGRAM = re.compile(r'\bSEC\("(?!\.maps"|license")([^"]+)"\)')
# a knob at file scope: const volatile, or an object named cfg_* with an
# initializer (a use, "&cfg_keys" or "cfg_k;", is indented or not defined)
KNOB = re.compile(r'^(?:const\s+volatile\b.*|(?:struct\s+)?\w[\w\s*]*\bcfg_\w+\s*(?:\[[^]]*\])?\s*=.*)$')


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def check(bpf):
    """The failures: [(file, line, text, why)]."""
    bad = []
    for path in sorted(glob.glob(os.path.join(bpf, "*.bpf.[ch]"))):
        name = os.path.basename(path)
        for n, text in enumerate(lines(path), 1):
            if name not in (ENTRIES, OWN_OBJECT) and PROGRAM.search(text):
                bad.append((name, n, text.strip(), "a SEC() program outside " + ENTRIES))
            if name != CONFIG and KNOB.match(text):
                bad.append((name, n, text.strip(), "a knob outside " + CONFIG))
    return bad


def planted(edit):
    """check() on a copy of bpf/ with edit(dir) applied."""
    tmp = tempfile.mkdtemp(prefix="bpf_layout.")
    try:
        shutil.copytree(os.path.join(TOP, "bpf"), os.path.join(tmp, "bpf"))
        edit(os.path.join(tmp, "bpf"))
        return check(os.path.join(tmp, "bpf"))
    finally:
        shutil.rmtree(tmp)


def append(bpf, name, text):
    with open(os.path.join(bpf, name), "a") as f:
        f.write(text)


def main():
    passed = failed = 0

    def report(ok, what, detail=()):
        nonlocal passed, failed
        print("  %-5s %s" % ("ok" if ok else "FAIL", what))
        for d in detail:
            print("        %s:%d: %s (%s)" % d)
        if ok:
            passed += 1
        else:
            failed += 1

    bad = check(os.path.join(TOP, "bpf"))
    progs = [b for b in bad if "SEC()" in b[3]]
    knobs = [b for b in bad if "knob" in b[3]]
    report(not progs, "every SEC() program of bloomtap.bpf.o is in " + ENTRIES, progs)
    report(not knobs, "every knob set before load is in " + CONFIG, knobs)
    got = planted(lambda d: append(d, "egress.bpf.h",
                                   '\nSEC("tc")\nint planted(struct __sk_buff *skb)\n'
                                   '{\n\treturn 0;\n}\n'))
    report(any(b[0] == "egress.bpf.h" and "SEC()" in b[3] for b in got),
           'a planted SEC("tc") program in egress.bpf.h is named')
    got = planted(lambda d: append(d, "spie.bpf.h", "\nconst volatile __u32 cfg_planted = 0;\n"))
    report(any(b[0] == "spie.bpf.h" and "knob" in b[3] for b in got),
           "a planted const volatile in spie.bpf.h is named")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
