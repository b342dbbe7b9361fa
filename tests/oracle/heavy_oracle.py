#!/usr/bin/env python3
"""Heavy flows of real captures against exact counts from tshark.

Each capture is replayed as one interval (bloomtap replay --reset), then
`bloomtap heavy -j` (flows with at least 0.1 %, then 0.01 %, of the
interval's bytes) is compared with the exact per-flow bytes that tshark's dissection
gives (the flow rules of tests/oracle/oracle.py). Assertions (DESIGN.md): recall
100 %, precision >= 99 %, average relative error of reported bytes <= 1 %,
and bloomtap's interval volume equals tshark's.
"""
import collections, json, math, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

FILES = ["ndpi__gnutella.pcap", "pcapplusplus__tls2.pcap"]
FRACTIONS = [0.001, 0.0001]


def check(name, index, fraction):
    path = os.path.join(oracle.PCAPS, name)
    inst = "heavy-oracle-%d-%d" % (os.getpid(), index)
    try:
        subprocess.run([oracle.BLOOMTAP, "replay", "--reset", "--instance", inst,
                        "--fraction", str(fraction), path],
                       check=True, capture_output=True)
        out = subprocess.run([oracle.BLOOMTAP, "-j", "heavy", "--instance", inst, "-n", "100000"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        subprocess.run([oracle.BLOOMTAP, "detach", "--instance", inst], capture_output=True)
    got = [f for f in json.loads(out) if f["interval"] == "current"]
    truth = collections.Counter()
    total = 0
    for row in oracle.tshark_rows(path):
        caplen = oracle.num(row["frame.cap_len"])
        if caplen < 14:
            continue
        total += caplen
        k = oracle.expected_key(row)
        if k is not None and None not in k:
            truth[k] += caplen
    thr = math.ceil(fraction * total)
    heavy = {k for k, b in truth.items() if b >= thr}
    reported = {(f["src"], f["dst"], f["sport"], f["dport"], f["proto"]): f for f in got}
    hits = heavy & set(reported)
    errors = [(reported[k]["bytes"] - truth[k]) / truth[k] for k in hits]
    are = sum(errors) / len(errors) if errors else 0.0
    iv_bytes = got[0]["interval_bytes"] if got else None
    results = [
        ("interval bytes = tshark's (%s)" % total, iv_bytes == total),
        ("recall 100 %% (%d of %d flows above %g %%)" % (len(hits), len(heavy), fraction * 100),
         hits == heavy),
        ("precision >= 99 %% (%d reported)" % len(reported),
         len(hits) >= 0.99 * len(reported)),
        ("average relative error %.2e <= 1 %%" % are, are <= 0.01),
        ("never below the truth", all(e >= 0 for e in errors)),
    ]
    return results


def main():
    if os.geteuid() != 0:
        print("heavy_oracle: SKIP: needs root")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    passed = failed = 0
    for i, (name, fraction) in enumerate((n, f) for n in FILES for f in FRACTIONS):
        for what, ok in check(name, i, fraction):
            print("  %s  %s: %s" % ("ok  " if ok else "FAIL", name, what))
            passed += ok
            failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
