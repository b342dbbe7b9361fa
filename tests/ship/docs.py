#!/usr/bin/env python3
"""The manual's links: every relative link of README.md, docs/*.md and the
other Markdown files of the tree points at a file that exists, and every
#anchor at a heading of that file (GitHub's slugs); every page of docs/
is reachable from the README; the README stays about 300 lines.
Ends with "N passed, N failed"."""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")
passed = failed = 0


def result(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("  ok    " + what)
    else:
        failed += 1
        print("  FAIL  " + what)


def slugs(path):
    """GitHub's anchors for the headings of a Markdown file."""
    out, seen, fence = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        text = re.sub(r"`|\*|_(?=\w)|(?<=\w)_", "", text)
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def links(path):
    fence = False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        for m in LINK.finditer(line):
            yield no, m.group(2)


def main():
    files = [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))
    files += [os.path.join(TOP, f) for f in ("SECURITY.md", "CONTRIBUTING.md", "deploy/README.md")]
    reached = set()
    for f in files:
        rel = os.path.relpath(f, TOP)
        bad, n = [], 0
        for no, target in links(f):
            if re.match(r"[a-z]+:", target):
                continue
            n += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                bad.append("%s:%d: %s: no such file" % (rel, no, target))
                continue
            if f.endswith("README.md") and os.path.dirname(f) == TOP:
                reached.add(dest)
            if anchor and dest.endswith(".md") and anchor not in slugs(dest):
                bad.append("%s:%d: %s: no heading #%s there" % (rel, no, target, anchor))
        for b in bad:
            print("        " + b)
        result(not bad, "%s: %d relative links, each to a file and heading that exist" % (rel, n))
    pages = sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))
    orphans = [os.path.relpath(p, TOP) for p in pages if p not in reached]
    result(not orphans, "every page of docs/ is linked from the README (%d pages)%s"
           % (len(pages), ": not " + ", ".join(orphans) if orphans else ""))
    # the version named in the manual is the package's (debian/changelog)
    version = re.match(r"bloomtap \(([^)]+)\)", open(os.path.join(TOP, "debian/changelog")).read()).group(1)
    stale = sorted({"%s: %s" % (os.path.relpath(f, TOP), v) for f in files
                    for v in re.findall(r"bloomtap[_:](\d+\.\d+\.\d+)", open(f).read()) if v != version})
    result(not stale, "every version the manual names is the package's, %s%s"
           % (version, ": not " + ", ".join(stale) if stale else ""))
    # the tour gives --archive: the README says where the agent writes
    # without it (its default in the code) and that trace searches there
    default = re.search(r'\.archive = "([^"]+)"',
                        open(os.path.join(TOP, "user/agent/agent_state.h")).read()).group(1)
    readme = open(os.path.join(TOP, "README.md")).read()
    said = [p for p in readme.split("\n\n") if "`%s`" % default in p]
    result(said and "trace" in said[0],
           "the README says the agent's archive without --archive, %s, and that trace "
           "searches it" % default)
    n = sum(1 for _ in open(os.path.join(TOP, "README.md")))
    result(n <= 320, "the README is a manual's front page: %d lines, about 300 at most" % n)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
