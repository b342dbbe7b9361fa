#!/usr/bin/env python3
"""Oracle test: bloomtap's datapath parsing against tshark's dissection.

For every capture in ../shared/data/pcaps/ (MANIFEST.tsv), `bloomtap replay
--flows -j` gives the flows that the real XDP program keyed, with packets and
bytes. tshark dissects the same file independently; from its fields this
script computes the key that DESIGN.md's rules give for each packet, sums per
flow, and compares flow by flow. Zero disagreements is the pass mark.

Key rules (DESIGN.md, docs/datapath.md): the outer IP header after Ethernet
and at most two VLAN tags; IPv6 after its extension headers (hop-by-hop,
routing, fragment, destination options, AH); ports of TCP, UDP, SCTP; type and
code of ICMP/ICMPv6; no ports in later fragments; tunnels keyed by the outer
header. Bytes are the frame as the program saw it: the captured length, with
a non-Ethernet link header replaced by a 14-byte Ethernet one.

Excluded, and why (counted and printed):
- packets tshark marks malformed at or below the outer IP layer, where there
  is no agreed "right" key (each is also counted by bloomtap as truncated or
  malformed, which the per-packet datapath tests check).
"""
import collections, csv, hashlib, json, os, struct, subprocess, sys, tempfile, threading, concurrent.futures

HERE = os.path.dirname(os.path.abspath(__file__))
BLOOMTAP = os.environ.get("BLOOMTAP") or os.path.join(HERE, "..", "..", ".output", "bloomtap")
# defined once, in the Makefile (BT_PCAPS)
PCAPS = os.environ.get("BT_PCAPS") or subprocess.run(
    ["make", "-s", "-C", os.path.join(HERE, "..", ".."), "print-pcaps"],
    capture_output=True, text=True, check=True).stdout.strip()

FIELDS = ["frame.number", "frame.cap_len", "frame.protocols",
          "ip.version", "ip.hdr_len", "ip.len", "ip.src", "ip.dst", "ip.proto",
          "ip.frag_offset", "ip.flags.mf",
          "ipv6.src", "ipv6.dst", "ipv6.nxt",
          "ipv6.hopopts.nxt", "ipv6.routing.nxt", "ipv6.fraghdr.nxt",
          "ipv6.dstopts.nxt", "ah.next_header", "ipv6.fraghdr.offset",
          "tcp.srcport", "tcp.dstport", "udp.srcport", "udp.dstport",
          "sctp.srcport", "sctp.dstport", "icmp.type", "icmp.code",
          "icmpv6.type", "icmpv6.code", "_ws.malformed", "_ws.expert.message"]
LINK_DELTA = {"EN10MB (Ethernet)": 0, "LINUX_SLL (Linux cooked v1)": -2,
              "IPV4 (Raw IPv4)": 14, "RAW (Raw IP)": 14}
LINK_LAYERS = {"eth", "ethertype", "vlan", "sll", "raw", "frame"}
EXT = {"ipv6.hopopts": "ipv6.hopopts.nxt", "ipv6.routing": "ipv6.routing.nxt",
       "ipv6.fraghdr": "ipv6.fraghdr.nxt", "ipv6.dstopts": "ipv6.dstopts.nxt",
       "ah": "ah.next_header"}
EXT_CODE = {"ipv6.hopopts": 0, "ipv6.routing": 43, "ipv6.fraghdr": 44,
            "ipv6.dstopts": 60, "ah": 51}
MAX_IPV6_EXT = 8   # BT_MAX_IPV6_EXT in bpf/parse.bpf.h
PORTS = {"tcp": ("tcp.srcport", "tcp.dstport"), "udp": ("udp.srcport", "udp.dstport"),
         "sctp": ("sctp.srcport", "sctp.dstport"), "icmp": ("icmp.type", "icmp.code"),
         "icmpv6": ("icmpv6.type", "icmpv6.code")}


def first(row, f):
    v = row.get(f, "")
    return v.split(",")[0] if v else ""


def num(s):
    return int(s, 0) if s else 0


def expected_key(row):
    """The key bloomtap should build for this packet, or None (not keyed).
    Fields tshark could not dissect (it raised on a malformed header) are
    None: such a partial key matches any flow that agrees on the rest."""
    layers = row["frame.protocols"].split(":")
    i = 0
    while i < len(layers) and layers[i] in LINK_LAYERS:
        i += 1
    if i >= len(layers) or layers[i] not in ("ip", "ipv6"):
        return None
    # the VLAN bound: a third tag stops the parser before IP
    if layers[:i].count("vlan") > 2:
        return None
    l3 = layers[i]
    rest = layers[i + 1:]
    if l3 == "ip":
        if not first(row, "ip.src"):
            return None   # tshark gave up on the IP header: not keyed
        src, dst = first(row, "ip.src"), first(row, "ip.dst")
        proto = num(first(row, "ip.proto"))
        later_frag = num(first(row, "ip.frag_offset")) > 0
    else:
        if not first(row, "ipv6.src"):
            return None   # tshark gave up on the IP header: not keyed
        src, dst = first(row, "ipv6.src"), first(row, "ipv6.dst")
        proto = num(first(row, "ipv6.nxt"))
        later_frag = False
        seen = collections.Counter()
        walked = 0
        while rest and rest[0] in EXT:
            if walked == MAX_IPV6_EXT:
                # the parser's bound: keyed by the header it stopped at
                return (src, dst, 0, 0, EXT_CODE[rest[0]])
            walked += 1
            name = rest.pop(0)
            vals = row.get(EXT[name], "").split(",")
            if seen[name] >= len(vals) or not vals[seen[name]]:
                return (src, dst, None, None, None)
            proto = num(vals[seen[name]])
            seen[name] += 1
            if name == "ipv6.fraghdr" and num(first(row, "ipv6.fraghdr.offset")) > 0:
                later_frag = True
                break
    sport = dport = 0
    if not later_frag and rest and rest[0] in PORTS:
        fs, fd = PORTS[rest[0]]
        if first(row, fs) == "" or first(row, fd) == "":
            return (src, dst, None, None, proto)
        sport, dport = num(first(row, fs)), num(first(row, fd))
    return (src, dst, sport, dport, proto)


# TSHARK_CACHE=DIR: tshark's answers kept by the file's bytes and the
# command. make test-kernels runs the oracles in each emulated kernel, where
# tshark (user space, the same on every kernel) costs minutes a suite.
TSHARK_CACHE = os.environ.get("TSHARK_CACHE")


def tshark_cached(cmd, path):
    key = None
    if TSHARK_CACHE:
        h = hashlib.sha256("\0".join(c for c in cmd if c != path).encode())
        with open(path, "rb") as f:
            h.update(f.read())
        key = os.path.join(TSHARK_CACHE, h.hexdigest())
        try:
            with open(key) as f:
                return f.read()
        except OSError:
            pass
    out = subprocess.run(cmd, capture_output=True, text=True, errors="replace").stdout
    if key:
        try:
            os.makedirs(TSHARK_CACHE, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=TSHARK_CACHE)
            with os.fdopen(fd, "w") as f:
                f.write(out)
            os.rename(tmp, key)
        except OSError:
            pass    # a read-only cache (the guests'): answered all the same
    return out


def tshark_rows(path):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=,",
           "-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE",
           "-o", "tcp.desegment_tcp_streams:FALSE",
           "-o", "ip.check_checksum:FALSE"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = tshark_cached(cmd, path)
    for line in out.splitlines():
        vals = line.split("\t")
        yield dict(zip(FIELDS, vals + [""] * (len(FIELDS) - len(vals))))


def pcap_snaplen(path):
    """libpcap trims every packet to the snapshot length of a pcap file's
    header (tshark does not): the oracle must see the same bytes."""
    with open(path, "rb") as f:
        hdr = f.read(24)
    if len(hdr) < 24:
        return None
    for order in ("<", ">"):
        magic, = struct.unpack(order + "I", hdr[:4])
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            return struct.unpack(order + "I", hdr[16:20])[0]
    return None


WORKER = threading.local()
INSTANCES = []


def replay_flows(path):
    """The flows the real program keyed in this capture, as {key: (packets,
    bytes)}, or why not. A worker replays every file into one instance of
    its own: an instance costs 0.4 s to make (the program's load and its
    maps), as much as tshark's start, so the table holds the sum of the
    worker's files and a file's flows are what its replay added."""
    if not hasattr(WORKER, "inst"):
        WORKER.inst = "oracle-%d-%d" % (os.getpid(), threading.get_ident() % 100000)
        WORKER.flows = {}
        WORKER.first = True
        INSTANCES.append(WORKER.inst)
    cmd = [BLOOMTAP, "-j", "replay", "--flows", "--instance", WORKER.inst, path]
    if WORKER.first:
        cmd.insert(3, "--reset")
        WORKER.flows = {}
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        got_list = json.loads(p.stdout) if p.stdout.strip() else None
    except json.JSONDecodeError:
        got_list = None
    if not isinstance(got_list, list):
        # what the table holds is unknown: the next file starts it again
        WORKER.first = True
        return "replay failed: rc=%d %s %s" % (p.returncode, p.stdout[:200], p.stderr[:300])
    WORKER.first = False
    total = {(f["src"], f["dst"], f["sport"], f["dport"], f["proto"]): (f["packets"], f["bytes"])
             for f in got_list}
    added = {k: (v[0] - WORKER.flows.get(k, (0, 0))[0], v[1] - WORKER.flows.get(k, (0, 0))[1])
             for k, v in total.items() if v != WORKER.flows.get(k)}
    WORKER.flows = total
    return added


def check_file(index, name, linktype):
    path = os.path.join(PCAPS, name)
    snap = pcap_snaplen(path)
    dissect_path = path
    if snap and snap < 262144:
        dissect_path = os.path.join(tempfile.gettempdir(), "bt-oracle-%d-%d.pcap" % (os.getpid(), index))
        subprocess.run(["editcap", "-s", str(snap), path, dissect_path], check=True,
                       capture_output=True)
    got = replay_flows(path)
    if isinstance(got, str):
        return name, None, got
    delta = LINK_DELTA.get(linktype, 0)
    exp = collections.defaultdict(lambda: [0, 0])
    partial = []
    stats = collections.Counter()
    for row in tshark_rows(dissect_path):
        stats["packets"] += 1
        k = expected_key(row)
        caplen = num(row["frame.cap_len"]) + delta
        if caplen < 14:
            stats["skipped_runt"] += 1
            continue
        if k is None:
            stats["not_ip"] += 1
            continue
        if None in k:
            stats["partial"] += 1
            partial.append((k, caplen))
            continue
        stats["compared_packets"] += 1
        exp[k][0] += 1
        exp[k][1] += caplen
    # What bloomtap counted beyond the exactly known packets must be exactly
    # the partially known ones, each in a flow that agrees on what is known.
    residual = {}
    for k in set(exp) | set(got):
        e, g = exp.get(k, (0, 0)), got.get(k, (0, 0))
        residual[k] = [g[0] - e[0], g[1] - e[1]]
    for pat, caplen in partial:
        for k, r in residual.items():
            if r[0] > 0 and r[1] >= caplen and all(
                    p is None or p == f for p, f in zip(pat, k)):
                r[0] -= 1
                r[1] -= caplen
                break
        else:
            residual[pat] = [-1, -caplen]
    diffs = ["%s: bloomtap %s, tshark %s (%s)" % (k, tuple(got.get(k, (0, 0))),
             tuple(exp.get(k, (0, 0))), "bloomtap has more" if r[0] > 0 or r[1] > 0
             else "bloomtap has less") for k, r in sorted(residual.items(), key=str)
             if r != [0, 0]]
    stats["flows"] = len(exp)
    if dissect_path != path:
        os.unlink(dissect_path)
    return name, stats, diffs


def main():
    if os.geteuid() != 0:
        print("oracle: SKIP: needs root (BPF_PROG_TEST_RUN and pins)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    rows = list(csv.DictReader(open(os.path.join(PCAPS, "MANIFEST.tsv")), delimiter="\t"))
    only = sys.argv[1:]
    total = collections.Counter()
    failed = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            futs = [ex.submit(check_file, i, r["file"], r["link_type"])
                    for i, r in enumerate(rows) if not only or r["file"] in only]
            for fu in futs:
                name, stats, diffs = fu.result()
                if stats is None:
                    failed.append(name)
                    print("FAIL %s: %s" % (name, diffs))
                    continue
                total.update(stats)
                total["files"] += 1
                if diffs:
                    failed.append(name)
                    print("FAIL %s: %d flow(s) disagree" % (name, len(diffs)))
                    for d in diffs[:10]:
                        print("   ", d)
    finally:
        for inst in INSTANCES:
            subprocess.run([BLOOMTAP, "detach", "--instance", inst], capture_output=True)
    print("oracle: %d files, %d packets, %d packets compared in %d flows; "
          "not IP: %d; partly dissected by tshark (matched on the known fields): %d; "
          "shorter than Ethernet: %d" %
          (total["files"], total["packets"], total["compared_packets"], total["flows"],
           total["not_ip"], total["partial"], total["skipped_runt"]))
    print("oracle: files with disagreements: %d" % len(failed))
    print("%d passed, %d failed" % (total["files"] - len([f for f in failed]), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
