#!/usr/bin/env bash
# A collector named by a host name whose resolver answers after 5 s (issue
# 36.6): the agent resolves the name again at each reconnect (for UDP,
# after each refused datagram), inside an interval's export, under its
# lock. The windows must keep their period and the scrapes must answer
# meanwhile; the export waits for no answer (the message is counted), and
# takes the address once it comes. The resolver is a DNS server of the test's in the agent's network
# namespace; the agent sees it through a resolv.conf bind-mounted in a
# mount namespace of its own.
source "$(dirname "$0")/../lib/lib.sh"
need_root "slow resolver"

ID=$$
NSA=bt-sr-a-$ID NSB=bt-sr-b-$ID
VA=btsa$ID VB=btsb$ID
PORT=9488
NAME=collector.bloomtap.test
TMP=$(mktemp -d)
AGENT= DNS=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	[ -n "$DNS" ] && kill "$DNS" 2>/dev/null
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" 25 || { fail "namespaces"; summary; exit 1; }
get() { in_ns "$NSB" curl -s -m 20 "$@"; }

# the DNS server: NAME is 127.0.0.1 (A; no AAAA); while $TMP/slow exists,
# each answer comes 5 s late (a thread a query: none waits for another)
# (nsenter itself in the background, not in_ns: $! must be the server's)
nsenter --net=/var/run/netns/"$NSB" python3 - "$NAME" "$TMP/slow" "$TMP/queries" <<'PY' > "$TMP/dns.log" 2>&1 &
import os, socket, struct, sys, threading, time
name, slow, log = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
print("listening", flush=True)

def answer(q, peer):
    late = os.path.exists(slow)
    if late:
        time.sleep(5)
    qid, = struct.unpack("!H", q[:2])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode())
        i += 1 + q[i]
    qtype, = struct.unpack("!H", q[i + 1:i + 3])
    question = q[12:i + 5]
    ours = ".".join(labels).lower() == name
    an = struct.pack("!HHHIH4s", 0xc00c, 1, 1, 0, 4, bytes([127, 0, 0, 1])) if ours and qtype == 1 else b""
    flags = 0x8180 if ours else 0x8183
    s.sendto(struct.pack("!HHHHHH", qid, flags, 1, 1 if an else 0, 0, 0) + question + an, peer)
    with open(log, "a") as f:
        f.write("%s %d %s\n" % (".".join(labels), qtype, "late" if late else "at once"))

while True:
    q, peer = s.recvfrom(512)
    threading.Thread(target=answer, args=(q, peer), daemon=True).start()
PY
DNS=$!
wait_for "the DNS server listens" 30 grep -q listening "$TMP/dns.log"
# glibc waits 30 s for an answer (its default, 5 s, would give up first)
printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' > "$TMP/resolv.conf"
check "the name resolves through it" in_ns "$NSB" unshare -m sh -c \
	"mount --bind '$TMP/resolv.conf' /etc/resolv.conf && getent ahostsv4 $NAME | grep -q 127.0.0.1"

# the collector: a UDP port nobody listens on, so that every datagram after
# the first is refused and the name is resolved again; intervals of 0.5 s,
# windows of 100 ms
nsenter --net=/var/run/netns/"$NSB" unshare -m sh -c "mount --bind '$TMP/resolv.conf' /etc/resolv.conf &&
	exec '$BLOOMTAP' run '$VB' --listen 127.0.0.1:$PORT --interval 0.5 --window 0.1 \
	--archive '$TMP/archive' --ipfix $NAME:4739" > "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 get "127.0.0.1:$PORT/healthz"
eq "agent up" "$(get 127.0.0.1:$PORT/healthz)" "ok"

# ---- the resolver turns slow: 8 s of traffic, scrapes every 0.2 s ----
touch "$TMP/slow"
START=$(date +%s.%N)
in_ns "$NSA" ping -q -c 80 -i 0.1 198.18.25.2 >/dev/null 2>&1 &
PING=$!
SCRAPES=0 FAILED=0 SLOWEST=0
END=$(( $(date +%s) + 8 ))
while [ "$(date +%s)" -lt "$END" ]; do
	t0=$(date +%s%N)
	in_ns "$NSB" curl -sf -m 3 -o /dev/null "127.0.0.1:$PORT/metrics" || FAILED=$((FAILED + 1))
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -gt $SLOWEST ] && SLOWEST=$ms
	SCRAPES=$((SCRAPES + 1))
	sleep 0.2
done
wait $PING
STOP=$(date +%s.%N)
LATE=$(grep -c late "$TMP/queries" 2>/dev/null || echo 0)
check "the name was asked again while slow ($LATE late answers)" test "$LATE" -ge 1
eq "every scrape answered within curl's 3 s ($SCRAPES scrapes, the slowest $SLOWEST ms)" "$FAILED" 0
# the windows that began and ended while the resolver was slow
read -r NW MEAN MAX < <("$BLOOMTAP" -j windows --instance "$VB" | python3 -c '
import json, sys, datetime
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
start, stop = float(sys.argv[1]), float(sys.argv[2])
d = [t(w["end"]) - t(w["start"]) for w in json.load(sys.stdin)
     if w["start"] and w["end"] and start < t(w["start"]) and t(w["end"]) < stop]
print(len(d), "%.3f" % (sum(d) / len(d) if d else 0), "%.3f" % max(d or [99]))' "$START" "$STOP")
echo "        windows while the resolver was slow: $NW, mean $MEAN s, longest $MAX s"
# margins from the configuration: windows of 0.1 s, turned by a 10 ms loop;
# a window held by one resolution would last the resolver's 5 s. The bound
# is 10 windows, a fifth of that: beside two CPU hogs under ASan the
# longest window was 0.485 s (3 windows, the former bound, failed there)
check "windows kept turning ($NW in 8 s; at least half of 8 / 0.1)" test "${NW:-0}" -ge 40
check "no window held past 10 x 100 ms, a fifth of the resolver's delay ($MAX s)" \
	python3 -c "import sys; sys.exit(not $MAX <= 1.0)"
ERRORS=$(get 127.0.0.1:$PORT/metrics | awk '/^bloomtap_ipfix_errors_total\{/ { s += $2 } END { print s + 0 }')
check "the messages that waited for no answer were counted ($ERRORS not sent)" test "$ERRORS" -ge 1

# stopped while a resolution may be under way: it is cancelled or waited for
kill -TERM "$AGENT"; wait "$AGENT"; RC=$?; AGENT=
rm -f "$TMP/slow"
eq "the agent stops cleanly (under ASan, no leak)" "$RC" 0
summary
[ $FAIL -eq 0 ]
