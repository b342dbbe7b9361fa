#!/usr/bin/env bash
# SPIE windows and archive: rotation, sealed windows in files, queries over
# live and archived windows and time ranges, damaged archive files, pruning.
source "$(dirname "$0")/../lib/lib.sh"
need_root "spie"

ID=$$
INST=spie-$ID
A=$PCAPS/ndpi__gnutella.pcap B=$PCAPS/pcapplusplus__tls2.pcap
ARCH=$(mktemp -d)
cleanup() {
	for i in "$INST" "$INST-lan" "$INST-ov" "$INST-idle" "$INST-rep" "${LONG:-}"; do
		[ -n "$i" ] && "$BLOOMTAP" detach --instance "$i" >/dev/null 2>&1; done
	rm -rf "$ARCH"
}
trap cleanup EXIT INT TERM

check "replay A" "$BLOOMTAP" replay --reset --instance "$INST" "$A"
check "trace A: every IP packet seen (exit 0)" bash -c "'$BLOOMTAP' trace --instance '$INST' '$A' | tail -1 | grep -q ', 0 not seen'"
"$BLOOMTAP" trace --instance "$INST" "$B" >/dev/null; eq "trace B (never replayed): exit 1" "$?" 1
expect_fail "trace: no input" "give a capture FILE or --hex" "$BLOOMTAP" trace --instance "$INST"
eq "trace of an instance no agent archives: no archive searched, and it says so" \
	"$("$BLOOMTAP" -j trace --instance "$INST" "$A" | python3 -c 'import json,sys; print({p["archive"] for p in json.load(sys.stdin) if "same_as" not in p})') $("$BLOOMTAP" trace --instance "$INST" "$A" | tail -1 | grep -c 'the live ring alone, no archive')" \
	"{None} 1"
expect_fail "trace: bad --since" "--since 'yesterday': give epoch seconds, YYYY-MM-DDTHH:MM:SS[Z] or -N[smhd]" "$BLOOMTAP" trace --instance "$INST" --since yesterday "$A"
# the first frame of A that holds an IP packet (the very first is a runt)
F=$(python3 -c '
import sys; d=open(sys.argv[1],"rb").read(); o=24
while o < len(d):
    n=int.from_bytes(d[o+8:o+12],"little"); f=d[o+16:o+16+n]; o+=16+n
    if len(f) > 34 and f[12:14] == b"\x08\x00": print(f.hex()); break' "$A")
FHEX=$F	# F is taken for a file name below
check "--hex: an Ethernet frame" bash -c "'$BLOOMTAP' trace --instance '$INST' --hex '$F' | tail -1 | grep -q '^1 IP packets: 1 seen'"
check "--hex: a frame whose MAC starts with 4 (not an IPv4 header)" bash -c "'$BLOOMTAP' trace --instance '$INST' --hex '4${F:1}' | tail -1 | grep -q '^1 IP packets: 1 seen'"
check "--hex: the bare IP packet" bash -c "'$BLOOMTAP' trace --instance '$INST' --hex '${F:28}' | tail -1 | grep -q '^1 IP packets: 1 seen'"
check "windows --rotate --archive seals window 0" "$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH"
eq "one archive file" "$(ls "$ARCH"/*.btw | wc -l)" 1
eq "key file is 0600" "$(stat -c %a "$ARCH"/*.key)" 600
eq "archive file is 0600" "$(stat -c %a "$ARCH"/*.btw)" 600
check "replay B into window 1" "$BLOOMTAP" replay --instance "$INST" "$B"
TA=$("$BLOOMTAP" -j trace --instance "$INST" --archive "$ARCH" "$A")
# (each in window 0 once; window 1, B's, may answer falsely for one of
# A's 7,468 at 2.7e-7 a packet, not a duplicate of window 0)
eq "A: found once per packet in window 0 (ring and archive are one window)" \
	"$(python3 -c 'import json,sys; d=json.load(sys.stdin); print({[w["window"] for w in p["windows"]].count(0) == 1 and len({w["window"] for w in p["windows"]}) == len(p["windows"]) for p in d if "same_as" not in p})' <<<"$TA")" "{True}"
eq "trace -j fields (no digest: it would be an oracle for the keyed hash)" \
	"$(python3 -c 'import json,sys; p=json.load(sys.stdin)[0]; print(sorted(p), sorted(p["windows"][0]))' <<<"$TA")" \
	"['archive', 'archive_cut', 'archive_damaged', 'drops', 'dst_workload', 'fpr_combined', 'hits_cut', 'packet', 'searched', 'seen', 'src_workload', 'windows', 'windows_searched'] ['direction', 'end', 'fpr', 'instance', 'source', 'start', 'window']"
eq "two windows searched, the combined rate covers both" "$(python3 -c '
import json,sys; p=json.load(sys.stdin)[0]
print(p["windows_searched"], p["fpr_combined"] >= p["windows"][0]["fpr"])' <<<"$TA")" "2 True"
check "plain trace prints no digest" bash -c "! '$BLOOMTAP' trace --instance '$INST' '$A' | grep -qi digest"
TB=$("$BLOOMTAP" -j trace --instance "$INST" "$B")
eq "B: in the current window (no end yet)" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print({(w["window"], w["end"]) for p in d for w in p.get("windows", [])})' <<<"$TB")" "{(1, None)}"
"$BLOOMTAP" trace --instance "$INST" --archive "$ARCH" --until 2000-01-01T00:00:00Z "$A" >/dev/null
eq "--until before A: not seen" "$?" 1

# the instance gone: the archive alone answers, with its own key
check "detach the instance" "$BLOOMTAP" detach --instance "$INST"
check "archive alone: A seen" bash -c "'$BLOOMTAP' trace --archive '$ARCH' '$A' | tail -1 | grep -q ', 0 not seen'"
check "archive alone: source is the archive" bash -c "'$BLOOMTAP' -j trace --archive '$ARCH' '$A' | grep -q '\"source\":\"archive\"'"

# damaged files are named and skipped; the query goes on
F=$(ls "$ARCH"/*.btw)
head -c 500 "$F" > "$ARCH/$INST-00000000000000000001-00000098.btw"
head -c 5000 /dev/urandom > "$ARCH/$INST-00000000000000000002-00000099.btw"
# one flipped bit in each part (format 3: a 160-byte header, the
# dictionary and the window records, a chunk table per window, chunks):
# the CRC-32 of each catches it
python3 - "$F" "$ARCH/$INST-0000000000000000000" <<'PY'
import struct, sys
src, base = sys.argv[1], sys.argv[2]
d0 = open(src, 'rb').read()
dict_len = struct.unpack_from('<I', d0, 116)[0]
table_off = struct.unpack_from('<Q', d0, 160 + dict_len + 48)[0]   # window 0's table
def flip(n, at, version=None):
    d = bytearray(d0)
    if version is not None:
        d[8] = version
    else:
        d[at] ^= 0x10
    open(f"{base}{n}-000000{100 - n:02d}.btw", 'wb').write(d)
flip(3, 0, version=200)		# 00000097: a version this build does not know
flip(4, 100)			# 00000096: block_bits, in the header
flip(5, 160 + dict_len + 8)	# 00000095: window 0's end time, in its record
flip(6, len(d0) - 2)		# 00000094: the last chunk's checksum (a flip in
				# its compressed bytes may decode to the same
				# filter: test_spie.c tries every bit)
flip(7, table_off + 8)		# 00000093: an offset in window 0's chunk table
PY
OUT=$("$BLOOMTAP" trace --archive "$ARCH" "$A" 2>&1); RC=$?
eq "damaged files: A still seen, in the intact file (exit 0)" "$RC" 0
check "truncated file named" grep -q "00000098.btw: truncated" <<<"$OUT"
check "foreign file named" grep -q "00000099.btw: not a bloomtap archive file" <<<"$OUT"
check "other version named" grep -q "00000097.btw: archive format version not supported" <<<"$OUT"
check "a bit flipped in the header: named" grep -q "00000096.btw: header is corrupt (checksum)" <<<"$OUT"
check "a bit flipped in a window record: named" grep -q "00000095.btw: window records are corrupt (checksum)" <<<"$OUT"
check "a bit flipped in a chunk offset: named" grep -E -q "00000093.btw: (a compressed chunk or its offset is corrupt|a chunk offset is out of range)" <<<"$OUT"
check "a bit flipped in a chunk: named" grep -q "00000094.btw: a compressed chunk or its offset is corrupt (checksum)" <<<"$OUT"
check "each damaged file named once" test "$(grep -c '00000094.btw' <<<"$OUT")" -eq 1
check "damaged files: each answer says how many of its time were not searched in full" \
	grep -q '  7 damaged archive files of its time not searched in full' <<<"$OUT"
eq "damaged files: archive_damaged in every JSON answer" "$("$BLOOMTAP" -j trace --archive "$ARCH" "$A" 2>/dev/null |
	python3 -c 'import json,sys; print(sorted({p["archive_damaged"] for p in json.load(sys.stdin) if "same_as" not in p}))')" "[7]"
OUT=$("$BLOOMTAP" archive "$ARCH" 2>&1); RC=$?
eq "archive: a damaged file makes the exit status 1" "$RC" 1
check "archive names the damaged file" grep -q "00000096.btw: header is corrupt" <<<"$OUT"
rm -f "$ARCH"/*-0000009[3-9].btw
check "archive alone again: A all seen" bash -c "'$BLOOMTAP' trace --archive '$ARCH' '$A' | tail -1 | grep -q ', 0 not seen'"
eq "intact again: archive_damaged 0" "$("$BLOOMTAP" -j trace --archive "$ARCH" "$A" |
	python3 -c 'import json,sys; print(sorted({p["archive_damaged"] for p in json.load(sys.stdin) if "same_as" not in p}))')" "[0]"
# format 2, written by the last ABI 4 build (tests/data/archive-v2/README),
# and format 1 made from it: still read, with the digest of their time.
# Its window holds a replay's packets at the replay's time, not A's
# capture times (a replay's windows say so since BT_WIN_REPLAY_TIME):
# searched at any time, or at the window's own time
OLD=$(mktemp -d)
cp "$TOP"/tests/data/archive-v2/*.btw "$TOP"/tests/data/archive-v2/*.key "$OLD"/
check "a format 2 file is still read: A all seen" bash -c "'$BLOOMTAP' trace --any-time --archive '$OLD' '$A' | tail -1 | grep -q '^7468 IP packets: 7468 seen, 0 not seen'"
AT=$("$BLOOMTAP" -j archive "$OLD" | python3 -c 'import json, sys, datetime
s = json.load(sys.stdin)[0]["windows"][0]["start"]
print("%.3f" % datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp())')
check "a format 2 file, time-bounded: a packet at its window's time seen ($AT)" bash -c "'$BLOOMTAP' trace --archive '$OLD' --hex '$FHEX' --at '$AT' | tail -1 | grep -q '^1 IP packets: 1 seen'"
check "... and A at its capture times not (not the window's)" bash -c "'$BLOOMTAP' trace --archive '$OLD' '$A' | tail -1 | grep -q ' 0 seen'"
"$BLOOMTAP" trace --archive "$OLD" "$B" >/dev/null 2>&1
eq "a format 2 file: B (never in it) not seen" "$?" 1
V2=$(ls "$OLD"/*.btw)
python3 - "$V2" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[8:12] = struct.pack('<I', 1)		# version 1
d[116:120] = b'\0\0\0\0'		# its reserved word, now hdr_crc
open(sys.argv[1], 'wb').write(d)
PY
check "a format 1 file is still read: A all seen" bash -c "'$BLOOMTAP' trace --any-time --archive '$OLD' '$A' | tail -1 | grep -q ', 0 not seen'"
check "archive lists a format 1 file" bash -c "'$BLOOMTAP' -j archive '$OLD' | grep -q '\"format\":1'"
rm -rf "$OLD"
# format 9, the last of 128-bit blocks and zstd chunks, written by the
# last ABI 22 build (tests/data/archive-v9/README): its packets found at
# their own times, the others not
OLD=$(mktemp -d)
cp "$TOP"/tests/data/archive-v9/*.btw "$TOP"/tests/data/archive-v9/*.key "$OLD"/
check "a format 9 file is still read" bash -c "'$BLOOMTAP' -j archive '$OLD' | grep -q '\"format\":9'"
check "a format 9 archive, time-bounded: its 3,000 packets seen" bash -c "'$BLOOMTAP' trace --archive '$OLD' '$TOP/tests/data/archive-v9/sent.pcap' | tail -1 | grep -q '^3000 IP packets: 3000 seen, 0 not seen'"
check "... and 300 never sent not seen" bash -c "'$BLOOMTAP' trace --archive '$OLD' '$TOP/tests/data/archive-v9/never.pcap' | tail -1 | grep -q '^300 IP packets: 0 seen'"
rm -rf "$OLD"

# an idle link's windows (nothing recorded) cost their record on disk, not
# 12.6 KiB of chunk table and empty chunks (format 4; format 5 adds
# nothing for a window without drops)
python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(struct.pack("<IHHiIII",0xa1b2c3d4,2,4,0,0,65535,1))' "$ARCH/empty.pcap"
ARCHE=$ARCH/idle
check "an instance with nothing in it" "$BLOOMTAP" replay --reset --instance "$INST-idle" "$ARCH/empty.pcap"
for i in 1 2 3 4; do "$BLOOMTAP" windows --instance "$INST-idle" --rotate --archive "$ARCHE" >/dev/null; done
J=$("$BLOOMTAP" -j archive "$ARCHE")
# the format this build writes (user/core/archive.h)
FORMAT=$(awk '$2 == "BT_ARCHIVE_VERSION" { print $3 }' "$TOP/user/core/archive.h")
eq "four empty windows archived, format $FORMAT" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(len(f["windows"]) for f in d), sorted({f["format"] for f in d}))' <<<"$J")" "4 [$FORMAT]"
check "each file of one empty window under 512 bytes ($(cat "$ARCHE"/*.btw | wc -c) bytes in all)" \
	test "$(cat "$ARCHE"/*.btw | wc -c)" -lt $((4 * 512))
"$BLOOMTAP" trace --archive "$ARCHE" --hex 4500001c00010000401100000a0000010a000002d431003500080000 > "$ARCH/idle.out" 2>&1
eq "a packet against the empty windows: not seen (exit 1), no file damaged" "$?/$(grep -c 'archive file' "$ARCH/idle.out")" "1/0"
"$BLOOMTAP" detach --instance "$INST-idle" >/dev/null 2>&1

# SIGKILL in the middle of a keeper's turn: tests/live/keeper_kills.sh

# "overloaded" means one thing: the datapath found no window ready at the
# load. A window moves on a batch at a time, so it may hold a little more
# (1985 packets a window here, moving on at 2048, with windows ready)
python3 - "$ARCH/n5000.pcap" <<'PY'
import struct, sys
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(5000):
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, i & 0xffff, 0, 64, 17, 0,
                         bytes([198, 18, 60, i >> 8 & 255]), bytes([198, 18, 61, i & 255]))
        d = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + struct.pack('!HHHH', 1000, 9, 8, 0) + bytes(18)
        f.write(struct.pack('<IIII', 0, i, len(d), len(d)) + d)
PY
check "replay 5,000 packets into windows of 1,985" "$BLOOMTAP" replay --reset --instance "$INST-ov" \
	--windows 16 --window-bits 64K --bits-per-packet 33 --fpr 1e-3 "$ARCH/n5000.pcap"
eq "windows past their design load by less than a batch: not overloaded" "$("$BLOOMTAP" -j windows --instance "$INST-ov" | python3 -c '
import json, sys
d = json.load(sys.stdin)
over = [w for w in d if w["packets"] > w["design_load"]]
print(len(over) > 0, [w["overloaded"] for w in over])')" "True [False, False]"
eq "and the plain output says none is past its load" "$("$BLOOMTAP" windows --instance "$INST-ov" | grep -c 'past its load')" 0
# settings a new instance would refuse: refused before --reset removes
# the instance they would replace
expect_fail "replay --reset, a window too small for 64 packets: refused" "holds 34 packets" \
	"$BLOOMTAP" replay --reset --instance "$INST-ov" --window-bits 4096 "$ARCH/n5000.pcap"
check "... and the instance it would have replaced is still there" "$BLOOMTAP" windows --instance "$INST-ov"
"$BLOOMTAP" detach --instance "$INST-ov" >/dev/null 2>&1

# ---- instances that share an archive directory: names matched exactly,
# a query searches only its instance's files, the budget holds for the
# directory; and an instance name of the longest length ----
ARCH3=$(mktemp -d)
INSTL=$INST-lan
check "instance $INSTL: A" "$BLOOMTAP" replay --reset --instance "$INSTL" "$A"
check "instance $INSTL: archived" "$BLOOMTAP" windows --instance "$INSTL" --rotate --archive "$ARCH3"
check "instance $INST: B" "$BLOOMTAP" replay --reset --instance "$INST" "$B"
check "instance $INST: archived" "$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH3"
eq "archive --instance $INST lists its own file only, not $INSTL's" \
	"$("$BLOOMTAP" -j archive --instance "$INST" "$ARCH3" | python3 -c 'import json,sys; print(sorted({f["instance"] for f in json.load(sys.stdin)}))')" "['$INST']"
OUT=$("$BLOOMTAP" archive --instance "$INST-typo" "$ARCH3" 2>&1)
eq "archive --instance of no file here: exit 1" "$?" 1
check "... naming the instances the archive holds ($OUT)" \
	grep -q "no file of instance $INST-typo (instances here: .*$INSTL" <<<"$OUT"
"$BLOOMTAP" trace --instance "$INST" --archive "$ARCH3" "$A" >/dev/null 2>&1
eq "A, only in $INSTL's archive, is not seen by $INST (exit 1)" "$?" 1
TL=$("$BLOOMTAP" -j trace --instance "$INSTL" --archive "$ARCH3" "$A" 2>/dev/null)
eq "A is seen by $INSTL, each window naming it" "$(python3 -c '
import json,sys; d=json.load(sys.stdin); print(all(p["seen"] for p in d), sorted({w["instance"] for p in d for w in p.get("windows", [])}))' <<<"$TL")" "True ['$INSTL']"
"$BLOOMTAP" windows --instance "$INSTL" --rotate --archive "$ARCH3" >/dev/null
"$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH3" >/dev/null
TOTAL=$(cat "$ARCH3"/*.btw | wc -c)
BUDGET=$((TOTAL * 2 / 3))
check "prune the directory to $BUDGET bytes (of $TOTAL)" "$BLOOMTAP" windows --instance "$INST" --rotate --archive "$ARCH3" --max-bytes "$BUDGET"
check "the whole directory within the budget, every instance's files counted" test "$(cat "$ARCH3"/*.btw | wc -c)" -le "$BUDGET"
"$BLOOMTAP" detach --instance "$INSTL" >/dev/null
LONG=spie-32-$(printf '%0*d' $((32 - 9 - ${#ID})) 0)-$ID
eq "a name of 32 characters" "${#LONG}" 32
check "instance $LONG: A" "$BLOOMTAP" replay --reset --instance "$LONG" "$A"
check "instance $LONG: archived" "$BLOOMTAP" windows --instance "$LONG" --rotate --archive "$ARCH3"
"$BLOOMTAP" detach --instance "$LONG" >/dev/null
check "its archive alone answers: A all seen (its key file found under its whole name)" \
	bash -c "'$BLOOMTAP' trace --archive '$ARCH3' '$A' 2>&1 | tail -1 | grep -q '^7468 IP packets: 7468 seen, 0 not seen'"
check "the archive alone: a packet not seen prints no digest" bash -c \
	"'$BLOOMTAP' trace --archive '$ARCH3' --hex 4500001c00010000401100000a0000010a000002d431003500080000 | grep -q '^packet 1: not seen$'"
rm -rf "$ARCH3"

# ---- a capture of 120,000 packets: every one answered for (trace once read
# the first 100,000, warned, and said "all seen"); the last one changed in a
# copy: not seen, exit 1 ----
python3 - "$ARCH/big.pcap" "$ARCH/big-last.pcap" <<'PY'
import struct, sys
def frame(i, last=False):
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, i & 0xffff, 0, 64, 17, 0,
                               bytes([198, 18, 40, (i >> 16) & 255]), bytes([198, 18, 41, 1])))
    # the last one's destination port differs (not its checksum: the
    # digest leaves UDP's checksum out)
    udp = struct.pack('!HHHH', 1024 + (i & 0x7fff), 9 if not last else 10, 8, 0)
    return b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + bytes(ip) + udp + bytes(18)
for path, changed in ((sys.argv[1], False), (sys.argv[2], True)):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(120000):
            d = frame(i, changed and i == 119999)
            f.write(struct.pack('<IIII', i // 1000, i % 1000, len(d), len(d)) + d)
PY
check "replay 120,000 packets" "$BLOOMTAP" replay --reset --instance "$INST" "$ARCH/big.pcap"
OUT=$("$BLOOMTAP" trace --instance "$INST" "$ARCH/big.pcap" 2>&1); RC=$?
eq "trace: every one of the 120,000 answered, all seen (exit $RC)" "$(tail -1 <<<"$OUT" | cut -d';' -f1)" \
	"120000 IP packets: 120000 seen, 0 not seen"
OUT=$("$BLOOMTAP" trace --instance "$INST" "$ARCH/big-last.pcap" 2>&1); RC=$?
eq "the copy whose last packet differs: exit 1" "$RC" 1
check "and it is packet 120000 that was not seen" grep -q "^packet 120000: not seen$" <<<"$OUT"
N=$("$BLOOMTAP" -j trace --instance "$INST" "$ARCH/big.pcap" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
eq "-j: an answer for each of them, streamed" "$N" 120000
rm -f "$ARCH/big.pcap" "$ARCH/big-last.pcap"

# every capture, replayed from both CPUs at once into one instance: trace
# finds every IP packet of every one of them
check "instance for all captures" "$BLOOMTAP" replay --reset --instance "$INST" "$A"
ls "$PCAPS"/*.pcap* | awk 'NR % 2' > "$ARCH/even"
ls "$PCAPS"/*.pcap* | awk '!(NR % 2)' > "$ARCH/odd"
# two CPUs of those this run may use (taskset may have left out CPU 0)
read -r C0 C1 <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')"
if [ -z "$C1" ]; then
	echo "  SKIP  replay from two CPUs at once: this run may use one CPU ($C0)"; SKIP=$((SKIP + 1))
	C1=$C0
fi
# a replay that fails, crashes or meets a sanitizer is named in the file
( while read -r f; do taskset -c "$C0" "$BLOOMTAP" replay --instance "$INST" "$f" >/dev/null 2>&1 ||
	echo "$f: exit $?"; done < "$ARCH/even" ) > "$ARCH/bad0" &
( while read -r f; do taskset -c "$C1" "$BLOOMTAP" replay --instance "$INST" "$f" >/dev/null 2>&1 ||
	echo "$f: exit $?"; done < "$ARCH/odd" ) > "$ARCH/bad1" &
wait
eq "every capture replayed (exit 0), from CPUs $C0 and $C1" "$(cat "$ARCH/bad0" "$ARCH/bad1")" ""
MISSED=0 FILES=0 PKTS=0 NOIP=0 ERRS=0
while read -r f; do
	OUT=$("$BLOOMTAP" trace --instance "$INST" "$f" 2>&1); RC=$?
	# exit 2 is an error; this one alone means the capture holds no IP packet
	if [ $RC -eq 2 ] && grep -q "no IP packet that bloomtap records" <<<"$OUT"; then
		NOIP=$((NOIP + 1)); continue
	fi
	[ $RC -le 1 ] || { ERRS=$((ERRS + 1)); echo "        trace failed (exit $RC): $f: $(tail -1 <<<"$OUT")"; continue; }
	FILES=$((FILES + 1))
	PKTS=$((PKTS + $(tail -1 <<<"$OUT" | awk '{print $1}')))
	[ $RC -eq 0 ] || { MISSED=$((MISSED + 1)); echo "        not all seen: $f: $(tail -1 <<<"$OUT")"; }
done < <(ls "$PCAPS"/*.pcap*)
eq "trace answered for every capture (errors)" "$ERRS" 0
check "captures with IP packets traced: $FILES (and $NOIP without any), most of the $(ls "$PCAPS"/*.pcap* | wc -l)" \
	test "$FILES" -gt $(( $(ls "$PCAPS"/*.pcap* | wc -l) / 2 ))
eq "every IP packet of every capture found ($PKTS packets, $FILES files, both CPUs)" "$MISSED" 0

# ---- answers with bounds: a packet repeated, one seen in more windows
# than an answer holds, an archive searched under a budget ----
python3 - "$ARCH" <<'PY'
import struct, sys
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, 7, 0, 64, 17, 0, bytes([198, 18, 60, 1]), bytes([198, 18, 61, 1]))
d = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + struct.pack('!HHHH', 4000, 9, 8, 0) + bytes(18)
for name, n in (('one', 1), ('rep', 8192)):
    with open(f'{sys.argv[1]}/{name}.pcap', 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            f.write(struct.pack('<IIII', 1, i, len(d), len(d)) + d)
PY
REPA=$ARCH/rep-archive
"$BLOOMTAP" replay --reset --instance "$INST-rep" --windows 128 "$ARCH/one.pcap" >/dev/null
for i in $(seq 70); do
	"$BLOOMTAP" windows --instance "$INST-rep" --rotate --archive "$REPA" >/dev/null &&
		"$BLOOMTAP" replay --instance "$INST-rep" "$ARCH/one.pcap" >/dev/null || break
done
"$BLOOMTAP" -j trace --instance "$INST-rep" "$ARCH/rep.pcap" > "$ARCH/rep.json"
eq "a packet repeated 8,192 times: answered once, the rest name it" "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(len(d), d[0].get("same_as"), {p.get("same_as") for p in d[1:]}, {p["seen"] for p in d})' "$ARCH/rep.json")" "8192 None {1} {True}"
check "and the answer is small ($(stat -c %s "$ARCH/rep.json") bytes; 64 windows each, it was 60 MB)" \
	test "$(stat -c %s "$ARCH/rep.json")" -lt 1000000
eq "seen in 71 windows: 64 in the answer, and it says some were cut" "$(python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))[0]; print(len(p["windows"]), p["hits_cut"])' "$ARCH/rep.json")" "64 True"
check "the plain answer says so too" bash -c "'$BLOOMTAP' trace --instance '$INST-rep' '$ARCH/one.pcap' | grep -q 'and more: an answer holds at most 64'"
"$BLOOMTAP" -j trace --archive "$REPA" --budget 5 "$ARCH/one.pcap" > "$ARCH/cut.json"
eq "the archive under a budget of 5 probes: the 5 newest windows searched, and where it stopped" \
	"$(python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))[0]; w = p["windows"]
print(len(w), p["archive_cut"] is not None, p["archive_cut"] <= min(x["start"] for x in w))' "$ARCH/cut.json")" "5 True True"
check "the plain answer names the cut" bash -c "'$BLOOMTAP' trace --archive '$REPA' --budget 5 '$ARCH/one.pcap' | grep -q 'were not searched (--budget)'"
eq "without a budget: all 64 the answer holds, no cut" "$("$BLOOMTAP" -j trace --archive "$REPA" "$ARCH/one.pcap" |
	python3 -c 'import json,sys; p = json.load(sys.stdin)[0]; print(len(p["windows"]), p["archive_cut"])')" "64 None"

# ---- a budget is the whole trace's, live probes too: 100 merged packets
# cut at --mss 88 (683 entries each: 93 packets a batch) searched in every
# live window; a budget one probe short of them all ends the trace at the
# second batch's first packet, and says so (a budget per batch let it run
# on) ----
python3 - "$ARCH/merged.pcap" <<'PY'
import struct, sys
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(100):
        pay = struct.pack('!I', i) * 15000		# 60,000 bytes: 682 segments of 88
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40 + len(pay), i, 0, 64, 6, 0,
                         bytes([198, 18, 60, 1]), bytes([198, 18, 61, 1]))
        tcp = struct.pack('!HHIIBBHHH', 4000, 80, i * 60000, 0, 0x50, 0x10, 65535, 0, 0)
        d = b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + ip + tcp + pay
        f.write(struct.pack('<IIII', 1, i, len(d), len(d)) + d)
PY
W=$("$BLOOMTAP" -j trace --instance "$INST-rep" "$ARCH/one.pcap" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["windows_searched"])')
BUDGET=$((W * 100 * 683 - 1))
"$BLOOMTAP" -j trace --instance "$INST-rep" --mss 88 --budget "$BUDGET" "$ARCH/merged.pcap" \
	> "$ARCH/merged.json" 2> "$ARCH/merged.err"
eq "a budget one probe short of 100 cut packets in $W windows: a failure, exit 1" "$?" 1
check "it says where it ran out: packet 94, the second batch's first" \
	grep -q "ran out of its $BUDGET window x packet probes at packet 94" "$ARCH/merged.err"
eq "and the 93 packets before it are answered, each cut in 682 segments" "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); print(len(d), {p["segments_total"] for p in d})' "$ARCH/merged.json")" "93 {682}"
check "--mss below TCP's smallest MSS is refused, the floor named" bash -c \
	"'$BLOOMTAP' trace --instance '$INST-rep' --mss 87 '$ARCH/one.pcap' 2>&1 | grep -q 'from 88 to 65535'"

summary
[ $FAIL -eq 0 ]
