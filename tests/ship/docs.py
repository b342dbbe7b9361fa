#!/usr/bin/env python3
"""The manual's links: every relative link of README.md, docs/*.md and the
other Markdown files of the tree points at a file that exists, and every
#anchor at a heading of that file (GitHub's slugs); every page of docs/
is reachable from the README; the README stays about 300 lines. Every
path of the tree named in a comment or a doc exists (stale_paths), and
docs/design.md's layout names every file of bpf/ and user/.
Ends with "N passed, N failed"."""
import ast
import glob
import io
import os
import re
import sys
import tokenize

# BT_SRC: the tree to check (tests/mutants.sh runs this against a mutant's)
TOP = os.environ.get("BT_SRC") or \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


# ---- paths named in comments and docs ----
# A path of the tree: a token with a "/" whose first folder is one of the
# tree's or whose name ends as the tree's files do. Not one: absolute
# paths (/sys, /proc, /run, /etc, ...), URLs, globs and placeholders
# ($VAR, <name>, {a,b}, *), build output (.output/), the kernel's sources
# (net/ipv4/tcp_offload.c, include/linux/...), and the placeholders X, x
# and "folder". A path counts as existing from the top, from the naming
# file's folder, with ".c" added (a program named by its source), or as the
# tail of a path of the tree (core/digest.c for user/core/digest.c;
# grafana/bloomtap.json in deploy/'s row of the layout).
PATH_TOPS = {"bpf", "user", "include", "tests", "bench", "deploy", "docs", "debian", "vmlinux"}
PATH_EXTS = (".c", ".h", ".sh", ".py", ".md", ".json", ".yaml", ".yml", ".conf", ".service",
             ".sysusers", ".js")
KERNEL_DIRS = {"net", "drivers", "kernel", "arch", "fs", "mm", "tools", "samples", "security",
               "scripts", "Documentation", "linux", "uapi", "asm", "asm-generic", "crypto",
               "block", "trace"}
PATH_TOKEN = re.compile(r"(?<![\w./$~%@*{<-])((?:\.\.?/)?[\w.+*{}<>$-]+(?:/[\w.+*{}<>$-]+)+/?)")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S*")


def c_comments(text):
    """(line, text) of each line of the /* */ and // comments, strings skipped"""
    i, n, line, out = 0, len(text), 1, []
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            for k, part in enumerate(text[i:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] not in (text[i], "\n"):
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j + 1
        else:
            line += text[i] == "\n"
            i += 1
    return out


def py_comments(text):
    """the # comments and the docstrings"""
    out = []
    try:
        out = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
               if t.type == tokenize.COMMENT]
        tree = ast.parse(text)
    except (SyntaxError, tokenize.TokenError):
        return out
    for node in [tree] + [x for x in ast.walk(tree)
                          if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]:
        doc = node.body[0] if node.body else None
        if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) \
                and isinstance(doc.value.value, str):
            out += [(doc.lineno + k, part) for k, part in enumerate(doc.value.value.split("\n"))]
    return out


def sh_comments(text):
    """the # comments of a shell script (or a config file): quotes followed
    across lines, a here-document's lines read as comments where they hold
    a # after a blank"""
    out, quote, heredoc = [], None, None
    for no, line in enumerate(text.split("\n"), 1):
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            elif re.search(r"(^|\s)#", line):
                out.append((no, line[re.search(r"(^|\s)#", line).end():]))
            continue
        i = 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\" and quote == '"':
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch == "\\":
                i += 1
            elif ch in "'\"":
                quote = ch
            elif ch == "#" and (i == 0 or line[i - 1] in " \t;(|&"):
                out.append((no, line[i:]))
                break
            i += 1
        m = None if quote else re.search(r"<<-?\s*(['\"]?)(\w+)\1", line)
        if m and "#" not in line[:m.start()]:
            heredoc = m.group(2)
    return out


def comments(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith(".md") or os.path.basename(path) == "README":
        return list(enumerate(text.split("\n"), 1))
    if path.endswith((".c", ".h", ".js")):
        return c_comments(text)
    if path.endswith(".json"):
        return []
    if path.endswith(".py") or "python" in text.split("\n", 1)[0]:
        return py_comments(text)
    return sh_comments(text)


def tree_paths():
    out = set()
    for root, dirs, names in os.walk(TOP):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(root, TOP)
        out.update("/" + os.path.normpath(os.path.join(rel, x)) for x in dirs + names)
    return out


def path_exists(p, where, tree):
    parts = re.sub(r"^(\.\.?/)+", "", p).strip("/").split("/")
    if parts[0] in KERNEL_DIRS or (parts[0] == "include" and parts[1] in KERNEL_DIRS):
        return True
    if {"folder", "X", "NAME"} & set(parts) or re.match(r"(X|x|NAME)\.", parts[-1]):
        return True
    p = p.rstrip("/")
    for base in (TOP, os.path.dirname(where)):
        q = os.path.normpath(os.path.join(base, p))
        if os.path.exists(q) or os.path.exists(q + ".c"):
            return True
    tail = "/" + p
    return not p.startswith(".") and any(t.endswith(tail) or t.endswith(tail + ".c") for t in tree)


def stale_paths(files):
    """file:line: path, for each path of the tree named in files' comments
    (all of a doc) that is not there"""
    tree, bad = tree_paths(), []
    for f in files:
        for no, text in comments(f):
            for m in PATH_TOKEN.finditer(URL.sub(" ", text)):
                p = m.group(1).rstrip(".,;:)")
                rel = re.sub(r"^(\.\.?/)+", "", p)
                if re.search(r"[*{}<>$]", p) or rel.startswith(".output/"):
                    continue
                if rel.split("/")[0] not in PATH_TOPS and not p.rstrip("/").endswith(PATH_EXTS):
                    continue
                # a path out of the tree (../shared/) is the links' to judge
                if rel != p and os.path.relpath(os.path.join(os.path.dirname(f), p),
                                                TOP).startswith(".."):
                    continue
                line = "%s:%d: %s" % (os.path.relpath(f, TOP), no, p)
                if not path_exists(p, f, tree) and line not in bad:
                    bad.append(line)
    return bad


def source_files():
    """the files of the tree whose comments name paths"""
    out = [os.path.join(TOP, "Makefile")]
    for d in ("bpf", "user", "include", "tests", "bench", "deploy", "debian", ".ci"):
        for root, dirs, names in os.walk(os.path.join(TOP, d)):
            dirs[:] = [x for x in dirs if x not in ("corpus", "regressions")]
            out += [os.path.join(root, n) for n in sorted(names)
                    if not n.endswith((".md", ".btw", ".key")) and "/tests/data/" not in root + "/"
                    or n == "README"]
    return sorted(out)


def layout_missing():
    """the files of bpf/ and user/ that docs/design.md's layout does not
    name (a header counts as named with its .c)"""
    text = open(os.path.join(TOP, "docs/design.md"), encoding="utf-8").read()
    layout = text.split("# Layout", 1)[1].split("```")[1]
    named = set(re.findall(r"[\w.-]+\.(?:c|h|py|sh)\b", layout))
    out = []
    for d in ["bpf"] + sorted(os.path.join("user", x) for x in os.listdir(os.path.join(TOP, "user"))):
        for n in sorted(os.listdir(os.path.join(TOP, d))):
            if n not in named and not (n.endswith(".h") and n[:-2] + ".c" in named):
                out.append("%s/%s" % (d, n))
    return out


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
    # every path a comment or a doc names is in the tree
    for what, group in (("the code's comments", source_files()), ("the docs", files)):
        bad = stale_paths(group)
        for b in bad:
            print("        %s: no such file in the tree" % b)
        result(not bad, "%s name only paths that exist (%d files)" % (what, len(group)))
    missing = layout_missing()
    result(not missing, "docs/design.md's layout names every file of bpf/ and user/%s"
           % (": not " + ", ".join(missing) if missing else ""))
    n = sum(1 for _ in open(os.path.join(TOP, "README.md")))
    result(n <= 320, "the README is a manual's front page: %d lines, about 300 at most" % n)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
