#!/usr/bin/env python3
"""Every bloomtap command line the manual gives is one bloomtap accepts.
The code of README.md, docs/*.md, deploy/README.md and SECURITY.md
(fenced and indented blocks) is searched for bloomtap invocations (also
after sudo, nsenter, a path or `$ `); continued lines are joined, comments,
pipes and redirections cut, shell variables and substitutions stand for a
word. Each is run with BLOOMTAP_CHECK_ARGS=1, which makes the command
parse its arguments as usual, then exit 0 without doing anything (an
unknown option, a missing argument or a bad value exits 2), in a network
namespace and a mount namespace of its own all the same. A page that
names an option bloomtap no longer has fails here. tests/live/firstlab.sh runs
the README's first lab line for line; the rest are checked for syntax.
The container lines (podman, CONTAINERS_CONF) may name only files of
the tree as a clone has it, never what a build makes (.output/): each
such path must be a file git tracks; and the seccomp profile they name,
deploy/bloomtap-seccomp.json, must be deploy/seccomp.py's over this
host's default (tests/ship/image.sh runs install.md's podman lines).
Ends with "N passed, N failed"."""
import glob
import os
import re
import shlex
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(TOP, "README.md")
BLOOMTAP = os.environ.get("BLOOMTAP", os.path.join(TOP, ".output", "bloomtap"))
# bloomtap as a command word: bare, by a path, or $B (the first lab's)
INVOKE = re.compile(r"(?:^|[\s;(&|])(?:\S*/)?(?:bloomtap|\$B|\$\{B\})\s+(?=[-a-z])")


def code_lines(path):
    """(line number, text) of the page's code: fenced and indented blocks."""
    fence, prev_blank = False, True
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        s = line.rstrip("\n")
        if s.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence or (s.startswith("    ") and prev_blank is not None and not s.lstrip().startswith(("-", "*"))):
            yield n, s
        prev_blank = not s.strip()


def spans(path):
    """(line number, text) of the page's inline code spans outside blocks."""
    fence = False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence and not line.startswith("    "):
            for i, m in enumerate(re.finditer(r"`([^`]+)`", line.replace("\\|", "|"))):
                yield n, m.group(1), i


USAGE = re.compile(r"[\[\]]|\.\.\.|\s\|\s|\(")


def usages(path):
    """(line, command, options) of each usage-syntax span: the README's
    command table (the command's name alone) and prose's `bloomtap CMD
    [--opt]`: each option must be one the command's --help lists."""
    table = False
    for n, text, i in spans(path):
        if text.startswith("bloomtap "):
            text = text[len("bloomtap "):]
            # a command named alone is a mention: it must exist
            if not USAGE.search(text) and len(text.split()) > 1:
                continue
        elif not (path == README and i == 0 and n in table_rows(path)):
            continue
        words = text.split()
        if not words or not re.match(r"[a-z]+$", words[0]):
            continue
        yield n, words[0], sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", text)))


def table_rows(path, cache={}):
    """The line numbers of the README's command table's rows."""
    if path not in cache:
        rows, on = set(), False
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.startswith("| command |"):
                on = True
            elif on and line.startswith("| `"):
                rows.add(n)
            elif on and not line.startswith("|"):
                on = False
        cache[path] = rows
    return cache[path]


def commands(path):
    """(line, command words) of each bloomtap invocation in the page's code,
    and of prose's inline `bloomtap CMD ...` without usage syntax."""
    for n, text, _ in spans(path):
        if (text.startswith("bloomtap ") and not USAGE.search(text[9:])
                and len(text.split()) > 2 and re.match(r"[a-z]", text[9:])):
            try:
                yield n, shlex.split(text[9:]), text
            except ValueError:
                yield n, None, text
    for start, s in joined_code(path):
        if s.lstrip().startswith(("|", "+")):       # a diagram's box
            continue
        s = re.sub(r"(?:^|\s)#.*$", "", s)                  # a comment names, never calls
        m = INVOKE.search(s)
        if not m or s[:m.start() + 1].rstrip().endswith("--name"):   # podman's --name bloomtap
            continue
        rest = s[m.end():]
        rest = re.sub(r"\$\([^)]*\)", "WORD", rest)           # $(...)
        rest = re.sub(r"\$\{?\w+\}?", "WORD", rest)           # $VAR
        rest = re.split(r"\s(?:\||\|\||&&|;|&|>|>>|2>|<)(?:\s|$)|\s[12]?>", " " + rest + " ")[0]
        try:
            words = shlex.split(rest)
        except ValueError:
            yield start, None, s
            continue
        if words and words[0].endswith(":"):
            continue                                          # an output line
        yield start, words, s


def joined_code(path):
    """(line number, text) of the page's code lines, continued lines joined."""
    pending, start = "", 0
    for n, s in code_lines(path):
        if not pending:
            start = n
        s = pending + " " + s.strip() if pending else s
        if s.endswith("\\"):
            pending = s[:-1]
            continue
        pending = ""
        yield start, s


# a path of the tree in a container line: podman's seccomp=PATH (relative),
# and $PWD/PATH, as run from the top of the tree
TREE_PATH = re.compile(r"(?:seccomp=(?!/)|\$\{?PWD\}?/)([\w.][\w./-]*)")


def container_paths(pages):
    """(page, line, path) of each file of the tree a container line names."""
    for page in pages:
        if not os.path.exists(page):
            continue
        for n, s in joined_code(page):
            if re.search(r"(?:^|\s)podman\s|CONTAINERS_CONF=", s):
                for m in TREE_PATH.finditer(s):
                    yield os.path.relpath(page, TOP), n, m.group(1)


def check_container_lines(pages):
    """passed, failed: the container lines' files are the tree's, and the
    profile is current."""
    passed = failed = 0
    r = subprocess.run(["git", "-C", TOP, "ls-files"], capture_output=True, text=True)
    tracked = set(r.stdout.split()) if r.returncode == 0 else None
    for rel, n, path in container_paths(pages):
        ok = path in tracked if tracked is not None else os.path.isfile(os.path.join(TOP, path))
        passed, failed = passed + ok, failed + (not ok)
        print("  %s  %s:%d: %s is %sa file of the tree as cloned" % (
            "ok  " if ok else "FAIL", rel, n, path, "" if ok else "not "))
    default = "/usr/share/containers/seccomp.json"
    if os.path.exists(default):
        r = subprocess.run([sys.executable, os.path.join(TOP, "deploy", "seccomp.py"), default],
                           capture_output=True, text=True)
        ok = r.returncode == 0 and r.stdout == open(os.path.join(TOP, "deploy", "bloomtap-seccomp.json")).read()
        passed, failed = passed + ok, failed + (not ok)
        print("  %s  deploy/bloomtap-seccomp.json is deploy/seccomp.py's over %s%s" % (
            "ok  " if ok else "FAIL", default, "" if ok else " (make seccomp)"))
    return passed, failed


def main():
    pages = [os.path.join(TOP, "README.md"), os.path.join(TOP, "SECURITY.md"),
             os.path.join(TOP, "deploy", "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md")))
    passed = failed = 0
    env = dict(os.environ, BLOOMTAP_CHECK_ARGS="1")
    helps = {}
    for page in pages:
        if not os.path.exists(page):
            continue
        rel = os.path.relpath(page, TOP)
        for line, cmd, opts in usages(page):
            if cmd not in helps:
                r = subprocess.run([BLOOMTAP, cmd, "--help"], capture_output=True, text=True)
                helps[cmd] = r.stdout if r.returncode == 0 else None
            h = helps[cmd]
            missing = [o for o in opts if h is None or not re.search(
                r"(?<![\w-])%s(?![\w-])" % re.escape(o), h)]
            if h is not None and not missing:
                passed += 1
                print("  ok    %s:%d: %s, with %s" % (rel, line, cmd, " ".join(opts) or "no option"))
            else:
                failed += 1
                print("  FAIL  %s:%d: %s: %s" % (rel, line, cmd, "no such command" if h is None
                                                 else "bloomtap %s --help lacks %s" % (cmd, " ".join(missing))))
    for page in pages:
        if not os.path.exists(page):
            continue
        rel = os.path.relpath(page, TOP)
        for line, words, text in commands(page):
            if words is None:
                print("  FAIL  %s:%d: cannot split the line: %s" % (rel, line, text.strip()))
                failed += 1
                continue
            # a namespace of its own: should a command not parse first, it
            # finds no interface and no pin of the host's
            r = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private",
                                BLOOMTAP] + words, env=env, capture_output=True, text=True,
                               timeout=30)
            if r.returncode == 0 and "arguments accepted" in r.stdout:
                passed += 1
                print("  ok    %s:%d: bloomtap %s" % (rel, line, " ".join(words)))
            else:
                failed += 1
                print("  FAIL  %s:%d: bloomtap %s (exit %d) %s" % (
                    rel, line, " ".join(words), r.returncode,
                    (r.stderr.strip().splitlines() or [""])[-1]))
    p, f = check_container_lines(pages)
    passed, failed = passed + p, failed + f
    if passed < 30:
        print("  FAIL  only %d command lines found in the manual: the extraction broke" % passed)
        failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("  SKIP  doc-commands: needs root (a namespace of its own for each command)")
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(0)
    sys.exit(main())
