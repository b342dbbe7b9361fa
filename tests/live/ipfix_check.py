#!/usr/bin/env python3
"""tests/live/ipfix.sh's judge: what a collector decoded against what
`bloomtap heavy -j` (the agent's /api/v1/heavy, polled) said about the same
intervals, field by field.

usage: ipfix_check.py DECODER HEAVY_LOG INPUT [--late] [--port=N] [--ifindex=N]
                     [--period-ms=N]
  DECODER: nfacctd (its print plugin's JSON lines), nfdump (nfdump -o json
  of nfcapd's file), tshark (a capture of the export, read with the cflow
  dissector; also checks sequence numbers, message sizes, template refresh
  and the options records), tshark-file (an --ipfix-file, checked the same
  way once sent as datagrams into a capture by this script's 'pcap' mode).
  'intervals HEAVY_LOG': how many interval starts the log saw.
  --late: the collector started after the agent: only the intervals from
  the first it decoded on are expected (at least one). --ifindex: the
  ingressInterface every record must carry; --period-ms: the interval's
  length, so that a record's end is checked against the next interval's
  start when the log saw it; an interval decoded that heavy -j never
  showed is a problem when a poll (HEAVY_LOG.t: asked and answered, ms)
  was answered while it was the last one, and else said and not compared.
  --rounds=R,R...: the heavy flows that
  ipfix_traffic.py sent in those rounds must each be decoded, with the
  sizes it sent them (not only what heavy -j said).
Prints what differs; exit 0 when nothing does."""
import datetime
import ipaddress
import json
import socket
import struct
import subprocess
import sys

STARTS = set()	# every interval start the log saw, complete or current
PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "ipv6-icmp": 58, "sctp": 132}


def addr(a):
    return ipaddress.ip_address(a).compressed


def ms(text, fmt):
    t = datetime.datetime.strptime(text, fmt).replace(tzinfo=datetime.timezone.utc)
    return int(round(t.timestamp() * 1000))


def heavy_intervals(path):
    """{start_ms: {key: (packets, bytes)}}, and {start_ms: (error_bytes,
    error_packets)}, of every complete interval the log saw."""
    flows, errors = {}, {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        try:
            arr = json.loads(line)
        except ValueError:
            continue	# a poll cut short by the agent's stop
        if not isinstance(arr, list):
            continue
        seen = {}
        for f in arr:
            if not f["interval_start"]:
                continue
            start = ms(f["interval_start"].rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f")
            STARTS.add(start)
            if f["interval"] != "last":
                continue
            key = (addr(f["src"]), addr(f["dst"]), f["sport"], f["dport"], f["proto"])
            seen.setdefault(start, {})[key] = (f["packets"], f["bytes"])
            errors[start] = (f["error_bytes"], f["error_packets"])
        for start, fl in seen.items():
            flows[start] = fl
    return flows, errors


def nfacctd(path):
    out = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        proto = r["ip_proto"]
        proto = PROTOS.get(proto, proto) if isinstance(proto, str) else proto
        out.append((ms(r["timestamp_start"], "%Y-%m-%d %H:%M:%S.%f"),
                    ms(r["timestamp_end"], "%Y-%m-%d %H:%M:%S.%f"),
                    (addr(r["ip_src"]), addr(r["ip_dst"]), r["port_src"], r["port_dst"],
                     int(proto)), r["packets"], r["bytes"], r["iface_in"]))
    return out


def nfdump(path):
    out = []
    for r in json.load(open(path)):
        if r.get("type") != "FLOW":
            continue
        src = r.get("src4_addr") or r.get("src6_addr")
        dst = r.get("dst4_addr") or r.get("dst6_addr")
        # nfdump 1.7.1 does not decode layer2OctetDeltaCount: no bytes
        out.append((ms(r["first"], "%Y-%m-%dT%H:%M:%S.%f"), ms(r["last"], "%Y-%m-%dT%H:%M:%S.%f"),
                    (addr(src), addr(dst), r["src_port"], r["dst_port"], r["proto"]),
                    r["in_packets"], None, r["input_snmp"]))
    return out


def tshark_time(text):
    # "Nov 26, 2026 07:38:06.656000000 UTC"
    day, frac = text.replace(" UTC", "").split(".")
    t = datetime.datetime.strptime(day, "%b %d, %Y %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000 + int(frac[:3])


def tshark_messages(pcap, ports):
    """Each IPFIX message of the capture: its fields and its sets."""
    args = ["tshark", "-r", pcap, "-T", "json", "-Y",
            " || ".join("udp.dstport==%s || tcp.dstport==%s" % (p, p) for p in ports)]
    for p in ports:
        args += ["-d", "udp.port==%s,cflow" % p, "-d", "tcp.port==%s,cflow" % p]
    pkts = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout
                      or "[]")
    msgs = []
    for p in pkts:
        layers = p["_source"]["layers"]
        c = layers.get("cflow")
        if not c:
            continue
        for m in c if isinstance(c, list) else [c]:
            msgs.append(m)
    return msgs


def tshark_records(msgs, problems):
    out, errs, sampling, templates, seqs = [], {}, 0, 0, []
    for m in msgs:
        n_data = 0
        if int(m["cflow.len"]) > 1452:
            problems.append("a message of %s bytes, over the path MTU's 1452" % m["cflow.len"])
        for k, s in m.items():
            if not k.startswith("Set "):
                continue
            if "Template" in k:
                templates += 1
                continue
            for fk, f in s.items():
                if not fk.startswith("Flow "):
                    continue
                n_data += 1
                f = dict(f, **f.get("cflow.timedelta_tree", {}))	# start and end
                if "cflow.sampling_packet_interval" in f:
                    sampling += f["cflow.sampling_packet_interval"] == "1" and \
                        f["cflow.sampling_packet_space"] == "0"
                elif "cflow.absolute_error" in f:
                    start = tshark_time(f["cflow.abstimestart"])
                    errs[(start, f["cflow.information_element_id"])] = \
                        float(f["cflow.absolute_error"])
                else:
                    # flowDirection (IE 61): heavy flows are what the
                    # interface received, 0
                    if f.get("cflow.direction") != "0":
                        problems.append("a flow record's flowDirection: %s, not 0 (ingress)"
                                        % f.get("cflow.direction"))
                    src = f.get("cflow.srcaddr") or f.get("cflow.srcaddrv6")
                    dst = f.get("cflow.dstaddr") or f.get("cflow.dstaddrv6")
                    out.append((tshark_time(f["cflow.abstimestart"]),
                                tshark_time(f["cflow.abstimeend"]),
                                (addr(src), addr(dst), int(f["cflow.srcport"]),
                                 int(f["cflow.dstport"]), int(f["cflow.protocol"])),
                                int(f["cflow.packets"]),
                                int(f["cflow.layer2_octet_delta_count"]),
                                int(f["cflow.inputint"])))
        seqs.append((int(m["cflow.sequence"]), n_data))
    # RFC 7011 3.1: each message's sequence number counts the data records
    # sent before it
    for (s0, n0), (s1, _) in zip(seqs, seqs[1:]):
        if s1 != (s0 + n0) % 2**32:
            problems.append("sequence %d after %d with %d records" % (s1, s0, n0))
    return out, errs, sampling, templates


POLLS = None	# (asked, answered) ms of each poll answered, from HEAVY_LOG.t


def polled_while_last(start, period_ms):
    """Did a poll, asked and answered within the next interval's first
    period (when the interval that began at start was the last one), get
    an answer? Without the poll times, or the next interval's start, or a
    period, it is taken that one did."""
    later = [t for t in STARTS if t > start]
    if POLLS is None or not period_ms or not later:
        return True
    nxt = min(later)
    return any(a >= nxt + 200 and b <= nxt + period_ms - 200 for a, b in POLLS)


def compare(decoded, expected, late, problems, with_bytes, ifindex, period_ms):
    got = {}
    for start, end, key, packets, nbytes, iface in decoded:
        if key in got.setdefault(start, {}):
            problems.append("interval %d: %s decoded twice" % (start, key))
        got[start][key] = (packets, nbytes, end)
        if ifindex is not None and iface != ifindex:
            problems.append("interval %d: %s: interface %s, not %d" % (start, key, iface, ifindex))
        # its end is the next interval's start, when the log saw that one
        later = [t for t in STARTS if t > start]
        if period_ms and later and min(later) - start < 1.5 * period_ms and end != min(later):
            problems.append("interval %d: %s ends at %d, the next began at %d" % (
                start, key, end, min(later)))
    starts = sorted(s for s in expected if expected[s])
    if late:
        if not got:
            problems.append("the late collector decoded nothing")
            return 0
        starts = [s for s in starts if s >= min(got)]
    for s in set(got) - set(expected):
        if polled_while_last(s, period_ms):
            problems.append("interval %d decoded, but heavy -j never showed it" % s)
        else:
            print("  interval %d decoded; no poll was answered while it was the last "
                  "interval (a busy machine): not compared" % s)
    for i, s in enumerate(starts):
        exp, dec = expected[s], got.get(s, {})
        for key in set(exp) | set(dec):
            if key not in dec:
                problems.append("interval %d: %s missing" % (s, key))
            elif key not in exp:
                problems.append("interval %d: %s decoded, not in heavy -j" % (s, key))
            else:
                pk, by, end = dec[key]
                if pk != exp[key][0] or (with_bytes and by != exp[key][1]):
                    problems.append("interval %d: %s: %s packets %s bytes, heavy -j %s %s"
                                    % (s, key, pk, by, exp[key][0], exp[key][1]))
                if end <= s:
                    problems.append("interval %d: %s ends at %d" % (s, key, end))
    return sum(len(expected[s]) for s in starts)


# ipfix_traffic.py's heavy flows: per round r and family, three flows from
# port 10000 + 100 r + i of SIZES[i] packets, each frame 14 + IP + 8 + 600
SIZES = (300, 200, 100)


def sent_sizes(decoded, rounds, with_bytes, problems):
    """Every heavy flow sent in those rounds decoded once, with its size."""
    for r in rounds:
        for v6 in (False, True):
            for i, count in enumerate(SIZES):
                sport, dport = 10000 + 100 * r + i, 5000 + v6
                recs = [d for d in decoded if d[2][2] == sport and d[2][3] == dport
                        and (":" in d[2][0]) == v6]
                frame = 14 + (40 if v6 else 20) + 8 + 600
                want = (count, count * frame if with_bytes else None)
                got = [(d[3], d[4] if with_bytes else None) for d in recs]
                if got != [want]:
                    problems.append("round %d, %s flow from port %d: decoded %s, sent %s" % (
                        r, "IPv6" if v6 else "IPv4", sport, got, want))


def pcap_of_file(ipfix, pcap):
    """An --ipfix-file's messages as UDP datagrams to port 4739 in a pcap,
    for the dissector."""
    data = open(ipfix, "rb").read()
    out = open(pcap, "wb")
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    off = 0
    while off + 16 <= len(data):
        n = struct.unpack("!H", data[off + 2:off + 4])[0]
        msg = data[off:off + n]
        off += n
        udp = struct.pack("!HHHH", 4739, 4739, 8 + len(msg), 0) + msg
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                         socket.inet_aton("198.18.0.1"), socket.inet_aton("198.18.0.2"))
        frame = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + ip + udp
        out.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
    out.close()
    return off == len(data)


def walk(path):
    """A file's (or a TCP stream's) whole IPFIX messages, decoded from the
    raw bytes: the number of messages, and each data record (of a template,
    not of an options template) as {(enterprise, element): bytes}, with
    variable-length fields (RFC 7011 7) and enterprise-specific elements
    (their bit 0x8000, then the enterprise number). A message cut at the
    stream's end is not counted."""
    data = open(path, "rb").read()
    templates, options = {}, set()
    messages, records, off = 0, [], 0
    while off + 16 <= len(data):
        version, n = struct.unpack("!HH", data[off:off + 4])
        if version != 10 or n < 16:
            raise SystemExit("not IPFIX at byte %d" % off)
        if off + n > len(data):
            break
        msg, off, pos = data[off:off + n], off + n, 16
        messages += 1
        while pos + 4 <= len(msg):
            sid, slen = struct.unpack("!HH", msg[pos:pos + 4])
            body, pos = msg[pos + 4:pos + slen], pos + slen
            if sid in (2, 3):       # (options) template set
                b = 0
                while b + 4 <= len(body):
                    tid, nf = struct.unpack("!HH", body[b:b + 4])
                    b += 6 if sid == 3 else 4
                    fields = []
                    for _ in range(nf):
                        fid, flen = struct.unpack("!HH", body[b:b + 4])
                        pen = struct.unpack("!I", body[b + 4:b + 8])[0] if fid & 0x8000 else 0
                        b += 8 if fid & 0x8000 else 4
                        fields.append((pen, fid & 0x7fff, flen))
                    templates[tid] = fields
                    if sid == 3:
                        options.add(tid)
            elif sid >= 256 and sid not in options:
                b = 0
                # a set may end in padding shorter than any record
                while templates[sid] and b < len(body):
                    rec, start = {}, b
                    for pen, fid, flen in templates[sid]:
                        if flen == 65535:
                            flen, b = body[b], b + 1
                            if flen == 255:
                                flen, b = struct.unpack("!H", body[b:b + 2])[0], b + 2
                        rec[(pen, fid)], b = body[b:b + flen], b + flen
                    if b > len(body):
                        break
                    records.append(rec)
                    if b == start:
                        break
    return messages, records


def stream_count(path):
    """A TCP stream's whole IPFIX messages, and the data records in them:
    what a collector that read it got."""
    messages, records = walk(path)
    print(messages, len(records))
    return 0


def workloads(path):
    """A file's flows with their workloads (bloomtap's elements 1 and 2 of
    enterprise 32473, docs/operating.md): a line a record, "SPORT PACKETS
    SRC_WORKLOAD DST_WORKLOAD" (- for none), " dropped" after a dropped
    flow's (forwardingStatus, element 89), sorted."""
    lines = []
    for r in walk(path)[1]:
        if (0, 7) not in r:
            continue
        name = [r.get((32473, k), b"").decode("utf-8", "backslashreplace") or "-" for k in (1, 2)]
        lines.append("%d %d %s %s%s" % (int.from_bytes(r[(0, 7)], "big"),
                                        int.from_bytes(r[(0, 2)], "big"), name[0], name[1],
                                        " dropped" if (0, 89) in r else ""))
    print("\n".join(sorted(lines)))
    return 0


def intervals(log):
    """How many interval starts the log saw."""
    heavy_intervals(log)
    print(len(STARTS))
    return 0


def main():
    if sys.argv[1] == "intervals":
        return intervals(sys.argv[2])
    if sys.argv[1] == "stream-count":
        return stream_count(sys.argv[2])
    if sys.argv[1] == "workloads":
        return workloads(sys.argv[2])
    if sys.argv[1] == "pcap":
        ok = pcap_of_file(sys.argv[2], sys.argv[3])
        print("whole messages" if ok else "the file ends inside a message")
        return 0 if ok else 1
    decoder, log, inp = sys.argv[1:4]
    late = "--late" in sys.argv
    ports = [a.split("=")[1] for a in sys.argv if a.startswith("--port=")] or ["4739"]
    expected, errors = heavy_intervals(log)
    global POLLS
    try:
        POLLS = [tuple(int(x) for x in line.split()) for line in open(log + ".t")
                 if len(line.split()) == 2]
    except OSError:
        POLLS = None
    problems = []
    if decoder == "nfacctd":
        decoded, with_bytes = nfacctd(inp), True
    elif decoder == "nfdump":
        decoded, with_bytes = nfdump(inp), False
    else:
        msgs = tshark_messages(inp, ports)
        decoded, errs, sampling, templates = tshark_records(msgs, problems)
        with_bytes = True
        if not sampling:
            problems.append("no sampling options record (1 in 1)")
        for start in {d[0] for d in decoded}:
            eb, ep = errors.get(start, (None, None))
            if errs.get((start, "352")) != eb or errs.get((start, "2")) != ep:
                problems.append("interval %d: absoluteError %s/%s, heavy -j %s/%s" % (
                    start, errs.get((start, "352")), errs.get((start, "2")), eb, ep))
        print("%d messages, %d template records" % (len(msgs), templates))
    if decoder == "tshark-file":
        # no heavy log to follow: every interval the file holds, against
        # the heavy -j output given as the log
        pass
    ifindex = [int(a.split("=")[1]) for a in sys.argv if a.startswith("--ifindex=")]
    period = [int(a.split("=")[1]) for a in sys.argv if a.startswith("--period-ms=")]
    n = compare(decoded, expected, late, problems, with_bytes, ifindex[0] if ifindex else None,
                period[0] if period else 0)
    for a in sys.argv:
        if a.startswith("--rounds="):
            sent_sizes(decoded, [int(r) for r in a.split("=")[1].split(",")], with_bytes,
                       problems)
    v4 = sum(1 for d in decoded if ":" not in d[2][0])
    if "--both-families" in sys.argv and (not v4 or v4 == len(decoded)):
        problems.append("not both families: %d IPv4 of %d records" % (v4, len(decoded)))
    print("%s: %d records decoded (%d IPv4, %d IPv6); %d expected in %d intervals" % (
        decoder, len(decoded), v4, len(decoded) - v4, n, len({d[0] for d in decoded})))
    for p in problems[:20]:
        print("  " + p)
    if len(problems) > 20:
        print("  ... %d more" % (len(problems) - 20))
    return 1 if problems or not decoded else 0


if __name__ == "__main__":
    sys.exit(main())
