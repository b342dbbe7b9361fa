#!/usr/bin/env bash
# A keeper of the SPIE ring (windows --every, as the agent's loop) killed
# at chosen points of its turn, again and again, on a small ring. After
# each kill, whoever takes the lock next must mend what it left:
# - the next windows --rotate succeeds;
# - every archive file is valid, and no window is in two files;
# - no digest inserted before the kill is lost (ring and archive together).
# The kill points are named steps where the keeper SIGKILLs itself
# (BLOOMTAP_TEST_KILL=STEP:N, tests only): no sleep guesses where it is.
source "$(dirname "$0")/../lib/lib.sh"
need_root "keeper kills"

ROUNDS=${KEEPER_KILL_ROUNDS:-200}
INST=kill-$$
ARCH=$(mktemp -d) WORK=$(mktemp -d)
cleanup() {
	"$BLOOMTAP" detach --instance "$INST" >/dev/null 2>&1
	rm -rf "$ARCH" "$WORK"
}
trap cleanup EXIT INT TERM

# a capture for each round: 8 UDP packets no other round sends
python3 - "$WORK" "$ROUNDS" <<'PY'
import struct, sys
out, rounds = sys.argv[1], int(sys.argv[2])
for r in range(rounds):
    with open(f'{out}/round-{r}.pcap', 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(8):
            ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, r, 0, 64, 17, 0,
                             bytes([198, 18, 50, i]), bytes([198, 18, 51, 1]))
            udp = struct.pack('!HHHH', 1024 + r, 9, 8, 0)
            d = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + udp + bytes(18)
            f.write(struct.pack('<IIII', r, i, len(d), len(d)) + d)
PY

# 8 windows of 64 Ki bits: two kept ready ahead, so the keeper must archive
# a window before it can ready the one after it: every step of a turn is
# reached within a few windows
check "a ring of 8 small windows" "$BLOOMTAP" replay --reset --instance "$INST" --windows 8 \
	--window-bits 64K "$WORK/round-0.pcap"

STEPS=(close seal write archived ready)
killed=0 unkilled=() rot_fail=() damaged=() per_step=()
for ((r = 0; r < ROUNDS; r++)); do
	[ $r -gt 0 ] && "$BLOOMTAP" replay --instance "$INST" "$WORK/round-$r.pcap" >/dev/null 2>&1
	# every step and every nth in turn: each pair comes every 15 rounds
	step=${STEPS[$((r % ${#STEPS[@]}))]} nth=$((r / ${#STEPS[@]} % 3 + 1))
	# --count bounds it: a keeper that never reaches its step ends by itself
	# (and timeout one that cannot turn the ring at all: exit 124)
	{ BLOOMTAP_TEST_KILL=$step:$nth timeout 20 "$BLOOMTAP" windows --instance "$INST" --every 0.01 \
		--count 12 --archive "$ARCH" >/dev/null 2>&1; rc=$?; } 2>/dev/null
	if [ $rc -eq 137 ]; then
		killed=$((killed + 1)) per_step+=("$step")
	else
		unkilled+=("$r:$step:$nth:exit$rc")
	fi
	out=$("$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH" 2>&1) ||
		rot_fail+=("round $r after $step:$nth: $(tail -1 <<<"$out")")
	"$BLOOMTAP" archive "$ARCH" >/dev/null 2>&1 || damaged+=("round $r after $step:$nth")
	# a broken keeper is known after a few rounds: the rest would each wait
	# for timeout
	[ $(( ${#unkilled[@]} + ${#rot_fail[@]} + ${#damaged[@]} )) -gt 5 ] && break
done
eq "keepers that stopped at their chosen step (SIGKILL), of $ROUNDS" "$killed" "$ROUNDS"
[ ${#unkilled[@]} -gt 0 ] && echo "        not killed: ${unkilled[*]:0:10}"
for s in "${STEPS[@]}"; do
	n=$(printf '%s\n' "${per_step[@]}" | grep -cx "$s")
	check "killed at step '$s' ($n times)" test "$n" -gt 0
done
eq "windows --rotate after each kill: failures" "${#rot_fail[@]}" 0
[ ${#rot_fail[@]} -gt 0 ] && printf '        %s\n' "${rot_fail[@]:0:5}"
eq "archive after each kill: rounds with a damaged file" "${#damaged[@]}" 0

J=$("$BLOOMTAP" -j archive "$ARCH")
eq "no window archived twice" "$(python3 -c '
import json, sys, collections
c = collections.Counter(w["window"] for f in json.load(sys.stdin) for w in f["windows"])
print(sorted(s for s, n in c.items() if n > 1))' <<<"$J")" "[]"
N=$(python3 -c 'import json,sys; print(sum(len(f["windows"]) for f in json.load(sys.stdin)))' <<<"$J")
check "windows were archived ($N, more than the ring holds)" test "${N:-0}" -gt 8

# every round's packets: in the ring or the archive, none lost
python3 - "$WORK" "$ROUNDS" <<'PY'
import sys
out, rounds = sys.argv[1], int(sys.argv[2])
with open(f'{out}/all.pcap', 'wb') as f:
    for r in range(rounds):
        d = open(f'{out}/round-{r}.pcap', 'rb').read()
        f.write(d if r == 0 else d[24:])
PY
"$BLOOMTAP" trace --instance "$INST" --archive "$ARCH" "$WORK/all.pcap" > "$WORK/trace" 2>&1; RC=$?
eq "every digest inserted before a kill is found (exit $RC)" "$(tail -1 "$WORK/trace" | cut -d';' -f1)" \
	"$((ROUNDS * 8)) IP packets: $((ROUNDS * 8)) seen, 0 not seen"
eq "archive files trace reported damaged" "$(grep -c 'archive file' "$WORK/trace")" 0

# the budget still holds after all that
check "prune to 100 kB" "$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH" --max-bytes 100000
check "archive within 100 kB" test "$(cat "$ARCH"/*.btw | wc -c)" -le 100000

summary
[ $FAIL -eq 0 ]
