#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""make soak: the agent under sustained live traffic, killed and restarted.

The agent (bloomtap run) watches a veth in a namespace; bench/soakgen sends
numbered Zipf packets into it with BPF_F_TEST_XDP_LIVE_FRAMES as fast as the
machine goes, for SOAK_SECONDS (default 540). Intervals end every 10 s,
windows turn at their design load, the archive is pruned by size. Threads ask
/api/v1/heavy and /api/v1/trace all along; the agent is SIGKILLed at a third
and two thirds of the run and started again. At the end:

- every packet the generator sent is counted (and the veth saw no other);
- sampled packets from every part of the run, traced a second and half a
  minute after they were sent, are all seen (live ring or archive);
- each interval's heavy flows match the ground truth computed from the
  generator's sequence (packets reach the program in order, so an interval
  is a contiguous run of packet numbers): every flow at or above 0.001 of the
  interval's bytes is reported, no estimate is low, none is high by more
  than the reported error bound;
- the agent's RSS and open descriptors are flat after warm-up;
- the archive directory stays within its budget;
- nothing was logged as an error.
"""
import array
import collections
import datetime
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUTPUT", os.path.join(ROOT, ".output"))
BLOOMTAP = os.path.join(OUT, "bloomtap")
SOAKGEN = os.path.join(OUT, "soakgen")
NS_A, NS_B = "btsoak-a", "btsoak-b"
IF_A, IF_B = "btsoak-a", "btsoak-b"
PORT = 9479
API = "http://127.0.0.1:%d" % PORT

SECONDS = float(os.environ.get("SOAK_SECONDS", "540"))
INTERVAL = 10
FRACTION = 0.001                # the agent's default --fraction
BUDGET = 512 << 20              # --archive-max-bytes
FRAME_BYTES = 64
DESIGN_LOAD = 65536             # the default window's packets (2 Mi bits / 32)
SEQ_LEN = 1 << 20
WARMUP = 30                     # seconds of an agent's life before RSS counts
RECENT_AGE = (1.0, 2.0)         # traced this long after sending (live ring)
OLD_AGE = (20.0, 40.0)          # and this long (the archive)

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def sh(*cmd, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stdout.strip()))
    return r.stdout


def enter_netns(name):
    """This thread and every thread and process it starts from now on."""
    fd = os.open("/var/run/netns/" + name, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns " + name)
    finally:
        os.close(fd)


def lab_down():
    sh("ip", "netns", "del", NS_A, check=False)
    sh("ip", "netns", "del", NS_B, check=False)
    shutil.rmtree("/sys/fs/bpf/bloomtap/" + IF_B, ignore_errors=True)


def lab_up():
    lab_down()
    sh("ip", "netns", "add", NS_A)
    sh("ip", "netns", "add", NS_B)
    for ns in (NS_A, NS_B):     # no router solicitations: the generator's only
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
           "net.ipv6.conf.default.disable_ipv6=1")
    sh("ip", "link", "add", IF_A, "netns", NS_A, "type", "veth", "peer", "name", IF_B,
       "netns", NS_B)
    sh("ip", "-n", NS_A, "link", "set", IF_A, "up")
    sh("ip", "-n", NS_B, "link", "set", IF_B, "up")
    sh("ip", "-n", NS_B, "link", "set", "lo", "up")
    # veth sends XDP_TX frames only with a program on the sending side too
    sh("ip", "-n", NS_A, "link", "set", IF_A, "xdpdrv", "obj",
       os.path.join(OUT, "tests", "xdp_pass.bpf.o"), "sec", "xdp")


def http(path, body=None, timeout=30):
    req = urllib.request.Request(API + path, data=body, method="POST" if body else "GET")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


class Soak:
    def __init__(self, archive):
        self.archive = archive
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.down = threading.Event()       # set while the agent is killed
        self.agent = None
        self.incarnation = 0
        self.logs = []
        self.started = []                   # monotonic start of each agent
        self.downs = []                     # (killed, up again), monotonic
        self.progress = [(time.monotonic(), 0)]   # (time, packets sent so far)
        self.sent_done = None
        self.frame = None
        self.queries = collections.Counter()
        self.failures = []
        self.samples = []                   # (kind, number, sent at, answer)
        self.intervals = {}                 # interval_start -> the last poll
        # (incarnation, age, RSS KiB, private KiB, fds, archive bytes, when)
        self.monitor = []
        self.epoch = time.time() - time.monotonic()

    def fail(self, what):
        with self.lock:
            self.failures.append(what)

    # ---- the agent ----
    def start_agent(self):
        self.incarnation += 1
        log = open(os.path.join(self.archive, "..", "agent-%d.log" % self.incarnation), "w")
        self.logs.append(log.name)
        self.agent = subprocess.Popen(
            [BLOOMTAP, "run", IF_B, "--interval", str(INTERVAL), "--archive", self.archive,
             "--archive-max-bytes", str(BUDGET), "--listen", "127.0.0.1:%d" % PORT],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if http("/healthz", timeout=2)[0] == 200:
                    self.started.append(time.monotonic())
                    return
            except (OSError, urllib.error.URLError):
                pass
            if self.agent.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("the agent did not come up (see %s)" % self.logs[-1])

    def kill_agent(self):
        self.down.set()
        self.agent.send_signal(signal.SIGKILL)
        self.agent.wait()
        t = time.monotonic()
        time.sleep(1)       # traffic goes on; the datapath turns what is ready
        self.start_agent()
        self.down.clear()
        self.downs.append((t, time.monotonic()))
        return time.monotonic() - t

    # ---- traffic ----
    def read_generator(self, gen):
        for line in gen.stdout:
            w = line.split()
            if w[0] == "frame":
                self.frame = bytes.fromhex(w[1])
            elif w[0] in ("sent", "done"):
                with self.lock:
                    self.progress.append((float(w[1]), int(w[2])))
                if w[0] == "done":
                    self.sent_done = int(w[2])

    def packet(self, seq, n):
        """The bytes of packet number n, as bench.bpf.c's next_packet made them."""
        flow = seq[n % SEQ_LEN]
        b = bytearray(self.frame)
        b[26:30] = (0xc6120000 + (flow & 0x1ffff)).to_bytes(4, "big")
        b[34:36] = (1024 + flow % 50000).to_bytes(2, "big")
        b[38:42] = (n & 0xffffffff).to_bytes(4, "big")
        return bytes(b)

    # ---- the clients ----
    def request(self, kind, path, body=None):
        """One request; None while the agent is down (asked again later)."""
        try:
            status, data = http(path, body)
        except (OSError, urllib.error.URLError) as e:
            if self.down.is_set():
                with self.lock:
                    self.queries[kind + " refused while down"] += 1
                return None
            self.fail("%s %s: %s" % (kind, path, e))
            return None
        if status != 200:
            self.fail("%s %s: HTTP %d" % (kind, path, status))
            return None
        with self.lock:
            self.queries[kind] += 1
        return json.loads(data)

    def tracer(self, seq, kind, age, rng):
        while not self.stop.is_set():
            now = time.monotonic()
            with self.lock:
                chunks = [(self.progress[i - 1], self.progress[i])
                          for i in range(1, len(self.progress))
                          if age[0] <= now - self.progress[i][0] <= age[1]]
            if not chunks:
                time.sleep(0.2)
                continue
            (t0, c0), (t1, c1) = rng.choice(chunks)
            if c1 <= c0:
                continue
            n = rng.randrange(c0, c1)
            since = int(self.epoch + t0) - 2
            until = int(self.epoch + t1) + 3
            ans = None
            while ans is None and not self.stop.is_set():
                ans = self.request("trace", "/api/v1/trace?since=%d&until=%d" % (since, until),
                                   self.packet(seq, n).hex().encode())
                if ans is None:
                    time.sleep(0.2)
            if ans is not None:
                with self.lock:
                    self.samples.append((kind, n, t1, ans[0]))
            time.sleep(0.05)

    def poll_heavy(self):
        while not self.stop.is_set():
            ans = self.request("heavy", "/api/v1/heavy?n=100000")
            if ans is not None:
                self.take_intervals(ans, "last")
            self.stop.wait(1)

    def take_intervals(self, ans, which):
        got = {}
        for f in ans:
            if f["interval"] == which:
                got.setdefault(f["interval_start"], []).append(f)
        with self.lock:
            self.intervals.update(got)

    def watch(self):
        while not self.stop.is_set():
            pid = self.agent.pid
            try:
                with open("/proc/%d/status" % pid) as f:
                    st = {l.split(":")[0]: l.split()[1] for l in f if l.startswith(("VmRSS", "RssAnon"))}
                rss, heap = int(st["VmRSS"]), int(st["RssAnon"])
                fds = len(os.listdir("/proc/%d/fd" % pid))
                size = sum(os.path.getsize(os.path.join(self.archive, n))
                           for n in os.listdir(self.archive))
            except (OSError, KeyError):
                self.stop.wait(0.5)     # killed, or a file pruned under us
                continue
            with self.lock:
                now = time.monotonic()
                self.monitor.append((self.incarnation, now - self.started[-1],
                                     rss, heap, fds, size, now))
            self.stop.wait(2)


def ground_truth(seq, full, start, count):
    """Packets a flow among packet numbers [start, start + count)."""
    cycles, rem = divmod(count, SEQ_LEN)
    s = start % SEQ_LEN
    part = collections.Counter(seq[s:s + rem])
    if s + rem > SEQ_LEN:
        part.update(seq[:s + rem - SEQ_LEN])
    if cycles:
        for f, c in full.items():
            part[f] += cycles * c
    return part


def flow_of(f):
    a = [int(x) for x in f["src"].split(".")]
    return ((a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]) - 0xc6120000), f["sport"]


def check_heavy(seq, intervals, counted):
    """Every interval, in order: a contiguous run of packet numbers."""
    full = collections.Counter(seq)
    start, problems, heavy, reported, extra, worst = 0, [], 0, 0, 0, 0.0
    for key in sorted(intervals):
        flows = intervals[key]
        pk, by = flows[0]["interval_packets"], flows[0]["interval_bytes"]
        if by != pk * FRAME_BYTES:
            problems.append("%s: %d bytes for %d packets" % (key, by, pk))
        truth = ground_truth(seq, full, start, pk)
        start += pk
        thr = FRACTION * by
        got = {}
        for f in flows:
            flow, sport = flow_of(f)
            if sport != 1024 + flow % 50000:
                problems.append("%s: a flow no packet had: %s:%d" % (key, f["src"], sport))
                continue
            got[flow] = f
        for flow, p in truth.items():
            if p * FRAME_BYTES >= thr:
                heavy += 1
                if flow not in got:
                    problems.append("%s: heavy flow %d (%d packets) not reported" % (key, flow, p))
        for flow, f in got.items():
            true = truth.get(flow, 0) * FRAME_BYTES
            reported += 1
            extra += true < thr
            if f["bytes"] < true or f["exact_bytes"] > true:
                problems.append("%s: flow %d: reported %d (exact %d), true %d" %
                                (key, flow, f["bytes"], f["exact_bytes"], true))
            elif f["bytes"] - true > f["error_bytes"]:
                problems.append("%s: flow %d high by %d, bound %d" %
                                (key, flow, f["bytes"] - true, f["error_bytes"]))
            worst = max(worst, (f["bytes"] - true) / by)
    if start != counted:
        problems.append("the intervals hold %d packets, the counters %d: an interval was "
                        "not seen" % (start, counted))
    return problems, heavy, reported, extra, worst


def flat(mon, inc, until):
    """One agent's samples after warm-up while the traffic ran (after it the
    work changes: windows close by time, empty), or None if too few."""
    m = [x for x in mon if x[0] == inc and x[1] >= WARMUP and x[6] <= until]
    return m if len(m) >= 4 else None


def main():
    if os.geteuid():
        print("soak: needs root (namespaces, XDP, bpf(2))")
        return 1
    for exe in (BLOOMTAP, SOAKGEN):
        if not os.access(exe, os.X_OK):
            print("soak: %s is not built (make soak builds it)" % exe)
            return 1
    work = tempfile.mkdtemp(prefix="bloomtap-soak-")
    archive = os.path.join(work, "archive")
    os.mkdir(archive)
    soak, gen, threads = Soak(archive), None, []
    results, rc = [], 1
    lab_up()
    try:
        enter_netns(NS_B)
        soak.start_agent()
        t_start = time.monotonic()
        gen = subprocess.Popen([SOAKGEN, NS_A, IF_A, str(SECONDS), os.path.join(work, "seq")],
                               stdout=subprocess.PIPE, text=True)
        reader = threading.Thread(target=soak.read_generator, args=(gen,))
        reader.start()
        while soak.frame is None and gen.poll() is None:
            time.sleep(0.05)
        if soak.frame is None:
            raise RuntimeError("soakgen did not start")
        seq = array.array("I")
        with open(os.path.join(work, "seq"), "rb") as f:
            seq.fromfile(f, SEQ_LEN)
        seq = seq.tolist()
        rng = random.Random(0x50a6)
        for target, args in ((soak.poll_heavy, ()), (soak.watch, ()),
                             (soak.tracer, (seq, "recent", RECENT_AGE, random.Random(1))),
                             (soak.tracer, (seq, "old", OLD_AGE, random.Random(2)))):
            threads.append(threading.Thread(target=target, args=args))
            threads[-1].start()
        downtime = []
        for k in (1, 2):
            while time.monotonic() - t_start < SECONDS * k / 3 + rng.uniform(-5, 5):
                time.sleep(0.5)
            downtime.append(soak.kill_agent())
            print("soak: agent killed and started again at %.0f s (%.1f s down)" %
                  (time.monotonic() - t_start, downtime[-1]), flush=True)
        gen.wait()
        reader.join()
        t_end = soak.progress[-1][0]
        time.sleep(OLD_AGE[1] + 1)      # the last samples' turn to be traced
        soak.stop.set()
        for t in threads:
            t.join()
        # the interval still open holds the last packets
        ans = soak.request("heavy", "/api/v1/heavy?n=100000")
        if ans:
            soak.take_intervals(ans, "current")
        stats = json.loads(sh(BLOOMTAP, "-j", "stats", "--instance", IF_B))
        metrics = http("/metrics")[1].decode()
        soak.agent.send_signal(signal.SIGTERM)
        soak.agent.wait(timeout=30)
        rx = json.loads(sh("ip", "-s", "-j", "link", "show", IF_B))[0]["stats64"]["rx"]["packets"]
        rc = report(soak, seq, stats, metrics, rx, downtime, t_end - t_start, results)
    except Exception as e:      # a broken lab is a failed soak, and cleaned up
        print("soak: FAILED: %s" % e)
        rc = 1
    finally:
        soak.stop.set()
        if gen and gen.poll() is None:
            gen.kill()
        if soak.agent and soak.agent.poll() is None:
            soak.agent.kill()
        sh(BLOOMTAP, "detach", IF_B, check=False)
        lab_down()
        if rc == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("soak: logs and archive kept in %s" % work)
    return rc


def report(soak, seq, stats, metrics, rx, downtime, seconds, results):
    checks = []

    def check(what, ok, detail=""):
        checks.append(ok)
        print("  %-5s %s%s" % ("ok" if ok else "FAIL", what, " (%s)" % detail if detail else ""))

    sent = soak.sent_done
    counted = stats["packets"]
    print("\nsoak: %.0f s of traffic, %d packets (%.2f Mpps), agent killed and restarted %d "
          "times (down %s s)" % (seconds, sent, sent / seconds / 1e6, len(downtime),
                                 ", ".join("%.1f" % d for d in downtime)))
    check("every packet sent was counted", counted == sent and rx == sent,
          "sent %d, received by the veth %d, counted %d" % (sent, rx, counted))

    by = collections.Counter()
    missed = []
    for kind, n, t, ans in soak.samples:
        src = {w["source"] for w in ans.get("windows", [])}
        by[(kind, "archive" if src == {"archive"} else "live")] += 1
        if not ans["seen"]:
            missed.append((kind, n, t))
    parts = int(seconds // 30)
    covered = {int((t - soak.progress[0][0]) // 30) for _, _, t, _ in soak.samples}
    check("sampled packets traced, all seen", soak.samples and not missed,
          "%d traced: %s; %d not seen%s" % (
              len(soak.samples), ", ".join("%s %s %d" % (k, s, c) for (k, s), c in sorted(by.items())),
              len(missed), ": %s" % missed[:5] if missed else ""))
    check("samples from every 30 s of the run", all(p in covered for p in range(parts)),
          "%d of %d parts" % (len([p for p in range(parts) if p in covered]), parts))

    problems, heavy, reported, extra, worst = check_heavy(seq, soak.intervals, counted)
    check("heavy flows of each interval match the ground truth", not problems,
          "%d intervals, %d heavy flows all reported, %d reported, %d of them under the "
          "threshold within the bound, worst overestimate %.1e of the interval%s" % (
              len(soak.intervals), heavy, reported, extra, worst,
              "; " + "; ".join(problems[:5]) if problems else ""))

    rss = []
    for inc in range(1, soak.incarnation + 1):
        m = flat(soak.monitor, inc, soak.progress[-1][0])
        if not m:
            continue
        rss.append((m[0][2], m[-1][2]))
        heap = [x[3] for x in m]
        fds = [x[4] for x in m]
        # RSS counts the ring's shared pages a trace touches, then unmaps;
        # a leak is private memory (RssAnon) or descriptors that only grow
        check("agent %d: memory and descriptors flat after warm-up" % inc,
              max(heap) - heap[0] <= 1024 and fds[-1] <= fds[0] + 2,
              "over %.0f s: private memory %d -> %d KiB (max %d), RSS %d -> %d KiB, "
              "descriptors %d -> %d (%d..%d)" % (
                  m[-1][1] - m[0][1], heap[0], heap[-1], max(heap), m[0][2], m[-1][2],
                  fds[0], fds[-1], min(fds), max(fds)))
    for inc in range(1, soak.incarnation + 1):
        m = [x for x in soak.monitor if x[0] == inc]
        print("        agent %d, private memory (KiB) by age: %s" % (inc, ", ".join(
            "%.0fs %d" % (x[1], x[3]) for x in m[::max(1, len(m) // 10)])))
    # windows closed while traffic flowed turn at their design load; with
    # the agent down, the ready ones run out and the current one takes the
    # rest (flagged overloaded, every digest still in a filter)
    def epoch(iso):
        return datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    t_end = soak.epoch + soak.progress[-1][0]
    downs = [(soak.epoch + a, soak.epoch + b + 2) for a, b in soak.downs]
    wins = [w for f in json.loads(sh(BLOOMTAP, "-j", "archive", soak.archive))
            for w in f["windows"] if w["end"] and epoch(w["end"]) < t_end]
    over = [w for w in wins if w["overloaded"]]
    stray = [w["window"] for w in wins if w["packets"] < DESIGN_LOAD or (
        w["overloaded"] and not any(a <= epoch(w["end"]) and epoch(w["start"]) <= b
                                    for a, b in downs))]
    check("windows turned at their design load", wins and not stray,
          "%d archived windows closed while traffic flowed, %d at %d packets; %d overloaded "
          "while the agent was down (%s packets)%s" % (
              len(wins), len(wins) - len(over), DESIGN_LOAD, len(over),
              ", ".join(str(w["packets"]) for w in over) or "-",
              "; not so: %s" % stray[:5] if stray else ""))
    sizes = [m[5] for m in soak.monitor]
    end_size = sum(os.path.getsize(os.path.join(soak.archive, n)) for n in os.listdir(soak.archive))
    # pruning follows each file written: the directory may pass the budget
    # by the file just written (64 windows of 256 KiB at most) until then
    check("archive within its budget", end_size <= BUDGET and max(sizes) <= BUDGET + (17 << 20),
          "%.0f MiB at the end, at most %.0f MiB, budget %.0f MiB" % (
              end_size / 2**20, max(sizes) / 2**20, BUDGET / 2**20))
    errors = []
    for path in soak.logs:
        with open(path) as f:
            errors += [l.strip() for l in f if "error" in l.lower()]
    check("no error logged", not errors and not soak.failures,
          "; ".join((errors + soak.failures)[:5]))
    q = soak.queries
    print("\nfigures: packets %d, %.2f Mpps, queries answered: trace %d, heavy %d "
          "(refused while down: %d), restarts %d, RSS first agent %s KiB, last %s KiB" % (
              sent, sent / seconds / 1e6, q["trace"], q["heavy"],
              q["trace refused while down"] + q["heavy refused while down"], len(downtime),
              "%d -> %d" % rss[0] if rss else "?", "%d -> %d" % rss[-1] if rss else "?"))
    for line in metrics.splitlines():
        if line.startswith(("bloomtap_spie_windows_", "bloomtap_spie_no_ready",
                            "bloomtap_archive_files", "bloomtap_archive_bytes")):
            print("  " + line)
    print("\n%d passed, %d failed" % (checks.count(True), checks.count(False)))
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
