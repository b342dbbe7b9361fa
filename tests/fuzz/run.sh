#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS from its corpus under
# tests/fuzz/corpus/ (seeded from ../shared/data/pcaps/ and by hand), after
# replaying every input kept in tests/fuzz/regressions/. Ends with
# "N passed, N failed": a target passes when it found nothing.
cd "$(dirname "$0")/../.." || exit 1
SECONDS_EACH=${1:-60}
OUT=.output/fuzz
PASS=0 FAIL=0
# the targets: defined once, in the Makefile
for t in ${FUZZ_TARGETS:-$(make -s print-fuzz-targets)}; do
	corpus=$OUT/corpus/$t
	mkdir -p "$corpus" "$OUT/artifacts/$t"
	cp -n tests/fuzz/corpus/$t/* "$corpus"/ 2>/dev/null
	if [ "$t" = capture ]; then	# the captures are seeds too
		for f in "${BT_PCAPS:-$(make -s print-pcaps)}"/*.pcap*; do
			[ "$(stat -c %s "$f")" -le 4096 ] && cp -n "$f" "$corpus"/ 2>/dev/null
		done
	fi
	regress=()
	[ -d tests/fuzz/regressions/$t ] && regress=(tests/fuzz/regressions/$t/*)
	if [ ${#regress[@]} -gt 0 ] && ! $OUT/fuzz_$t "${regress[@]}" >/dev/null 2>&1; then
		echo "  FAIL  $t: a kept regression input crashes again"; FAIL=$((FAIL + 1)); continue
	fi
	if $OUT/fuzz_$t -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 \
		-artifact_prefix="$OUT/artifacts/$t/" "$corpus" > "$OUT/$t.log" 2>&1; then
		echo "  ok    fuzz_$t: $(grep -o 'Done [0-9]* runs' "$OUT/$t.log" | grep -o '[0-9]*') inputs in ${SECONDS_EACH} s, nothing found"
		PASS=$((PASS + 1))
	else
		echo "  FAIL  fuzz_$t: see $OUT/$t.log and $OUT/artifacts/$t/"
		tail -30 "$OUT/$t.log" | sed 's/^/        /'
		FAIL=$((FAIL + 1))
	fi
done
echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
