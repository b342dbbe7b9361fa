#!/usr/bin/env bash
# Runs every test suite and ends with one line: "N passed, N failed".
# cmocka suites report "[  PASSED  ] N test(s)"; the shell and Python suites
# end with their own "N passed, N failed" line; both are added up here.
cd "$(dirname "$0")/.." || exit 1
# Builds: .output, then .output/asan and the fuzzers when present;
# ONLY_BUILD=DIR runs the suites against that one build alone, and
# SUITES="test_unit drops ..." only the suites named. A suite's name is
# its file's: tests/live/spie.sh is spie, tests/prog/test_spie.c is
# test_spie; the ASan pass's are asan/test_spie, asan/spie and so on.
total_pass=0 total_fail=0 total_skip=0 broken=()
# tshark's dissections kept by file (tests/oracle/oracle.py): the ASan pass and
# the kernels' suites ask for the same ones
export TSHARK_CACHE=${TSHARK_CACHE:-$PWD/.output/tshark}
# Most suites read the real captures: without them, one clear failure
# rather than a hundred checks failing on missing files
PCAPS=${BT_PCAPS:-$(make -s print-pcaps)}
if [ ! -r "$PCAPS/MANIFEST.tsv" ]; then
	echo "tests/run.sh: no captures at $PCAPS (its MANIFEST.tsv): the suites replay them;" \
	     "put ../shared/data/pcaps beside the checkout, or set BT_PCAPS"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

add_counts() {	# suite name, its output file, its exit code
	local name=$1 out=$2 rc=$3 p=0 f=0 s=0 line
	if grep -q '^\[==========\]' "$out"; then
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	else
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
		p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
		s=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
	fi
	p=${p:-0} f=${f:-0} s=${s:-0}
	# a suite that crashed or printed no summary counts as one failure
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; broken+=("$name"); fi
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
	printf '== %-17s %s passed, %s failed, %s skipped\n' "$name" "$p" "$f" "$s"
}

# Each suite's time, every skip with its reason, every failed check and
# the suites ended at their time limit, for the closing report (a CI log
# may keep only its tail).
times=() skips=() failures=() timed_out=()

# Other names SUITES takes, those of before the files' names (spie and
# watch are the live suites': the cmocka ones are test_spie, test_watch)
declare -A SUITE_ALIAS=(
	[unit]=test_unit [datapath]=test_datapath [heavy]=test_heavy
	[ring-model]=test_ring [first-lab]=firstlab [windows]=spie
	[keeper-kills]=keeper_kills [slow-resolver]=slow_resolver
	[watch-cli]=watch [heavy-live]=heavy_live [both-lab]=both_lab
	[workload-drops]=workload_drops [workload-tour]=wltour
	[heavy-pcaps]=heavy_oracle [watch-pcaps]=watch_oracle
	[doc-commands]=doc_commands [kernels]=vmtest)
suites=()
for s in $SUITES; do
	pre=; [[ $s == asan/* ]] && pre=asan/ s=${s#asan/}
	suites+=("$pre${SUITE_ALIAS[$s]:-$s}")
done
SUITES=${suites[*]}

# listing=1: run_suite and bg_suite only name their suite, in known
listing= known=()
wanted() { [ -z "$listing" ] && { [ -z "$SUITES" ] || [[ " $SUITES " == *" $1 "* ]]; }; }
# a suite that hangs is ended and named; the guests' suites boot QEMU
limit_of() { case $1 in vmtest) echo 3400 ;; *) echo "${SUITE_TIMEOUT:-1200}" ;; esac; }

run_suite() {	# name, command...
	local name=$1 out rc t0; shift
	[ -n "$listing" ] && { known+=("$name"); return 0; }
	# SUITES="a b": only these (make test-kernels runs a subset in each VM)
	wanted "$name" || return 0
	out=$(mktemp)
	echo "== $name: $*"
	t0=$(date +%s)
	timeout -k 30 "$(limit_of "$name")" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	suite_done "$name" "$out" "$rc" "$t0"
}

# One suite at a time may run in the background, beside the ones that
# follow: its output is printed, and counted, when bg_wait collects it.
bg_pid=
bg_suite() {	# name, command...
	local name=$1; shift
	[ -n "$listing" ] && { known+=("$name"); return 0; }
	wanted "$name" || return 0
	bg_name=$name bg_out=$(mktemp) bg_t0=$(date +%s)
	echo "== $name: $* (in the background: its report comes when it ends)"
	# its end kept: collected after the suites beside it, it took less
	{ timeout -k 30 "$(limit_of "$name")" "$@" >"$bg_out" 2>&1; echo $? >"$bg_out.rc"
	  date +%s >"$bg_out.end"; } &
	bg_pid=$!
}
bg_wait() {
	[ -n "$bg_pid" ] || return 0
	wait "$bg_pid"; bg_pid=
	echo "== $bg_name (ran in the background)"
	cat "$bg_out"
	# no exit code written (its job killed): a failure, not no count
	suite_done "$bg_name" "$bg_out" "$(cat "$bg_out.rc" 2>/dev/null || echo 1)" "$bg_t0" \
		"$(cat "$bg_out.end" 2>/dev/null)"
	rm -f "$bg_out.rc" "$bg_out.end"
}

suite_done() {	# name, its output file, its exit code, its start[, its end]: the accounting
	local name=$1 out=$2 rc=$3 t0=$4 t1=${5:-$(date +%s)} limit
	limit=$(limit_of "$name")
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "== $name: ended after its time limit of $limit s (SUITE_TIMEOUT)" | tee -a "$out"
		echo "  FAIL  $name: timed out" >>"$out"
		timed_out+=("$name")
	fi
	times+=("$(printf '%-18s %5d s' "$name" $((t1 - t0)))")
	while IFS= read -r line; do skips+=("$name: $line"); done < <(
		sed -n 's/^ *SKIP:\{0,1\} *//p; s/^\[  SKIPPED \] \(test_.*\)/\1/p' "$out" | sort -u)
	# a FAIL line of a shell or Python suite; cmocka's test, message and line
	while IFS= read -r line; do failures+=("$name: $line"); done < <(
		sed -n 's/^ *FAIL:\{0,1\} \{1,\}//p; s/^\[  FAILED  \] \(test_.*\)/\1/p
			s/^\[  ERROR   \] --- \(.*\)/  \1/p; s/^\[   LINE   \] --- \(.*\)/  \1/p' "$out" |
		awk '!seen[$0]++' | head -30)
	add_counts "$name" "$out" "$rc"
	rm -f "$out"
	sanitizer_reports "$name"
}

# Under the sanitizers every report goes to a file of SAN_DIR (log_path),
# whoever ran the program: a report in a $(...) capture, a background job
# or a command whose exit status nobody read still fails the suite.
SAN_DIR=
sanitizer_reports() {	# suite name
	local f n=0
	[ -n "$SAN_DIR" ] || return 0
	for f in "$SAN_DIR"/*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		echo "   sanitizer report during $1: $f"; sed 's/^/     /' "$f" | head -40
		rm -f "$f"
	done
	if [ $n -gt 0 ]; then
		total_fail=$((total_fail + 1)); broken+=("$1 (sanitizer)")
		echo "== $1: $n sanitizer report(s): one failure"
	fi
}

# every suite against one build; BLOOMTAP and the C tests point into it
run_build() {	# label, build dir
	local label=$1
	BT_BUILD=$2
	export BLOOMTAP=$PWD/$BT_BUILD/bloomtap
	run_suite ${label}test_unit $BT_BUILD/tests/test_unit
	run_suite ${label}test_datapath $BT_BUILD/tests/test_datapath
	run_suite ${label}test_heavy $BT_BUILD/tests/test_heavy
	run_suite ${label}test_spie $BT_BUILD/tests/test_spie
	run_suite ${label}test_watch $BT_BUILD/tests/test_watch
	# the ring's model holds none of bloomtap's code: once is enough
	[ -z "$label" ] && run_suite test_ring $BT_BUILD/tests/test_ring
	run_suite ${label}cli         tests/live/cli.sh
	run_suite ${label}netns       tests/live/netns.sh
	run_suite ${label}integration tests/live/integration.sh
	run_suite ${label}firstlab    tests/live/firstlab.sh
	run_suite ${label}spie        tests/live/spie.sh
	run_suite ${label}horizon     tests/live/horizon.sh
	# under ASan, 50 rounds reach each kill step about 10 times (memory
	# errors in the mending); the main pass's 200 look for rare orders
	KEEPER_KILL_ROUNDS=${label:+50} run_suite ${label}keeper_kills tests/live/keeper_kills.sh
	run_suite ${label}multihop    tests/live/multihop.sh
	run_suite ${label}pathtrace   tests/live/pathtrace.sh
	# under ASan, 20 agents: 50 instrumented agents are more than the machine
	FLEET_N=${label:+20} run_suite ${label}fleet tests/live/fleet.sh
	run_suite ${label}drops       tests/live/drops.sh
	run_suite ${label}recorder    tests/live/recorder.sh
	run_suite ${label}uppers      tests/live/uppers.sh
	run_suite ${label}agent       tests/live/agent.sh
	run_suite ${label}webapi      tests/live/webapi.sh
	run_suite ${label}privs       tests/live/privs.sh
	run_suite ${label}ipfix       tests/live/ipfix.sh
	run_suite ${label}slow_resolver tests/live/slow_resolver.sh
	run_suite ${label}dashboard   tests/live/dashboard.sh
	run_suite ${label}watch       tests/live/watch.sh
	run_suite ${label}turning     tests/live/turning.sh
	run_suite ${label}heavy_live  tests/live/heavy_live.sh
	run_suite ${label}tap         tests/live/tap.sh
	run_suite ${label}egress      tests/live/egress.sh
	run_suite ${label}gro         tests/live/gro.sh
	run_suite ${label}both_lab    tests/live/both_lab.sh
	run_suite ${label}deploy      tests/ship/deploy.sh
	run_suite ${label}faults      tests/live/faults.sh
	run_suite ${label}workloads   tests/live/workloads.sh
	run_suite ${label}wlattr      tests/live/wlattr.sh
	run_suite ${label}workload_drops tests/live/workload_drops.sh
	run_suite ${label}wltour      tests/live/wltour.sh
	run_suite ${label}wlpods      tests/live/wlpods.sh
	# the oracle checks the datapath (one BPF object for both builds)
	# against tshark; under ASan, heavy_oracle and watch_oracle replay every
	# capture through the same user space
	[ -z "$label" ] && run_suite oracle python3 tests/oracle/oracle.py
	run_suite ${label}heavy_oracle python3 tests/oracle/heavy_oracle.py
	run_suite ${label}watch_oracle python3 tests/oracle/watch_oracle.py
}

# every suite of this run, in order (run once with listing=1 to name them)
all_suites() {
if [ -n "$ONLY_BUILD" ]; then
	run_build "" "$ONLY_BUILD"
else
	# the systemd guest's disk, made while the main pass runs (about 4
	# minutes of download and dpkg, mostly beside suites that wait on labs'
	# timers): the systemd suite finds it made, or waits on its lock. Its
	# errors are the suite's: it makes the disk again and prints them.
	deb=$(make -s print-deb 2>/dev/null)
	wanted systemd && [ "$(id -u)" = 0 ] && [ -f "$deb" ] &&
		(tests/kernels/rootfs.sh "$deb" "${BT_TEST_CACHE:-/var/cache/bloomtap-tests}" >/dev/null 2>&1 &)
	# and the previous ABI's package for its upgrade (a dpkg-buildpackage
	# run the first time, about 40 s; kept by its commit), the same way
	wanted systemd && [ "$(id -u)" = 0 ] && [ -f "$deb" ] &&
		(tests/ship/prev_abi_deb.sh >/dev/null 2>&1 &)
	# the datapath's cmocka suites on Debian 12's kernel with 4 CPUs, under
	# QEMU (TEST_KERNELS= none), the stacked devices this host's kernel
	# cannot make (uppers: bond, VLAN, macvlan) and egress on the tc hook
	# (6.1 has no tcx; both-lab's three hosts add no hook egress does not
	# take there): about 25 minutes of the guest alone, 45 beside both
	# passes (the second full run of 2026-12-02), so it starts first
	# and runs beside both passes, whose suites mostly wait (labs' timers,
	# apt, podman, npm, the systemd guest's boot); its checks are its own
	# (BPF_PROG_TEST_RUN and labs in the guest, their bounds scaled:
	# tests/kernels/guest.sh). The oracles over every capture (oracle,
	# heavy_oracle, watch_oracle) run on the host here, and in every guest in
	# make test-kernels
	[ -n "${TEST_KERNELS-6.1}" ] && bg_suite vmtest env BT_BUILD=.output VM_TIMEOUT=3300 \
		KERNEL_SUITES="${KERNEL_SUITES:-test_unit,test_datapath,test_heavy,test_spie,test_watch,uppers,egress}" \
		tests/kernels/vmtest.sh ${TEST_KERNELS-6.1}
	run_build "" .output
	# user space again under ASan and UBSan, when make test built it (and
	# SUITES names one of its suites: the suites after it take its BLOOMTAP)
	if [ -x .output/asan/bloomtap ] &&
	   { [ -n "$listing" ] || [ -z "$SUITES" ] || [[ " $SUITES" == *" asan/"* ]]; }; then
		SAN_DIR=$(mktemp -d)
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$SAN_DIR/asan \
			UBSAN_OPTIONS=print_stacktrace=1:log_path=$SAN_DIR/ubsan run_build asan/ .output/asan
		rmdir "$SAN_DIR"; SAN_DIR=
	fi
	# the Debian package and the container image (make deb, make image),
	# installed and run; the Kubernetes manifests checked offline
	run_suite package     tests/ship/package.sh
	run_suite image       tests/ship/image.sh
	run_suite manifests   tests/ship/manifests.sh
	run_suite docs        python3 tests/ship/docs.py
	# every bloomtap command line and usage the manual gives, accepted
	run_suite doc_commands python3 tests/ship/doc_commands.py
	# user/'s layers: no upward include, no import circle, each layer's rule
	run_suite layers      python3 tests/ship/layers.py
	# bpf/: every entry point in bloomtap.bpf.c, every knob in config.bpf.h
	run_suite bpf_layout  python3 tests/ship/bpf_layout.py
	# the commit messages since tests/ship/commits.base: subject, blank, body
	run_suite commits     python3 tests/ship/commits.py
	# every command the run calls comes from a package make deps installs
	run_suite deps        python3 tests/ship/deps.py
	# the .deb under systemd as PID 1, in a Debian 12 guest (QEMU)
	run_suite systemd     tests/ship/systemd.sh
	# and every fuzz target for a few seconds, when make test built them
	[ -x .output/fuzz/fuzz_capture ] && run_suite fuzz tests/fuzz/run.sh "${FUZZ_TEST_SECONDS:-8}"
	bg_wait
fi
}

# a name SUITES gives that no suite of this run has is an error, not a
# run of nothing; two suites of one name, one too
listing=1; all_suites; listing=
unknown=()
for s in $SUITES; do [[ " ${known[*]} " == *" $s "* ]] || unknown+=("$s"); done
twice=$(printf '%s\n' "${known[@]}" | sort | uniq -d | tr '\n' ' ')
if [ -n "$twice" ]; then
	echo "tests/run.sh: two suites named $twice(a name is its file's)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
if [ ${#unknown[@]} -gt 0 ]; then
	echo "tests/run.sh: SUITES names no suite of this run: ${unknown[*]}"
	echo "  the suites (the ASan pass's after make asan-build, fuzz after make fuzz-build):"
	printf '%s\n' "${known[@]}" | grep -v '^asan/' | tr '\n' ' ' | fmt -w 76 | sed 's/^/    /'
	printf '%s\n' "${known[@]}" | sed -n 's,^asan/,,p' | tr '\n' ' ' | sed 's/^./asan\/ and: &/' |
		fmt -w 76 | sed 's/^/    /'
	echo "  and the former names, still taken:"
	for a in "${!SUITE_ALIAS[@]}"; do echo "$a=${SUITE_ALIAS[$a]}"; done | sort | tr '\n' ' ' |
		fmt -w 76 | sed 's/^/    /'
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
all_suites

echo
echo "each suite's time:"
printf '  %s\n' "${times[@]}"
[ ${#timed_out[@]} -gt 0 ] && echo "suites ended at their time limit: ${timed_out[*]}"
if [ ${#skips[@]} -gt 0 ]; then
	echo "skips, and why:"
	printf '  %s\n' "${skips[@]}"
fi
if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
[ ${#broken[@]} -gt 0 ] && echo "suites that exited non-zero without failing a test, or met a sanitizer: ${broken[*]}"
echo
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
