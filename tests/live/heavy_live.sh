#!/usr/bin/env bash
# Heavy flows on a live interface, the nomination threshold after a quiet
# interval: 20 kB of pings make an interval, then in the first few ms of
# the next one 20,000 one-packet flows and 5 heavy flows arrive (an
# attack's ramp-up). Every heavy flow must be reported, no nomination
# lost, and the flood must not have filled the flow memory (the datapath
# nominates a one-packet flow only while it is at least f/2 of its CPU's
# bytes so far: at most 2/f of them a CPU).
source "$(dirname "$0")/../lib/lib.sh"
need_root "heavy_live"

ID=$$
NSA=bt-hl-a-$ID NSB=bt-hl-b-$ID
VA=bthla$ID VB=bthlb$ID
FLOWGEN=${FLOWGEN:-$TOP/${BT_BUILD:-.output}/tests/flowgen}
[ -x "$FLOWGEN" ] || FLOWGEN=$TOP/.output/tests/flowgen
cleanup() {
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
}
trap cleanup EXIT INT TERM

veth_pair "$NSA" "$VA" "$NSB" "$VB" 12 || { fail "namespaces"; summary; exit 1; }
check "attach (fraction 0.001, the default)" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
MAC=$(ip -n "$NSB" -j link show "$VB" | json_get '[0]["address"]')

# the quiet interval
check "an interval starts" "$BLOOMTAP" heavy --instance "$VB" --flip
in_ns "$NSA" ping -q -c 20 -i 0.01 -s 1000 198.18.12.2 >/dev/null
check "the quiet interval ends" "$BLOOMTAP" heavy --instance "$VB" --flip
QUIET=$("$BLOOMTAP" -j heavy --instance "$VB" | python3 -c '
import json,sys; d=json.load(sys.stdin); print(max([f["interval_bytes"] for f in d if f["interval"] == "last"] or [0]))')
echo "        the quiet interval: ${QUIET} bytes"

# the burst, right after the flip, from one CPU: a veth runs the peer's XDP
# on the sending CPU, so the bound below is 2/f for one CPU whatever the
# machine's size. (How long the burst takes does not matter: the threshold
# follows the bytes the CPU has seen, not the time.)
CPU=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
OUT=$(in_ns "$NSA" taskset -c "$CPU" "$FLOWGEN" "$VA" "$MAC" 198.18.12.2 20000 5 400 1000)
echo "        $OUT (CPU $CPU)"
check "the burst's interval ends" "$BLOOMTAP" heavy --instance "$VB" --flip
H=$("$BLOOMTAP" -j heavy --instance "$VB" -n 100 2>/dev/null)
eq "all 5 heavy flows reported" "$(python3 -c '
import json,sys
d = [f for f in json.load(sys.stdin) if f["interval"] == "last"]
print(sorted(f["src"] for f in d if f["src"].startswith("198.18.255.")))' <<<"$H")" \
	"['198.18.255.0', '198.18.255.1', '198.18.255.2', '198.18.255.3', '198.18.255.4']"
eq "each of them exactly 400 packets and 400 frames of 1000 bytes" "$(python3 -c '
import json,sys
d = [f for f in json.load(sys.stdin) if f["interval"] == "last" and f["src"].startswith("198.18.255.")]
print(sorted({(f["packets"], f["bytes"]) for f in d}))' <<<"$H")" "[(400, 400000)]"
eq "no nomination lost" "$(python3 -c '
import json,sys; d=[f for f in json.load(sys.stdin) if f["interval"] == "last"]
print(max([f["lost_nominations"] for f in d] or [-1]))' <<<"$H")" 0
NOM=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["nominated"]')
# 2/f = 2000 one-packet flows on the one CPU, the 5 heavy ones, and the
# quiet interval's pings: far below the 20,005 flows sent
check "the flood nominated at most 2/f flows on its CPU ($NOM nominated of 20,005 flows)" \
	test "$NOM" -le $(( 2000 + 5 + 40 ))
FULL=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["flow_memory_full"]')
eq "flow_memory_full" "$FULL" 0

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
