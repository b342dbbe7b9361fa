#!/usr/bin/env bash
# Watch lists from the command line and the agent: bad files refused with
# their file and line and nothing changed; load, test, set, clear; attach
# and replay --watch; heavy flows' classes; the agent's watch = FILE, its
# SIGHUP reload (a class keeps its counts) and /metrics through promtool.
source "$(dirname "$0")/../lib/lib.sh"
need_root "watch"

ID=$$
INST=watch-$ID
NSA=bt-wa-a-$ID NSB=bt-wa-b-$ID
VA=btwa$ID VB=btwb$ID
PORT=9478
TMP=$(mktemp -d)
AGENT=
cleanup() {
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
	"$BLOOMTAP" detach --instance "$INST" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "$INST-bad" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "$INST-m" >/dev/null 2>&1
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
G=$PCAPS/ndpi__gnutella.pcap

for s in load show test set clear; do
	check "watch $s --help" bash -c "'$BLOOMTAP' watch $s --help | grep -q '^Usage: bloomtap watch $s'"
done
expect_fail "watch: unknown subcommand" "unknown watch subcommand" "$BLOOMTAP" watch frob

# ---- a good list, then bad ones that change nothing ----
cat > "$TMP/good.txt" <<'EOF'
# hosts and networks of gnutella.pcap
10.0.2.15            me
69.118.162.0/24,     peers
69.118.162.229/24    peers
2001:db8::/32        doc
2001:db8:1::/48      doc-one
EOF
check "replay --watch" "$BLOOMTAP" replay --reset --instance "$INST" --watch "$TMP/good.txt" "$G"
check "host bits under a prefix: warned, with file and line" bash -c \
	"'$BLOOMTAP' watch load '$TMP/good.txt' --instance '$INST' 2>&1 | grep -q 'good.txt:4: 69.118.162.229/24 has host bits set'"
W=$("$BLOOMTAP" -j watch load "$TMP/good.txt" --instance "$INST" 2>/dev/null)
# probes: IPv4's /16s hold one length each (10.0/16 a /32, 69.118/16 a
# /24): one; IPv6's /32 and /48, no marker between them: two
eq "watch load -j: keys, classes, duplicates dropped, probes by family" \
	"$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["keys"], d["classes"], d["duplicates"], d["masked"], d["probes_ipv4"], d["probes_ipv6"])' <<<"$W")" "4 4 1 1 1 2"
check "a list of 4 keys: its bits a key explained (a fixed size)" bash -c \
	"'$BLOOMTAP' watch load '$TMP/good.txt' --instance '$INST' 2>/dev/null | grep -q 'a small list: the table.s fixed size'"
BEFORE=$("$BLOOMTAP" watch test 10.0.2.15 69.118.162.5 1.2.3.4 2001:db8:1::9 2001:db8:2::9 --instance "$INST")
eq "watch test: longest prefix, or none" "$(tr '\n' '|' <<<"$BEFORE")" \
	"10.0.2.15: me (10.0.2.15/32)|69.118.162.5: peers (69.118.162.0/24)|1.2.3.4: none|2001:db8:1::9: doc-one (2001:db8:1::/48)|2001:db8:2::9: doc (2001:db8::/32)|"
# IPv6 in the range tree (every IPv6 prefix /64 or shorter): the same
# answers, a line a level; set in place; then searched again
W=$("$BLOOMTAP" -j watch load "$TMP/good.txt" --ipv6 tree --instance "$INST" 2>/dev/null)
eq "watch load --ipv6 tree -j: lookup, ranges, lines" \
	"$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["lookup_ipv6"], d["ranges_ipv6"], d["probes_ipv6"])' <<<"$W")" "tree 5 1"
eq "watch test, IPv6 in the tree: as searched" \
	"$("$BLOOMTAP" watch test 10.0.2.15 69.118.162.5 1.2.3.4 2001:db8:1::9 2001:db8:2::9 --instance "$INST")" "$BEFORE"
check "watch set in the tree" "$BLOOMTAP" watch set 2001:db8::/32 doc-two --instance "$INST"
eq "watch set in the tree: the /32's addresses, not the /48's under it" \
	"$("$BLOOMTAP" watch test 2001:db8:1::9 2001:db8:2::9 --instance "$INST" | tr '\n' '|')" \
	"2001:db8:1::9: doc-one (2001:db8:1::/48)|2001:db8:2::9: doc-two (2001:db8::/32)|"
expect_fail "watch set in the tree: an unlisted prefix" "is not a key of the watch list in use" \
	"$BLOOMTAP" watch set 2001:db8:2::/48 doc --instance "$INST"
expect_fail "watch load --ipv6: a bad choice" "ipv6" \
	"$BLOOMTAP" watch load "$TMP/good.txt" --ipv6 trie --instance "$INST"
W=$("$BLOOMTAP" -j watch load "$TMP/good.txt" --ipv6 search --instance "$INST" 2>/dev/null)
eq "watch load --ipv6 search -j" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["lookup_ipv6"])' <<<"$W")" "search"
SHOW=$("$BLOOMTAP" -j watch show --instance "$INST")
eq "watch show -j: fields" "$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)[0])))' <<<"$SHOW")" \
	"class direction dst_bytes dst_packets entries src_bytes src_packets"

# a reader held between reading which slot is in use and taking it, while
# a load switches slots and frees the one it read: it takes the table again
# (before, it answered "none" from the freed slot)
W0=$("$BLOOMTAP" watch test 10.0.2.15 --instance "$INST")
BLOOMTAP_TEST_PAUSE=watch-read:$TMP/go "$BLOOMTAP" watch test 10.0.2.15 --instance "$INST" \
	> "$TMP/reader.out" 2> "$TMP/reader.err" &
READER=$!
wait_for "the reader paused" 30 grep -q "paused at watch-read" "$TMP/reader.err"
check "a load meanwhile" "$BLOOMTAP" watch load "$TMP/good.txt" --instance "$INST"
touch "$TMP/go"; wait $READER
eq "the reader a load overtook answers from the table in use" "$(cat "$TMP/reader.out")" "$W0"

bad() {	# name, file content, expected message
	printf '%b' "$2" > "$TMP/bad.txt"
	expect_fail "bad list: $1" "$3" "$BLOOMTAP" watch load "$TMP/bad.txt" --instance "$INST"
}
bad "not an address" '10.0.0.1 a\nbogus b\n' "bad.txt:2: 'bogus' is not an IPv4 or IPv6 address"
bad "IPv4 length" '10.0.0.0/33 a\n' "bad.txt:1: '10.0.0.0/33': bad prefix length (a prefix length is 0..32)"
bad "IPv6 length" '\n\n2001:db8::/129 a\n' "bad.txt:3: '2001:db8::/129': bad prefix length (a prefix length is 0..128)"
bad "negative length: a length, not a range" '198.18.4.0/-1 neg\n' "bad.txt:1: '198.18.4.0/-1': bad prefix length"
bad "length not a number" '10.0.0.0/x a\n' "bad.txt:1: '10.0.0.0/x': bad prefix length"
bad "class name" '10.0.0.1 bad/name\n' "bad.txt:1: class 'bad/name': 1 to 32 characters"
bad "class too long" "10.0.0.1 $(printf 'a%.0s' $(seq 33))\n" "bad.txt:1: class 'aaaa"
bad "missing class" '10.0.0.1\n' "bad.txt:1: expected ADDRESS[/LEN] CLASS"
bad "three fields" '10.0.0.1 a b\n' "bad.txt:1: expected ADDRESS[/LEN] CLASS"
bad "one key, two classes" '10.0.0.0/8 a\n# x\n10.1.2.3/8 b\n' "bad.txt:3: 10.0.0.0/8 is class 'b' here and 'a' on line 1"
bad "range: ends of two families" '10.0.0.1-2001:db8::1 a\n' "bad.txt:1: '10.0.0.1-2001:db8::1': the range's ends are of two families"
bad "range: first above last" '\n10.0.0.9-10.0.0.1 a\n' "bad.txt:2: '10.0.0.9-10.0.0.1': the range's first address is above its last"
bad "range: a prefix in it" '10.0.0.0/24-10.0.1.0 a\n' "bad.txt:1: '10.0.0.0/24-10.0.1.0': a range is FIRST-LAST"
# every bad line, each with its own problem (the first 20 of them)
printf '10.0.0.1 ok\n198.18.200.5 bad class!\nbogus a\n10.0.0.0/40 b\n10.0.0.2\n10.0.0.3 x/y\n10.0.0.4 fine\n' > "$TMP/five.txt"
OUT=$("$BLOOMTAP" watch load "$TMP/five.txt" --instance "$INST" 2>&1)
eq "five bad lines: five errors, each its line's own" "$(grep -o 'five.txt:[0-9]*: [a-z0-9'"'"'./]*' <<<"$OUT" | tr '\n' '|')" \
	"five.txt:2: expected|five.txt:3: 'bogus'|five.txt:4: '10.0.0.0/40'|five.txt:5: expected|five.txt:6: class|"
check "a class of two words is named as such" grep -q "five.txt:2: expected ADDRESS\[/LEN\] CLASS: 3 fields ('bad class!'): a class name is one word" <<<"$OUT"
python3 -c 'for i in range(45): print("bogus%d a" % i)' > "$TMP/45.txt"
OUT=$("$BLOOMTAP" watch load "$TMP/45.txt" --instance "$INST" 2>&1)
eq "45 bad lines: 20 told, the rest counted" "$(grep -c "45.txt:[0-9]*: 'bogus" <<<"$OUT")/$(grep -o '25 more bad lines not shown' <<<"$OUT")" \
	"20/25 more bad lines not shown"

python3 -c 'for i in range(256): print("10.0.%d.%d/32 c%d" % (i // 256, i % 256, i))' > "$TMP/many.txt"
expect_fail "bad list: 256 classes" "many.txt:256: class 'c255': more than 255 classes" \
	"$BLOOMTAP" watch load "$TMP/many.txt" --instance "$INST"
expect_fail "bad list: no such file" "nope.txt: No such file" "$BLOOMTAP" watch load "$TMP/nope.txt" --instance "$INST"
# a list of ranges whose keys need more than a slot (256 MiB): refused by
# the count, before a key is stored (20,000 such lines took 430 MB to load)
python3 -c 'for i in range(190000): a, b = 0x2000 + i // 256, i % 256; print("%x:%x00::1-%x:%xff:ffff:ffff:ffff:ffff:ffff:fffe c%d" % (a, b, a, b, i % 100))' > "$TMP/big.txt"
RSS=$(python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(r.stderr)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
	"$BLOOMTAP" watch load "$TMP/big.txt" --instance "$INST" 2> "$TMP/big.err")
check "a list too large for a slot: refused, with the keys and the table it would take" \
	grep -q "big.txt: 39140000 keys once its ranges are expanded (IPv4 0, IPv6 39140000): a table of at least 265.4 MiB, more than the 256 MiB a slot holds" "$TMP/big.err"
check "and refused before it took memory: exit 1, under 64 MiB of RSS ($RSS kB)" \
	test "${RSS% *}" = 1 -a "${RSS#* }" -lt 65536
eq "after the bad lists: the table in use answers as before" \
	"$("$BLOOMTAP" watch test 10.0.2.15 69.118.162.5 1.2.3.4 2001:db8:1::9 2001:db8:2::9 --instance "$INST")" "$BEFORE"
eq "after the bad lists: the classes as before" "$("$BLOOMTAP" -j watch show --instance "$INST")" "$SHOW"
python3 -c 'for i in range(255): print("10.0.%d.%d/32 c%d" % (i // 256, i % 256, i))' > "$TMP/255.txt"
# the classes of the table in use keep their ids until the switch
expect_fail "255 new classes over 4 in use: refused, says what to do" "no class id left for" \
	"$BLOOMTAP" watch load "$TMP/255.txt" --instance "$INST"
check "watch clear" "$BLOOMTAP" watch clear --instance "$INST"
W=$("$BLOOMTAP" -j watch load "$TMP/255.txt" --instance "$INST")
eq "then 255 classes load" "$(json_get '["classes"]' <<<"$W")" 255

# ---- ranges: FIRST-LAST stands for the exact set of prefixes covering it;
# the count and the classes at and beside each end against Python's
# ipaddress (summarize_address_range), an oracle of its own ----
python3 - "$TMP/ranges.txt" "$TMP/ranges.want" <<'PY'
import ipaddress, random, sys
random.seed(7)
lines, probes, total = [], [], 0
def add(first, last, cls):
    global total
    lines.append("%s-%s %s" % (first, last, cls))
    total += len(list(ipaddress.summarize_address_range(first, last)))
    for a, inside in ((first, True), (last, True), (first - 1, False), (last + 1, False)):
        probes.append((a, cls if inside else "none"))
# disjoint ranges with gaps, each its own class, IPv4 then IPv6
base = int(ipaddress.IPv4Address("198.18.0.0"))
for i in range(40):
    lo = base + random.randrange(1, 2000)
    hi = lo + random.randrange(0, 3000)
    add(ipaddress.IPv4Address(lo), ipaddress.IPv4Address(hi), "r%d" % i)
    base = hi + 10
base = int(ipaddress.IPv6Address("2001:db8::"))
for i in range(40):
    lo = base + random.randrange(1, 1 << 70)
    hi = lo + random.randrange(0, 1 << 90)
    add(ipaddress.IPv6Address(lo), ipaddress.IPv6Address(hi), "s%d" % i)
    base = hi + 10
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % total)
    for a, c in probes:
        f.write("%s %s\n" % (a, c))
PY
check "watch clear (the 255 classes hold every id)" "$BLOOMTAP" watch clear --instance "$INST"
W=$("$BLOOMTAP" -j watch load "$TMP/ranges.txt" --instance "$INST")
eq "80 ranges: the prefixes after expansion, as Python's count" "$(json_get '["keys"]' <<<"$W")" "$(head -1 "$TMP/ranges.want")"
tail -n +2 "$TMP/ranges.want" | cut -d' ' -f1 | xargs "$BLOOMTAP" watch test --instance "$INST" |
	sed -E 's/^([^:]*|[^ ]*): ([^ ]*).*/\1 \2/' > "$TMP/ranges.got"
eq "each range's ends in its class, the addresses beside them not" \
	"$(diff <(tail -n +2 "$TMP/ranges.want") "$TMP/ranges.got" | head -5)" ""
check "watch clear, and the good list again" bash -c \
	"'$BLOOMTAP' watch clear --instance '$INST' && '$BLOOMTAP' watch load '$TMP/good.txt' --instance '$INST' 2>/dev/null"
printf 'bogus a\n' > "$TMP/broken.txt"
expect_fail "replay --watch with a bad list: refused" "broken.txt:1" \
	"$BLOOMTAP" replay --instance "$INST-bad" --watch "$TMP/broken.txt" "$G"
check "replay --watch with a bad list: no instance made" test ! -e "/sys/fs/bpf/bloomtap/$INST-bad"

# ---- counts, heavy flows' classes ----
check "replay into the listed instance" "$BLOOMTAP" replay --instance "$INST" "$G"
SHOW=$("$BLOOMTAP" -j watch show --instance "$INST")
cls() { python3 -c 'import json,sys; d={c["class"]: c for c in json.load(sys.stdin)}; c=d[sys.argv[1]]; print(c["src_packets"], c["src_bytes"], c["dst_packets"], c["dst_bytes"])' "$1" <<<"$SHOW"; }
# tshark, the outer header only (-E occurrence=f: ICMP errors quote inner ones)
TS=$(tshark -n -r "$G" -E occurrence=f -T fields -e ip.src -e ip.dst -e frame.cap_len 2>/dev/null | \
	awk '$1=="10.0.2.15" {sp++; sb+=$3} $2=="10.0.2.15" {dp++; db+=$3} END {print sp+0, sb+0, dp+0, db+0}')
eq "class me: packets and bytes each way = tshark's" "$(cls me)" "$TS"
H=$("$BLOOMTAP" -j heavy --instance "$INST" -n 3)
eq "heavy -j: the top flow's classes" "$(python3 -c 'import json,sys; f=json.load(sys.stdin)[0]; print(f["src_class"], f["dst_class"])' <<<"$H")" "peers me"
check "heavy: the classes column" bash -c "'$BLOOMTAP' heavy --instance '$INST' -n 1 | grep -q 'peers > me'"
eq "heavy names the instance it shows" "$("$BLOOMTAP" heavy --instance "$INST" -n 1 | head -1)" "instance $INST"

# one rule for the family: the address's form. An IPv6 packet from
# ::ffff:198.18.9.1 is counted as 198.18.9.1 by the datapath, as heavy's
# class names say (before, the datapath took the family from layer 3 and
# the two disagreed)
python3 - "$TMP/mapped.pcap" <<'PY'
import socket, struct, sys
src = socket.inet_pton(socket.AF_INET6, "::ffff:198.18.9.1")
dst = socket.inet_pton(socket.AF_INET6, "2001:db8::1")
udp = struct.pack("!HHHH", 4000, 9, 16, 0) + b"mapped!!"
ip = struct.pack("!IHBB", 6 << 28, len(udp), 17, 64) + src + dst + udp
frame = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x86\xdd" + ip
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(3):
        f.write(struct.pack("<IIII", i, 0, len(frame), len(frame)) + frame)
PY
printf '198.18.9.1 sender\n2001:db8::/32 doc\n' > "$TMP/mapped.txt"
check "replay an IPv6 packet with a v4-mapped source" "$BLOOMTAP" replay --reset --instance "$INST-m" \
	--watch "$TMP/mapped.txt" "$TMP/mapped.pcap"
eq "the datapath: the v4-mapped source in the IPv4 entry's class, the destination in the IPv6 one's" \
	"$("$BLOOMTAP" -j watch show --instance "$INST-m" | python3 -c '
import json, sys; d = {c["class"]: c for c in json.load(sys.stdin)}
print(d["sender"]["src_packets"], d["doc"]["dst_packets"])')" "3 3"
eq "heavy -j names the same classes" "$("$BLOOMTAP" -j heavy --instance "$INST-m" | python3 -c '
import json, sys; f = json.load(sys.stdin)[0]; print(f["src_class"], f["dst_class"])')" "sender doc"
eq "watch test agrees" "$("$BLOOMTAP" watch test ::ffff:198.18.9.1 --instance "$INST-m")" \
	"::ffff:198.18.9.1: sender (198.18.9.1/32)"
"$BLOOMTAP" detach --instance "$INST-m" >/dev/null 2>&1

# ---- set and clear ----
check "watch set: a listed key to another class" "$BLOOMTAP" watch set 10.0.2.15/32 mine --instance "$INST"
eq "watch test: the new class" "$("$BLOOMTAP" watch test 10.0.2.15 --instance "$INST")" "10.0.2.15: mine (10.0.2.15/32)"
# the family of an address is its form, in watch set as in the list
check "watch set: a listed IPv4 key in v4-mapped notation" \
	"$BLOOMTAP" watch set ::ffff:69.118.162.0/120 peers --instance "$INST"
expect_fail "watch set: a key not listed" "not a key of the watch list in use" \
	"$BLOOMTAP" watch set 10.0.2.16 x --instance "$INST"
expect_fail "watch set: a prefix not listed as such" "not a key of the watch list in use" \
	"$BLOOMTAP" watch set 69.118.0.0/16 x --instance "$INST"
check "replay again" "$BLOOMTAP" replay --instance "$INST" "$G"
SHOW=$("$BLOOMTAP" -j watch show --instance "$INST")
eq "after set: the replay counted in the new class" "$(cls mine | cut -d' ' -f1)" "$(cut -d' ' -f1 <<<"$TS")"
eq "and the old class kept its counts" "$(cls me)" "$TS"
check "watch clear" "$BLOOMTAP" watch clear --instance "$INST"
: > "$TMP/empty.txt"
W=$("$BLOOMTAP" -j watch load "$TMP/empty.txt" --instance "$INST")
eq "an empty list loads: no key" "$(json_get '["keys"]' <<<"$W")" 0
eq "after clear: none" "$("$BLOOMTAP" watch test 10.0.2.15 --instance "$INST")" "10.0.2.15: none"
eq "after clear: no class" "$("$BLOOMTAP" -j watch show --instance "$INST")" "[]"

# ---- attach --watch, the agent ----
veth_pair "$NSA" "$VA" "$NSB" "$VB" 9 || { fail "namespaces"; summary; exit 1; }
inb() { in_ns "$NSB" "$@"; }
expect_fail "attach --watch with a bad list: refused" "broken.txt:1" inb "$BLOOMTAP" attach --watch "$TMP/broken.txt" "$VB"
check "attach --watch with a bad list: nothing attached" test ! -e "/sys/fs/bpf/bloomtap/$VB"
printf '198.18.9.1 sender\n198.18.9.0/24 lab\n' > "$TMP/lab.txt"
check "attach --watch" inb "$BLOOMTAP" attach --watch "$TMP/lab.txt" "$VB"
eq "attach --watch: the list in use" "$(inb "$BLOOMTAP" watch test 198.18.9.1 198.18.9.7 "$VB")" \
	"$(printf '198.18.9.1: sender (198.18.9.1/32)\n198.18.9.7: lab (198.18.9.0/24)')"
expect_fail "run --check with a bad list" "broken.txt:1" inb "$BLOOMTAP" run --check --watch "$TMP/broken.txt" "$VB"
cat > "$TMP/agent.conf" <<EOF
listen = 127.0.0.1:$PORT
watch = $TMP/lab.txt
archive = $TMP/archive
EOF
# nsenter execs the agent: $! is the agent itself, which SIGHUP reaches
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run --config "$TMP/agent.conf" "$VB" \
	> "$TMP/agent.log" 2>&1 &
AGENT=$!
wait_for "/healthz answers" 30 inb curl -s -m 1 127.0.0.1:$PORT/healthz
# the agent builds tables on a thread of their own: poll for its line
wait_for "agent: the list loaded (logged)" 30 grep -q "$VB: watch list $TMP/lab.txt: 2 keys in 2 classes" "$TMP/agent.log" &&
	ok "agent: the list loaded (logged)"
in_ns "$NSA" ping -c 5 -i 0.05 -q 198.18.9.2 >/dev/null
M=$(inb curl -s -m 5 127.0.0.1:$PORT/metrics)
printf '%s\n' "$M" > "$TMP/metrics.txt"
check "/metrics: promtool check metrics" bash -c "promtool check metrics < '$TMP/metrics.txt'"
check "/metrics: class packets from the sender" grep -q "^bloomtap_class_packets_total{interface=\"$VB\",class=\"sender\",side=\"src\",direction=\"ingress\"} [5-9]" <<<"$M"
N1=$(awk -v vb="$VB" '$1 == "bloomtap_class_packets_total{interface=\""vb"\",class=\"sender\",side=\"src\",direction=\"ingress\"}" {print $2}' <<<"$M")
printf '198.18.9.1 sender\n198.18.9.2 receiver\n' > "$TMP/lab.txt"
LOADS=$(count_of "$VB: watch list $TMP/lab.txt:" "$TMP/agent.log")
sighup_then $AGENT "$TMP/agent.log"
wait_for "SIGHUP: the new list loaded (logged)" 30 bash -c \
	"[ \$(grep -c '$VB: watch list $TMP/lab.txt:' '$TMP/agent.log') -gt $LOADS ]"
eq "SIGHUP: the new list in use" "$(inb "$BLOOMTAP" watch test 198.18.9.2 198.18.9.7 "$VB")" \
	"$(printf '198.18.9.2: receiver (198.18.9.2/32)\n198.18.9.7: none')"
M=$(inb curl -s -m 5 127.0.0.1:$PORT/metrics)
N2=$(awk -v vb="$VB" '$1 == "bloomtap_class_packets_total{interface=\""vb"\",class=\"sender\",side=\"src\",direction=\"ingress\"}" {print $2}' <<<"$M")
check "SIGHUP: class sender kept its counts ($N1 -> $N2)" test "${N2:-0}" -ge "${N1:-1}"
check "SIGHUP: class lab gone from /metrics" test "$(grep -c 'class="lab"' <<<"$M")" = 0
printf 'bogus\n' > "$TMP/lab.txt"
sighup_then $AGENT "$TMP/agent.log"
check "SIGHUP, a bad list: not applied, said so" grep -q "lab.txt:1.*not applied" <(tail -3 "$TMP/agent.log" | tr '\n' ' ')
eq "SIGHUP, a bad list: the list before it stays" "$(inb "$BLOOMTAP" watch test 198.18.9.2 "$VB")" \
	"198.18.9.2: receiver (198.18.9.2/32)"
kill $AGENT; wait $AGENT 2>/dev/null; AGENT=

summary
[ $FAIL -eq 0 ]
