#!/usr/bin/env python3
"""Watch lists against an independent count, capture by capture.

For each capture, a list is made from its own addresses: every IPv4 /24 and
IPv6 /64 that holds one of them gets a network class, and every other
odd address also a host class (/32, /128), so that longest-prefix matching
decides; classes are shared round-robin, 120 of each kind at most. The capture is replayed with that list (`replay
--watch`), and `watch show -j` must equal, class by class and direction by
direction, the packets and bytes that tshark's dissection gives (the outer
IP header; the frames bloomtap keys, as tests/oracle/oracle.py decides), classified
by Python's ipaddress module.
"""
import collections, ipaddress, json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (the tshark fields and the keying rules)

CAPTURES = ["ndpi__gnutella.pcap", "dnscap__dns.pcap", "dnscap__dns6.pcap",
            "libpcap__ipv6_ext_headers.pcap", "pcapplusplus__tls2.pcap",
            "tcpdump__OSPFv3_broadcast_adjacency.pcap", "tcpdump__ahcp.pcapng",
            "tcpdump__bgp-addpath.pcap"]


def packets(name, linktype):
    """(src, dst, bytes) of each frame bloomtap keys."""
    path = os.path.join(oracle.PCAPS, name)
    delta = oracle.LINK_DELTA.get(linktype, 0)
    for row in oracle.tshark_rows(path):
        k = oracle.expected_key(row)
        caplen = oracle.num(row["frame.cap_len"]) + delta
        if k is None or caplen < 14:
            continue
        yield k[0], k[1], caplen


def make_list(pkts):
    nets, hosts = {}, {}
    for s, d, _ in pkts:
        for a in (s, d):
            ip = ipaddress.ip_address(a)
            net = ipaddress.ip_network("%s/%d" % (a, 24 if ip.version == 4 else 64), strict=False)
            # at most 120 classes of each kind: many entries share one
            nets.setdefault(net, "net%d" % (len(nets) % 120))
            if int(ip) % 2:
                hosts.setdefault(ip, "host%d" % (len(hosts) % 120))
    return nets, hosts


def classify(a, nets, hosts):
    ip = ipaddress.ip_address(a)
    if ip in hosts:
        return hosts[ip]
    net = ipaddress.ip_network("%s/%d" % (a, 24 if ip.version == 4 else 64), strict=False)
    return nets.get(net)


def check(index, name, linktype, bloomtap):
    pkts = list(packets(name, linktype))
    nets, hosts = make_list(pkts)
    want = collections.defaultdict(lambda: [0, 0, 0, 0])
    for s, d, n in pkts:
        for direction, a in ((0, s), (1, d)):
            c = classify(a, nets, hosts)
            if c:
                want[c][direction] += 1
                want[c][2 + direction] += n
    inst = "watch-oracle-%d-%d" % (os.getpid(), index)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for net, c in nets.items():
            f.write("%s %s\n" % (net, c))
        for ip, c in hosts.items():
            f.write("%s %s\n" % (ip, c))
        listfile = f.name
    try:
        r = subprocess.run([bloomtap, "replay", "--reset", "--instance", inst, "--watch", listfile,
                            os.path.join(oracle.PCAPS, name)], capture_output=True, text=True)
        if r.returncode:
            return "replay failed: %s" % r.stderr.strip()[:300], 0, 0
        show = json.loads(subprocess.run([bloomtap, "-j", "watch", "show", "--instance", inst],
                                         capture_output=True, text=True).stdout)
    finally:
        subprocess.run([bloomtap, "detach", "--instance", inst], capture_output=True)
        os.unlink(listfile)
    got = {c["class"]: [c["src_packets"], c["dst_packets"], c["src_bytes"], c["dst_bytes"]]
           for c in show}
    diffs = ["%s: bloomtap %s, expected %s" % (c, got.get(c, [0] * 4), want.get(c, [0] * 4))
             for c in sorted(set(got) | set(want)) if got.get(c, [0] * 4) != want.get(c, [0] * 4)]
    return diffs, len(pkts), len(nets) + len(hosts)


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (replay loads the XDP program)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    links = {}
    with open(os.path.join(oracle.PCAPS, "MANIFEST.tsv")) as f:
        for row in __import__("csv").DictReader(f, delimiter="\t"):
            links[row["file"]] = row["link_type"]
    passed = failed = 0
    for i, name in enumerate(CAPTURES):
        diffs, n, keys = check(i, name, links.get(name, ""), oracle.BLOOMTAP)
        if isinstance(diffs, str) or diffs:
            failed += 1
            print("  FAIL  %s: %s" % (name, diffs if isinstance(diffs, str) else "; ".join(diffs[:5])))
        else:
            passed += 1
            print("  ok    %s: %d packets, %d list entries, every class's counts exact"
                  % (name, n, keys))
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
