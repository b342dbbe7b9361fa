#!/usr/bin/env bash
# Faults: each gives a clear error or is recovered from, never a crash,
# never a corrupt archive, never a lost counter or sealed window.
source "$(dirname "$0")/../lib/lib.sh"
need_root "faults"

ID=$$
NSA=bt-f-a-$ID NSB=bt-f-b-$ID
VA=btfa$ID VB=btfb$ID
TMP=$(mktemp -d)
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill -9 "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	for i in "$VB" "$VA" "flt-$ID" "flt2-$ID" "flt3-$ID"; do "$BLOOMTAP" detach --instance "$i" >/dev/null 2>&1; done
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
crashed() { [ "$1" -ge 128 ]; }	# killed by a signal

# no ARP on the link: "the program counts every packet" counts the pings
pair() { veth_pair "$NSA" "$VA" "$NSB" "$VB" 9 && static_neighbours "$NSA" "$VA" "$NSB" "$VB" 9; }

# meta_abi PIN N: rewrites the pinned meta's abi_version (bytes 8..11) to N,
# as an instance of another bloomtap version would have it
meta_abi() {
	local v
	v=$(bpftool -j map lookup pinned "$1" key 0 0 0 0 | python3 -c '
import json, struct, sys
v = [int(b, 16) for b in json.load(sys.stdin)["value"]]
v[8:12] = struct.pack("<I", int(sys.argv[1]))
print(" ".join(str(b) for b in v))' "$2") && bpftool map update pinned "$1" key 0 0 0 0 value $v
}

# ---- the interface goes away while attached ----
pair || { fail "namespaces"; summary; exit 1; }
check "attach" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
in_ns "$NSA" ping -q -c 3 -i 0.05 198.18.9.2 >/dev/null
P=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')
ip -n "$NSB" link del "$VB"
check "interface removed: status says so" bash -c "'$BLOOMTAP' status | grep '^$VB ' | grep -q 'interface gone'"
eq "interface removed: counters still readable" "$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')" "$P"
check "interface removed: detach cleans up" "$BLOOMTAP" detach --instance "$VB"
check "no pins left" test ! -e /sys/fs/bpf/bloomtap/$VB

# ---- the namespace goes away with the attached interface in it ----
cleanup_netns; pair
check "attach again" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
ip netns del "$NSB"
# the kernel dismantles a namespace asynchronously: give it up to 5 s
for i in $(seq 50); do "$BLOOMTAP" status | grep "^$VB " | grep -q 'interface gone' && break; sleep 0.1; done
check "namespace deleted: status says the interface is gone" bash -c "'$BLOOMTAP' status | grep '^$VB ' | grep -q 'interface gone'"
check "namespace deleted: detach cleans up" "$BLOOMTAP" detach --instance "$VB"
cleanup_netns

# ---- bpffs unmounted (in a private mount namespace) ----
# a mount namespace of its own without the host's bpffs is what ip netns
# exec gives: every command that reads pins refuses, naming nsenter
check "replay an instance" "$BLOOMTAP" replay --instance "flt-$ID" "$PCAPS/dnscap__dns.pcap"
OUT=$(unshare -m bash -c "umount /sys/fs/bpf && '$BLOOMTAP' stats --instance 'flt-$ID'" 2>&1); RC=$?
check "bpffs gone: stats refuses, exit $RC, naming nsenter" bash -c "[ $RC -eq 1 ] && grep -q 'nsenter --net=' <<<\"\$0\"" "$OUT"
OUT=$(unshare -m bash -c "umount /sys/fs/bpf && '$BLOOMTAP' status" 2>&1); RC=$?
check "bpffs gone: status refuses, exit $RC, naming nsenter" bash -c "[ $RC -eq 1 ] && grep -q 'nsenter --net=' <<<\"\$0\"" "$OUT"
eq "bpffs gone outside: the instance is intact" "$("$BLOOMTAP" -j stats --instance "flt-$ID" | json_get '["packets"]')" 133

# ---- an instance made by another bloomtap version ----
# Another ABI in the meta, or a pin this version expects and that one did not
# make: refused with advice, never made over; detach removes it.
check "replay an instance to age" "$BLOOMTAP" replay --instance "flt3-$ID" "$PCAPS/dnscap__dns.pcap"
META=/sys/fs/bpf/bloomtap/flt3-$ID/meta
check "meta rewritten to ABI 3" meta_abi "$META" 3
expect_fail "another ABI: stats refuses, says what to do" "made by an incompatible bloomtap; remove it" \
	"$BLOOMTAP" stats --instance "flt3-$ID"
expect_fail "another ABI: replay does not make it over" "made by an incompatible bloomtap" \
	"$BLOOMTAP" replay --instance "flt3-$ID" "$PCAPS/dnscap__dns.pcap"
check "another ABI: detach removes it" "$BLOOMTAP" detach --instance "flt3-$ID"
check "replay a fresh one" "$BLOOMTAP" replay --instance "flt3-$ID" "$PCAPS/dnscap__dns.pcap"
rm "/sys/fs/bpf/bloomtap/flt3-$ID/fc"
expect_fail "a pin missing (an older version's instance): refused" "made by an incompatible bloomtap" \
	"$BLOOMTAP" replay --instance "flt3-$ID" "$PCAPS/dnscap__dns.pcap"
check "a pin missing: status names it incompatible" bash -c \
	"'$BLOOMTAP' status | grep '^flt3-$ID ' | grep -q 'made by an incompatible bloomtap'"
check "a pin missing: detach removes it" "$BLOOMTAP" detach --instance "flt3-$ID"
check "no pins left of it" test ! -e "/sys/fs/bpf/bloomtap/flt3-$ID"
# the agent adopting an interface's instance of another ABI: refuses, and
# makes nothing over it
pair
check "attach for the agent" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
META=/sys/fs/bpf/bloomtap/$VB/meta
meta_abi "$META" 3
OUT=$(timeout 20 nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --listen 127.0.0.1:19477 \
	--archive "$TMP/arch-abi" 2>&1); RC=$?
check "agent on an instance of another ABI: a clear error (exit $RC)" bash -c \
	"[ $RC -ne 0 ] && [ $RC -ne 124 ] && grep -q 'another map layout' <<<\"\$0\"" "$OUT"
eq "and it is left as it was (ABI 3)" "$(bpftool -j map lookup pinned "$META" key 0 0 0 0 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["value"][8], 16))')" 3
eq "its exit status: 3, which the unit does not restart on" "$RC" 3
# --recreate-incompatible (the packaged unit's): detached, attached anew,
# and the log says what was lost and what was kept; the old instance's
# drop program leaves the host's table (which would keep it, and its maps)
OLD_DROP=$(bpftool -j prog show pinned "/sys/fs/bpf/bloomtap/$VB/prog_drop" 2>/dev/null | json_get '["id"]')
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --recreate-incompatible \
	--listen 127.0.0.1:19477 --archive "$TMP/arch-abi" >"$TMP/recreate.log" 2>&1 &
AGENT=$!
wait_for "--recreate-incompatible: the agent serves" 30 in_ns "$NSB" curl -sf -m 5 127.0.0.1:19477/healthz &&
	ok "--recreate-incompatible: the agent serves"
check "it says what went with the old instance, and what stays" grep -q \
	"$VB: the pinned instance (ABI 3, made .*Lost with it: its live SPIE windows.*kept: the archive $TMP/arch-abi" \
	"$TMP/recreate.log"
ABI=$(sed -n 's/^#define BT_ABI_VERSION \([0-9]*\).*/\1/p' "$TOP/include/bloomtap.h")
eq "the instance is made anew, of this ABI" "$(bpftool -j map lookup pinned "$META" key 0 0 0 0 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["value"][8], 16))')" "$ABI"
in_ns "$NSA" ping -q -c 3 -i 0.05 198.18.9.2 >/dev/null
check "and counts" bash -c "[ \$(nsenter --net=/var/run/netns/$NSB curl -s -m 5 127.0.0.1:19477/metrics | awk -v k='bloomtap_packets_total{interface=\"$VB\",direction=\"ingress\"}' '\$1 == k {print \$2}') -ge 3 ]"
if [ -n "$OLD_DROP" ]; then
	wait_for "the old instance's drop program (id $OLD_DROP) is gone" 30 \
		bash -c "! bpftool prog show id $OLD_DROP" && ok "the old instance's drop program (id $OLD_DROP) is gone"
fi
kill -TERM "$AGENT"; wait "$AGENT"; AGENT=
check "detach removes it" "$BLOOMTAP" detach --instance "$VB"
# only an older ABI's instance nobody holds is made anew: a newer one's (a
# downgrade, or a newer agent beside this one) is refused, saying so
check "attach (then made a newer ABI's)" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
meta_abi "$META" $((ABI + 1))
OUT=$(timeout 20 nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --recreate-incompatible \
	--listen 127.0.0.1:19477 --archive "$TMP/arch-abi" 2>&1); RC=$?
eq "--recreate-incompatible on a newer ABI's instance: refused, exit 3" "$RC" 3
check "it says a newer bloomtap made it: upgrade, or detach" grep -q \
	"$VB: the pinned instance was made by a newer bloomtap (ABI $((ABI + 1)), .*Upgrade this bloomtap, or 'bloomtap detach $VB'" <<<"$OUT"
eq "and the newer instance is left as it was" "$(bpftool -j map lookup pinned "$META" key 0 0 0 0 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["value"][8], 16))')" $((ABI + 1))
check "detach removes it" "$BLOOMTAP" detach --instance "$VB"
# an older ABI's instance a running agent holds (the DaemonSet's beside
# the package's): refused, naming that agent
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --listen 127.0.0.1:19477 \
	--archive "$TMP/arch-held" >"$TMP/held.log" 2>&1 &
AGENT=$!
wait_for "an agent holds the instance" 30 in_ns "$NSB" curl -sf -m 5 127.0.0.1:19477/healthz &&
	ok "an agent holds the instance"
meta_abi "$META" 3
OUT=$(timeout 20 nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --recreate-incompatible \
	--listen 127.0.0.1:19478 --archive "$TMP/arch-abi" 2>&1); RC=$?
eq "--recreate-incompatible on an instance an agent holds: refused, exit 3" "$RC" 3
check "it names the holder (PID $AGENT)" grep -q \
	"$VB: the pinned instance (ABI 3, .*held by another bloomtap agent (PID $AGENT), running" <<<"$OUT"
eq "and the held instance is left as it was (ABI 3)" "$(bpftool -j map lookup pinned "$META" key 0 0 0 0 | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["value"][8], 16))')" 3
check "and its agent runs on" kill -0 "$AGENT"
kill -TERM "$AGENT"; wait "$AGENT"; AGENT=
check "detach removes it" "$BLOOMTAP" detach --instance "$VB"
cleanup_netns
# the same ABI, one map of another shape (wdrops, which the agent's old
# hand-kept list of 14 maps did not hold): every map the object lists is
# compared, so the agent refuses it as well
pair
check "attach for the agent (then one map replaced)" in_ns "$NSB" "$BLOOMTAP" attach "$VB"
rm "/sys/fs/bpf/bloomtap/$VB/wdrops"
bpftool map create "/sys/fs/bpf/bloomtap/$VB/wdrops" type array key 4 value 8 entries 4 name wdrops
OUT=$(timeout 20 nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --listen 127.0.0.1:19477 \
	--archive "$TMP/arch-layout" 2>&1); RC=$?
check "agent on an instance with one map of another layout: a clear error (exit $RC)" bash -c \
	"[ $RC -ne 0 ] && [ $RC -ne 124 ] && grep -q 'another map layout' <<<\"\$0\"" "$OUT"
check "detach removes it" "$BLOOMTAP" detach --instance "$VB"
cleanup_netns

# ---- map memory exhausted ----
OUT=$("$BLOOMTAP" replay --instance "flt2-$ID" --window-bits 64G --windows 64 "$PCAPS/dnscap__dns.pcap" 2>&1); RC=$?
check "huge --window-bits: clear error, exit $RC" bash -c "[ $RC -eq 1 ] && grep -qE 'cannot allocate the maps|more blocks than' <<<\"\$0\"" "$OUT"
# more than this machine's memory (a quarter more), in 63 windows of a power
# of two bits (at most 2^36 bits a window, 2^27 blocks of 512 bits: the
# array holds < 2^32 blocks)
MEM=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
WB=4096; while [ $((63 * WB / 8)) -lt $((MEM + MEM / 4)) ]; do WB=$((WB * 2)); done
if [ "$WB" -le $((1 << 33)) ]; then
	OUT=$("$BLOOMTAP" replay --instance "flt2-$ID" --window-bits "$WB" --windows 63 "$PCAPS/dnscap__dns.pcap" 2>&1); RC=$?
	check "memory beyond the machine ($((63 * WB / 8 >> 30)) GiB of windows, $((MEM >> 30)) GiB here): clear error (exit $RC)" \
		bash -c "[ $RC -eq 1 ] && grep -q 'cannot allocate the maps' <<<\"\$0\"" "$OUT"
	check "nothing left of the failed instance" test ! -e "/sys/fs/bpf/bloomtap/flt2-$ID"
else
	echo "  SKIP  memory beyond the machine: $((MEM >> 30)) GiB here is more than 64 windows can ask for"
	SKIP=$((SKIP + 1))
fi

# ---- the archive's disk fills up (a 256 KiB tmpfs) ----
mkdir -p "$TMP/small"
OUT=$(unshare -m bash -c "
	mount -t tmpfs -o size=256k tmpfs '$TMP/small' || exit 99
	for i in \$(seq 12); do '$BLOOMTAP' replay --instance 'flt-$ID' '$PCAPS/ndpi__gnutella.pcap' >/dev/null 2>&1
		'$BLOOMTAP' windows --instance 'flt-$ID' --rotate --archive '$TMP/small' || echo ROTATE-FAILED-\$?; done
	'$BLOOMTAP' trace --archive '$TMP/small' --hex 4500001400000000400000000102030405060708; echo TRACE-\$?
	ls -a '$TMP/small' | grep -c '^\\.tmp-' | sed 's/^/TMPFILES-/'
" 2>&1)
check "disk full: the write fails with a clear error" grep -q "No space left on device" <<<"$OUT"
check "disk full: no archive file is damaged" bash -c "! grep -q 'archive file .*skipped' <<<\"\$0\"" "$OUT"
check "disk full: trace of the archive still answers" grep -q "TRACE-1" <<<"$OUT"
check "disk full: no temporary file left behind" grep -q "TMPFILES-0" <<<"$OUT"

# ---- the agent killed with SIGKILL while sealing, then restarted ----
# Each agent stops itself at a named step of its turn (BLOOMTAP_TEST_KILL,
# tests only) after it has archived at least one file: before renaming its
# second or third file, or between a file and the mark that follows it.
pair
ARCH=$TMP/archive
archived() { "$BLOOMTAP" -j archive "$ARCH" 2>/dev/null | python3 -c '
import json, sys; print(len({w["window"] for f in json.load(sys.stdin) for w in f["windows"]}))' 2>/dev/null || echo 0; }
PREV=0 GREW=0 KILLED=0
for kp in write:2 archived:1 write:3 archived:2; do
	{ BLOOMTAP_TEST_KILL=$kp timeout 60 nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run \
		"$VB" --window 0.02 --interval 0.2 --archive "$ARCH" --archive-flush 0.05 \
		--listen 127.0.0.1:9479 > "$TMP/agent.log" 2>&1 & } 2>/dev/null
	AGENT=$!
	in_ns "$NSA" ping -q -c 5 -i 0.02 198.18.9.2 >/dev/null
	{ wait $AGENT; RC=$?; } 2>/dev/null; AGENT=
	[ $RC -eq 137 ] && KILLED=$((KILLED + 1))
	N=$(archived)
	[ "$N" -gt "$PREV" ] && GREW=$((GREW + 1))
	echo "        agent stopped at $kp (exit $RC): $N windows archived"
	PREV=$N
done
eq "SIGKILLed agent: each of the 4 stopped at its step" "$KILLED" 4
eq "SIGKILLed agent: each of the 4 archived windows no agent before it had" "$GREW" 4
"$BLOOMTAP" archive "$ARCH" > "$TMP/archive.out" 2>&1
eq "SIGKILLed agent: archive finds every file valid (exit)" "$?" 0
"$BLOOMTAP" trace --archive "$ARCH" --hex 4500001400000000400000000102030405060708 > "$TMP/trace.out" 2>&1
eq "SIGKILLed agent: trace of a packet never sent reads every file (exit 1: not seen)" "$?" 1
eq "SIGKILLed agent: no file reported damaged" "$(grep -c 'archive file' "$TMP/trace.out")" 0
P=$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')
in_ns "$NSA" ping -q -c 5 -i 0.02 198.18.9.2 >/dev/null
eq "SIGKILLed agent: the program still counts every packet" \
	"$("$BLOOMTAP" -j stats --instance "$VB" | json_get '["packets"]')" "$((P + 5))"

# ---- two tools querying while the agent rotates fast ----
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --window 0.01 --interval 0.1 \
	--archive "$ARCH" --listen 127.0.0.1:9479 > "$TMP/agent.log" 2>&1 &
AGENT=$!
( for i in $(seq 30); do "$BLOOMTAP" trace --instance "$VB" --archive "$ARCH" "$PCAPS/dnscap__dns.pcap" >/dev/null 2>&1; echo $?; done ) > "$TMP/q1" &
Q1=$!
( for i in $(seq 30); do "$BLOOMTAP" -j heavy --instance "$VB" >/dev/null 2>&1; echo $?; "$BLOOMTAP" windows --instance "$VB" >/dev/null 2>&1; echo $?; done ) > "$TMP/q2" &
Q2=$!
in_ns "$NSA" ping -q -c 40 -i 0.02 198.18.9.2 >/dev/null
wait $Q1 $Q2
# dnscap's packets never crossed VB: every trace answers "not seen" (1),
# never an error (2); heavy and windows answer (0)
eq "concurrent traces: each answered not seen (exit codes)" "$(sort "$TMP/q1" | uniq -c | xargs)" "30 1"
eq "concurrent heavy and windows: each answered (exit codes)" "$(sort "$TMP/q2" | uniq -c | xargs)" "60 0"
kill -TERM $AGENT; wait $AGENT; RC=$?; AGENT=
eq "the agent stopped cleanly" "$RC" 0
[ $RC -eq 0 ] || sed 's/^/        /' "$TMP/agent.log"

# ---- secrets: the hash keys appear in no output ----
# hash_key at offset 48, 16 bytes (include/bloomtap.h), and the 13 words
# derived from it that the program holds (cfg_keys, in its .bss)
KEYS=$(bpftool -j map lookup pinned /sys/fs/bpf/bloomtap/$VB/meta key 0 0 0 0 | python3 -c '
import json,sys; v=[int(b,16) for b in json.load(sys.stdin)["value"]]
print(bytes(v[48:56]).hex(), bytes(v[56:64]).hex())')
BSS=$(bpftool -j prog show pinned /sys/fs/bpf/bloomtap/$VB/prog | python3 -c '
import json, subprocess, sys
for i in json.load(sys.stdin)["map_ids"]:
    m = json.loads(subprocess.check_output(["bpftool", "-j", "map", "show", "id", str(i)]))
    if m["name"].endswith(".bss"): print(i)')
KEYS="$KEYS $(bpftool -j map dump id "$BSS" | python3 -c '
import json, struct, sys
k = json.load(sys.stdin)[0]["formatted"]["value"][".bss"][0]["cfg_keys"]
words = k["addr"] + [k["flow"]] + k["spie"] + [k["fin_flow"], k["fin_spie"]] + k["watch"]
print(" ".join(struct.pack("<Q", w).hex() for w in words))')"
eq "key words to look for (2 of the key, 13 derived)" "$(wc -w <<<"$KEYS")" 15
{ "$BLOOMTAP" -j status; "$BLOOMTAP" -j stats --instance "$VB"; "$BLOOMTAP" -j heavy --instance "$VB"; "$BLOOMTAP" -j windows --instance "$VB"
  "$BLOOMTAP" -j trace --instance "$VB" --archive "$ARCH" "$PCAPS/dnscap__dns.pcap"; cat "$TMP/agent.log"
  cat "$ARCH"/*.btw | head -c 1000000 | od -An -tx1 | tr -d ' \n'; } > "$TMP/outputs" 2>&1
LEAKS=0
for k in $KEYS; do
	be=$(python3 -c "print(bytes.fromhex('$k')[::-1].hex())")
	dec=$(python3 -c "print(int.from_bytes(bytes.fromhex('$k'), 'little'))")
	grep -qiE "$k|$be|$dec" "$TMP/outputs" && { LEAKS=$((LEAKS + 1)); echo "        found: $k"; }
done
eq "key words found in any output (hex either way, or decimal)" "$LEAKS" 0
check "pins root-only" test "$(stat -c %a /sys/fs/bpf/bloomtap/$VB)" = 700
check "key files 0600" bash -c "[ \"\$(stat -c %a '$ARCH'/*.key | sort -u)\" = 600 ]"

cleanup
trap - EXIT
summary
[ $FAIL -eq 0 ]
