#!/usr/bin/env python3
"""bloomtap(8), written from the tool's own --help texts (one source: the
option tables in user/cmd/*.c), so that the page cannot drift from them.

usage: bloomtap-man.py PATH_TO_BLOOMTAP > bloomtap.8"""
import os
import re
import subprocess
import sys
import time

OPT = re.compile(r"^\s+(?:(-\w), )?\s*(--[\w-]+)(?: (\S+))?\s{2,}(.*)$")
OPT_ALONE = re.compile(r"^  (?:(-\w), |    )(--[\w-]+)(?: (\S+))?$")


def helptext(tool, *args):
    return subprocess.run([tool, *args, "--help"], capture_output=True, text=True,
                          check=True).stdout


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return s


def line(s):
    """A text line, safe from roff's control characters at its start."""
    s = esc(s)
    return "\\&" + s if s[:1] in (".", "'") else s


def parse(text):
    """(usage, description lines, [(short, long, arg, help)], other lines)"""
    usage, desc, opts, rest, part = "", [], [], [], "desc"
    for ln in text.splitlines():
        if ln.startswith("Usage: "):
            usage = ln[len("Usage: "):]
            continue
        if ln.strip() == "Options:":
            part = "opts"
            continue
        m = OPT.match(ln) if part == "opts" else None
        if part == "opts" and not m and OPT_ALONE.match(ln):
            opts.append(OPT_ALONE.match(ln).groups() + ("",))	# its text next
        elif part == "opts" and opts and not opts[-1][3] and ln.startswith(" " * 20):
            opts[-1] = opts[-1][:3] + (ln.strip(),)
        elif m:
            opts.append(m.groups())
        elif part == "desc":
            desc.append(ln)
        elif ln.strip():
            rest.append(ln)
    return usage, desc, opts, rest


def paragraphs(lines):
    """Text lines as roff paragraphs; indented lines (a list, as watch's
    subcommands) kept as they are."""
    out, cur, lit = [], [], []

    def flush():
        if cur:
            out.extend([line(" ".join(cur)), ".PP"])
            cur.clear()
        if lit:
            out.extend([".nf"] + [line(x) for x in lit] + [".fi", ".PP"])
            lit.clear()
    for ln in lines + [""]:
        if ln.startswith("  ") and ln.strip():
            if cur:
                flush()
            lit.append(ln.strip())
        elif ln.strip():
            if lit:
                flush()
            cur.append(ln.strip())
        else:
            flush()
    return out


def options(opts):
    out = []
    for short, long_, arg, help_ in opts:
        if long_ in ("--help", "--json", "--pretty", "--verbose"):
            continue	# global options, listed once
        tag = "\\fB%s\\fR" % esc(long_)
        if short:
            tag = "\\fB%s\\fR, %s" % (esc(short), tag)
        if arg:
            tag += " \\fI%s\\fR" % esc(arg)
        out += [".TP", tag, line(help_)]
    return out


def command(tool, args, out):
    usage, desc, opts, rest = parse(helptext(tool, *args))
    out += [".SS \"%s\"" % esc(usage), ".PP"] + paragraphs(desc)
    out.pop()
    if rest:	# a command's own list (watch's subcommands)
        out += [".PP", ".nf"] + [line(r) for r in rest] + [".fi"]
    out += options(opts)


def main():
    tool = sys.argv[1]
    version = subprocess.run([tool, "-V"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    top = helptext(tool)
    cmds = []
    inside = False
    for ln in top.splitlines():
        if ln.strip() == "Commands:":
            inside = True
        elif inside and not ln.strip():
            inside = False
        elif inside:
            name, what = ln.split(None, 1)
            cmds.append((name, what.strip()))
    out = [
        ".\\\" bloomtap(8), generated from the tool's --help by deploy/bloomtap-man.py:",
        ".\\\" edit the option tables in user/, not this file.",
        ".TH BLOOMTAP 8 \"%s\" \"bloomtap %s\" \"System Administration\"" % (
            # reproducible: SOURCE_DATE_EPOCH when set (reproducible-builds.org)
            time.strftime("%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH",
                                                                     time.time())))),
            version),
        ".nh",	# no hyphenation: option names stay whole
        ".SH NAME",
        "bloomtap \\- XDP network observability: counters, heavy flows, packet traceback, "
        "watch lists",
        ".SH SYNOPSIS",
        ".B bloomtap",
        "[\\fB\\-j\\fR|\\fB\\-p\\fR] [\\fB\\-v\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR]",
        ".SH DESCRIPTION",
        "\\fBbloomtap\\fR attaches an XDP program to network interfaces. On every packet "
        "received it keeps counters, finds heavy flows (top talkers) with a count\\-min "
        "sketch with conservative update, records a SPIE digest of the packet in "
        "time\\-windowed Bloom filters so that one can later ask whether a packet passed "
        "and when, and counts traffic by the watch\\-list classes of its addresses "
        "(a Bloomier filter).",
        ".PP",
        "An \\fIinstance\\fR is one loaded program with its maps, pinned under "
        "\\fI/sys/fs/bpf/bloomtap/NAME/\\fR; an attached interface's instance is named "
        "after the interface, and commands find it by that name, or by "
        "\\fB\\-\\-instance\\fR \\fINAME\\fR.",
        ".SH GLOBAL OPTIONS",
        ".TP", "\\fB\\-j\\fR, \\fB\\-\\-json\\fR", "JSON output (errors too).",
        ".TP", "\\fB\\-p\\fR, \\fB\\-\\-pretty\\fR", "pretty\\-printed JSON output.",
        ".TP", "\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR", "libbpf's log, the verifier's among it.",
        ".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "help, of the tool or of a command.",
        ".TP", "\\fB\\-V\\fR, \\fB\\-\\-version\\fR", "the version.",
        ".SH COMMANDS",
        "Unique prefixes of command names are accepted.",
    ]
    for name, what in cmds:
        out += [".SH \"%s\"" % esc(name.upper()), line(what[0].upper() + what[1:] + ".")]
        command(tool, [name], out)
        if name == "watch":
            for sub in ("load", "show", "test", "set", "clear"):
                command(tool, [name, sub], out)
    out += [
        ".SH EXIT STATUS",
        "0 on success, 1 on failure (for \\fBtrace\\fR: some packet was not seen), "
        "2 on a usage error.",
        ".SH SIGNALS",
        "\\fBrun\\fR: SIGTERM and SIGINT stop the agent and leave the programs attached "
        "and the maps pinned; SIGHUP reads \\fB\\-\\-config\\fR again, and the watch "
        "list it names.",
        ".SH FILES",
        ".TP", ".I /sys/fs/bpf/bloomtap/", "pinned instances (mode 0700: they hold the hash keys).",
        ".TP", ".I /etc/bloomtap/bloomtap.conf", "the agent's configuration "
        "(\\fBbloomtap run \\-\\-config\\fR).",
        ".TP", ".I /var/lib/bloomtap/archive", "sealed SPIE windows (the agent's default "
        "\\fB\\-\\-archive\\fR).",
        ".SH SEE ALSO",
        ".BR bpftool (8),",
        ".BR xdp\\-loader (8),",
        ".BR ip (8),",
        ".BR nfdump (1),",
        ".BR nfcapd (1),",
        ".BR prometheus (1)",
    ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
