#!/usr/bin/env bash
# What a workloads scan costs: N namespaces (default 500) made with
# `ip netns add`, an address each (198.19.X.Y/32 on lo), then
# `bloomtap workloads --repeat R`: the first scan (every namespace
# entered and dumped) and a refresh (nothing changed), then a refresh
# after one namespace was added and one address changed; then N
# namespaces each held by a process (unshare --net sleep), whose cgroups
# the walk reads. Removes its namespaces and processes on exit, also on
# failure. Not a test: it prints times.
#   bench/workloads.sh [N] [R]
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BLOOMTAP=${BLOOMTAP:-$TOP/.output/bloomtap}
N=${1:-500} R=${2:-20} ID=$$
[ "$(id -u)" = 0 ] || { echo "bench/workloads.sh: needs root" >&2; exit 1; }
HELD=()
cleanup() {
	[ ${#HELD[@]} -gt 0 ] && kill "${HELD[@]}" 2>/dev/null && wait "${HELD[@]}" 2>/dev/null
	for i in $(seq 0 "$N"); do echo "netns delete btwb-$ID-$i"; done | ip -force -batch - 2>/dev/null
}
trap cleanup EXIT INT TERM
for i in $(seq 0 $((N - 1))); do echo "netns add btwb-$ID-$i"; done | ip -batch - || exit 1
for i in $(seq 0 $((N - 1))); do
	ip -n "btwb-$ID-$i" addr add "198.19.$((i / 250)).$((i % 250 + 1))/32" dev lo || exit 1
done
echo "$N namespaces, an address each; $(ls /proc | grep -c '^[0-9]') processes on the host"
"$BLOOMTAP" workloads --repeat "$R" >/dev/null
# a refresh after a change: the scan sees a new namespace and a new address
( sleep 0.5; ip netns add "btwb-$ID-$N"; ip -n "btwb-$ID-0" addr add 198.19.255.1/32 dev lo ) &
"$BLOOMTAP" -j workloads --repeat 200 | python3 -c '
import json, sys
w = json.load(sys.stdin)
print("after the change:", len(w), "workloads listed")'
wait
for i in $(seq 0 "$N"); do echo "netns delete btwb-$ID-$i"; done | ip -force -batch - 2>/dev/null
for i in $(seq 1 "$N"); do unshare --net sleep 600 & HELD+=($!); done
until [ "$(for p in "${HELD[@]}"; do readlink /proc/$p/ns/net; done | sort -u | wc -l)" -ge "$N" ]; do
	sleep 0.1
done
echo "$N namespaces held by processes"
"$BLOOMTAP" workloads --repeat "$R" >/dev/null
