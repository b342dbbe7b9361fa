#!/usr/bin/env bash
# make test-mutants: each mutant is a deliberately broken bloomtap (one
# change to the source); the suite that should catch it must fail. A
# mutant that passes its suite is a check that cannot fail. Not part of
# make test: every mutant is a build and a suite run.
#   tests/mutants.sh [NAME...]   (all when none is named)
source "$(dirname "$0")/lib.sh"
need_root "mutants"
PCAPS_DIR=$(cd "$PCAPS" && pwd)

# name | file | the text | its replacement | the suite that must fail
MUTANTS=(
'rotate-no-repair|user/windows.c|		bt_keeper_turn(&k, false, true);
		if (bt_spie_close_current(&s)) {|		if (bt_spie_close_current(&s)) {|tests/keeper_kills.sh'
'ring-no-repair|user/keeper.c|if (bt_spie_repair(s))|if (0 && bt_spie_repair(s))|tests/keeper_kills.sh'
'archive-twice|user/archive.c|	same_first_window(dir|	if (0) same_first_window(dir|tests/keeper_kills.sh'
'never-ready|user/spie.c|		ready_window(s, i, s->win[prev].seq + 1);|		(void)prev;
		break;|tests/keeper_kills.sh'
'watch-reader-unchecked|user/watch.c|		if (__atomic_load_n(&ctl->watch, __ATOMIC_ACQUIRE) != gen) {|		if (0) {|tests/watch.sh'
'set-trusts-filter|user/watch.c|	old = t.hdr.keys > t.hdr.markers ? bt_bloomier_member(|	old = t.hdr.keys > t.hdr.markers ? bt_bloomier_get(|.output/tests/test_watch'
'reload-on-the-loop|user/agent.c|			bt_watch_loader_reload();	/* on the reload thread */|			reconfigure();|tests/turning.sh'
'ingress-stale|user/agent.c|	bt_instance_reread_meta(&f->inst);|	(void)0;|tests/ipfix.sh'
'trace-exit-2|user/trace.c|	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE;|	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE; if (argc > 2) return BT_EXIT_USAGE;|tests/spie.sh'
'watch-class-off-by-one|user/watch.c|	return bt_watch_classify(&t->keys, &v, addr, v4, how);|	__u32 c = bt_watch_classify(&t->keys, &v, addr, v4, how); return c ? c % 200 + 1 : 0;|.output/tests/test_watch'
'watch-no-markers|user/watchlpm.c|		if (p > k->len)
			continue;|		if (1)
			continue;|.output/tests/test_watch'
'watch-every-key-a-leaf|user/watchlpm.c|			e[out - 2].class_id &= ~BT_WATCH_KEY_LEAF;|			(void)0;|.output/tests/test_watch'
'datapath-no-final-probe|bpf/watch.bpf.h|	return !s->known && s->best <= 128|	return 0 && !s->known && s->best <= 128|.output/tests/test_watch'
'key-in-status|user/status.c|		json_object_object_add(o, "kind", json_object_new_string(kind));|		{ char kh[40]; snprintf(kh, sizeof(kh), "%016llx", (unsigned long long)inst.meta.hash_key.k0); json_object_object_add(o, "kh", json_object_new_string(kh)); } json_object_object_add(o, "kind", json_object_new_string(kind));|tests/faults.sh'
'ipfix-drops-a-flow|user/ipfix.c|	for (size_t i = 0; i < r->n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct flow_rec rec = {|	for (size_t i = 1; i < r->n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct flow_rec rec = {|tests/ipfix.sh'
'api-ignores-n|user/http.c|	o = bt_heavy_json(&f->hm, top, false, NULL);|	o = bt_heavy_json(&f->hm, 100000, false, NULL);|tests/agent.sh'
'heavy-json-hides-tcp|user/heavy.c|		const struct bt_heavy_flow *f = &r->flows[i];
		struct json_object *o = json_object_new_object();|		const struct bt_heavy_flow *f = &r->flows[i];
		if (f->key.proto == 6)
			continue;
		struct json_object *o = json_object_new_object();|tests/cli.sh'
)

only=" $* "
for m in "${MUTANTS[@]}"; do
	IFS='|' read -r -d '' name file old new suite <<<"$m" || true
	suite=${suite%$'\n'}
	[ -n "$*" ] && [[ "$only" != *" $name "* ]] && continue
	dir=$(mktemp -d)
	tar -C "$TOP" --exclude='./.output*' --exclude=./.git -cf - . | tar -C "$dir" -xf -
	if ! python3 - "$dir/$file" "$old" "$new" <<'PY'
import sys
p, old, new = sys.argv[1:4]
s = open(p).read()
if s.count(old) != 1:
    sys.exit("the text to change is not in %s once" % p)
open(p, "w").write(s.replace(old, new))
PY
	then
		fail "mutant $name: could not apply"; rm -rf "$dir"; continue
	fi
	# a suite is a script of tests/, or a C test binary the mutant's tree builds
	targets="all" run=(bash "$TOP/$suite")
	[[ $suite == .output/* ]] && targets="all $suite" run=("$dir/$suite")
	if ! make -s -C "$dir" BT_PCAPS="$PCAPS_DIR" $targets >"$dir/build.log" 2>&1; then
		fail "mutant $name: does not build"; tail -5 "$dir/build.log"; rm -rf "$dir"; continue
	fi
	BLOOMTAP=$dir/.output/bloomtap BT_PCAPS=$PCAPS_DIR KEEPER_KILL_ROUNDS=40 \
		timeout 900 "${run[@]}" > "$dir/suite.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		ok "mutant $name caught by $suite ($(grep -c '^  FAIL' "$dir/suite.log") checks failed)"
	else
		fail "mutant $name passed $suite"
	fi
	rm -rf "$dir"
done
summary
[ $FAIL -eq 0 ]
