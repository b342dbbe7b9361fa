#!/usr/bin/env python3
"""Commit messages in the form the kernel and libbpf use, for every
commit after the one tests/ship/commits.base names (the last before the
rule: its descendants keep it): a subject of at most 72 characters
(`area: what changed`), a blank second line, then a body that is not
empty (the why, and what was measured). Merge commits are exempt. The
rule is first shown failing on planted messages. Outside a git tree, or
in a shallow clone without the base, the commits are skipped, said so.
Ends with "N passed, N failed"."""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE_FILE = os.path.join(TOP, "tests", "ship", "commits.base")
SUBJECT_MAX = 72


def faults(msg):
    """What is wrong with one commit message: a list, empty when none."""
    lines = msg.rstrip("\n").split("\n")
    out = []
    if len(lines[0]) > SUBJECT_MAX:
        out.append("subject of %d characters (at most %d)" % (len(lines[0]), SUBJECT_MAX))
    if not lines[0].strip():
        out.append("no subject")
    if len(lines) > 1 and lines[1].strip():
        out.append("second line not blank")
    if not any(l.strip() for l in lines[2:]):
        out.append("no body (the why, and what was measured)")
    return out


def git(*args):
    return subprocess.run(["git", "-C", TOP] + list(args), capture_output=True, text=True)


def base():
    with open(BASE_FILE) as f:
        ids = [l.split("#")[0].strip() for l in f]
    return [i for i in ids if i][0]


def main():
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print("  %s  %s" % ("ok  " if ok else "FAIL", what))
        passed, failed = passed + ok, failed + (not ok)

    good = "area: what changed\n\nWhy, and what was measured.\n"
    check(not faults(good), "a subject, a blank line and a body pass")
    for bad, why in (("a" * 73 + "\n\nbody\n", "a subject of 73 characters"),
                     ("area: what\nbody at once\n", "no blank second line"),
                     ("area: what\n", "no body"),
                     ("area: what\n\n\n", "a body of blank lines")):
        check(bool(faults(bad)), "%s fails" % why)

    b = base()
    if git("rev-parse", "--git-dir").returncode != 0:
        print("  SKIP  commits: not a git tree (the messages are checked in a clone)")
    elif git("cat-file", "-e", b + "^{commit}").returncode != 0:
        shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        if shallow:
            print("  SKIP  commits: a shallow clone without the base %s "
                  "(git fetch --unshallow checks them)" % b[:12])
        else:
            check(False, "the base %s of tests/ship/commits.base is in the history" % b[:12])
    elif git("merge-base", "--is-ancestor", b, "HEAD").returncode != 0:
        check(False, "the base %s of tests/ship/commits.base is an ancestor of HEAD" % b[:12])
    else:
        log = git("log", "--format=%H %P%x00%B%x00", b + "..HEAD").stdout
        n = 0
        for head, msg in zip(*[iter(log.split("\0"))] * 2):
            ids = head.split()
            if len(ids) > 2:    # a merge
                continue
            n += 1
            bad = faults(msg.lstrip("\n"))
            subject = msg.lstrip("\n").split("\n")[0]
            check(not bad, "%s %s%s" % (ids[0][:12], subject[:60],
                                        ": " + "; ".join(bad) if bad else ""))
        if not n:
            print("  ok    no commit after the base %s" % b[:12])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
