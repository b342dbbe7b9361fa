#!/usr/bin/env bash
# make test-mutants: each mutant is a deliberately broken bloomtap (one
# change to the source); the suite that should catch it must fail. A
# mutant that passes its suite is a check that cannot fail. Each suite
# first runs once unmutated: a mutant counts as caught only by a suite
# that passed without it. Not part of make test: every mutant is a build
# and a suite run.
#   tests/mutants.sh [NAME...]   (all when none is named)
source "$(dirname "$0")/lib/lib.sh"
need_root "mutants"
PCAPS_DIR=$(cd "$PCAPS" && pwd)

# name | file | the text | its replacement | the suite that must fail
# (no "|" inside a field)
MUTANTS=(
'rotate-no-repair|user/cmd/windows.c|		bt_keeper_turn(&k, false, true);
		if (bt_spie_close_current(&s)) {|		if (bt_spie_close_current(&s)) {|tests/live/keeper_kills.sh'
'ring-no-repair|user/instance/keeper.c|if (bt_spie_repair(s))|if (0 && bt_spie_repair(s))|tests/live/keeper_kills.sh'
'archive-twice|user/core/archive.c|	same_first_window(dir|	if (0) same_first_window(dir|tests/live/keeper_kills.sh'
'never-ready|user/instance/spie.c|		ready_window(s, i, s->win[prev].seq + 1);|		(void)prev;
		break;|tests/live/keeper_kills.sh'
'watch-reader-unchecked|user/instance/watch.c|		if (__atomic_load_n(&ctl->watch, __ATOMIC_ACQUIRE) != gen) {|		if (0) {|tests/live/watch.sh'
'set-trusts-filter|user/instance/watch.c|		old = bt_bloomier_member(&t.keys,|		old = bt_bloomier_get(&t.keys,|.output/tests/test_watch'
'reload-on-the-loop|user/agent/agent.c|			bt_watch_loader_reload();	/* on the reload thread */|			reconfigure();|tests/live/turning.sh'
'ingress-stale|user/agent/agent.c|	bt_instance_reread_meta(&f->inst);|	(void)0;|tests/live/ipfix.sh'
'trace-exit-2|user/cmd/trace.c|	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE;|	int n = bt_parse_args(&trace_spec, argc, argv), ret = BT_EXIT_USAGE; if (argc > 2) return BT_EXIT_USAGE;|tests/live/spie.sh'
'watch-class-off-by-one|user/instance/watch.c|	return bt_watch_classify(&t->keys, &v, addr, v4, how);|	__u32 c = bt_watch_classify(&t->keys, &v, addr, v4, how); return c ? c % 200 + 1 : 0;|.output/tests/test_watch'
'watch-no-markers|user/core/watchlpm.c|		if (p > k->len)
			continue;|		if (1)
			continue;|.output/tests/test_watch'
'watch-every-key-a-leaf|user/core/watchlpm.c|			e[out - 2].class_id &= ~BT_WATCH_KEY_LEAF;|			(void)0;|.output/tests/test_watch'
# time-bounded traceback: a window at the range's edge, the rate's windows
'horizon-edge-skipped|user/report/trace_search.c|	return p->lo <= e && s <= p->hi;|	return p->lo <= s && s <= p->hi && e >= s;|tests/live/horizon.sh'
'horizon-no-clock-slack|user/report/trace_query.c|	t->slack = inst ? bt_clock_span(inst) : 0;|	t->slack = 0;|tests/live/horizon.sh'
'horizon-rate-all-windows|user/report/trace_archive.c|		trace_window_searched(sub, k, h.fpr, sent);|		trace_window_searched(order, m, h.fpr, sent);|tests/live/horizon.sh'
# IPv4's range table
'range-first-address-excluded|include/bloomtap.h|0xfffe)|0)|.output/tests/test_watch'
'range-parent-not-resumed|user/core/watchlpm.c|(__u64)cursor, depth ? stack[depth - 1].entry : base };|(__u64)cursor, base };|.output/tests/test_watch'
'range-set-ignores-length|user/core/watchlpm.c|*w >> 16 <= last && ((*w >> 8) & 0xff) == len) {|*w >> 16 <= last) {|.output/tests/test_watch'
# workloads named as the packets passed, not as the table is now
'workload-at-query-time|user/instance/sketch.c|		f->wl[1] = bt_wl_unpack(f->key.pad, 1);|		f->wl[1] = ({ __u32 bt_wl_id_now(const struct bt_instance *, const __u8 *); bt_wl_id_now(m->inst, f->key.dst); });|tests/live/wlattr.sh'
'trace-workload-at-query-time|user/report/trace_render.c|bt_wl_hist_find(&t->wlh, &p->pkt.w[2 * side], lo, hi, at, got, WL_MAX);|bt_wl_hist_find(&t->wlh, &p->pkt.w[2 * side], now, now, now, got, WL_MAX);|tests/live/wlattr.sh'
# /metrics: the workloads' series past their cap, the overflow's counts
'workload-metrics-cap-ignored|user/agent/metrics.c|		if (s->state == WLS_OWN && own >= a->cfg.metrics_workloads) {|		if (s->state == WLS_OWN && own > a->cfg.metrics_workloads) {|tests/live/wlattr.sh'
'workload-metrics-overflow-recounted|user/agent/metrics.c|			s->last = n[id];
			continue;|			continue;|tests/live/wlattr.sh'
'metrics-label-unescaped|user/agent/metrics.c|			buf[o++] = '"'\\\\'"';|			(void)0;|.output/tests/test_unit'
'ipfix-workloads-unnamed|user/report/ipfix.c|			.src_wl = wl_field(wl, f->wl[0]), .dst_wl = wl_field(wl, f->wl[1]),|			.src_wl = wl_field(NULL, 0), .dst_wl = wl_field(NULL, 0),|tests/live/wlattr.sh'
'workload-egress-unnamed|bpf/egress.bpf.h|	workload_ids(&pi->key, c, bytes, segs, BT_DIR_EGRESS, wl);|	wl[0] = wl[1] = 0;|tests/live/wlattr.sh'
'datapath-range-index-strict|bpf/watch.bpf.h|(first > pos0 ? first - pos0 : 0) - 1;|(first > pos0 ? first - pos0 : 0);|.output/tests/test_watch'
'range-word-wrong-step|user/core/watchlpm.c|hi > lo ? e[mid * BT_WATCH_R_LINE] >> 16 : 0);|hi > lo ? e[(mid - 1) * BT_WATCH_R_LINE] >> 16 : 0);|.output/tests/test_watch'
'datapath-range-guess-wrong|bpf/watch.bpf.h|index_start(slot, h, wlo) <= a16)|index_start(slot, h, wlo) >= a16)|.output/tests/test_watch'
'datapath-chunk-wrong|bpf/watch.bpf.h|	__u32 e = g & (BT_WATCH_CHUNK - 1);|	__u32 e = g & (BT_WATCH_CHUNK / 2 - 1);|.output/tests/test_watch'
'chunk-filled-wrong|user/instance/watch.c|		memcpy(p, b->cells + from,|		memcpy(p, b->cells + from / 2,|.output/tests/test_watch'
'cell-group-magic|include/hash.h|0x38e38e39ULL >> 33|0x38e38e39ULL >> 34|.output/tests/test_watch'
# IPv6's range tree
'tree-edge-unclamped|include/hash.h|	return x + (__u32)(d & (__u64)((__s64)d >> 63));|	return (void)d, x;|.output/tests/test_watch'
'tree-compact-first-excluded|include/hash.h|		__u64 le = (__u64)g->tc.d[j] - off - 1;	/* < 0: at or below */|		__u64 le = (__u64)g->tc.d[j] - off;|.output/tests/test_watch'
'tree-leaf-copies-first|user/core/watchlpm.c|			const struct range *r = &e[i + (j < k ? j : k - 1)];

			if (j)|			const struct range *r = &e[i + (j < k ? j : 0)];

			if (j)|.output/tests/test_watch'
'datapath-tree-pair-crossed|bpf/watch.bpf.h|	out->cls[1] = bt_watch_t_answer(q, bt_watch_t_range(q, a1)) & 0xff;|	out->cls[1] = bt_watch_t_answer(q, bt_watch_t_range(q, a0)) & 0xff;|.output/tests/test_watch'
'datapath-no-final-probe|bpf/watch.bpf.h|	return !s->known && s->best <= 128|	return 0 && !s->known && s->best <= 128|.output/tests/test_watch'
# the search's planned tree
'plan-takes-first-root|user/core/watchlpm.c|					if (c < p->cost[at]) {|					if (p->cost[at] == PLAN_NONE) {|.output/tests/test_watch'
'v6-tree-no-more-memory|user/core/watchlpm.c|#define V6_TREE_MEMORY 1.25|#define V6_TREE_MEMORY 1.0|.output/tests/test_watch'
'key-in-status|user/cmd/status.c|		json_object_object_add(o, "kind", json_object_new_string(kind));|		{ char kh[40]; snprintf(kh, sizeof(kh), "%016llx", (unsigned long long)inst.meta.hash_key.k0); json_object_object_add(o, "kh", json_object_new_string(kh)); } json_object_object_add(o, "kind", json_object_new_string(kind));|tests/live/faults.sh'
'ipfix-drops-a-flow|user/report/ipfix.c|	for (size_t i = 0; i < r->n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct flow_rec rec = {|	for (size_t i = 1; i < r->n; i++) {
		const struct bt_heavy_flow *f = &r->flows[i];
		struct flow_rec rec = {|tests/live/ipfix.sh'
# trace's time bounds; watch lists' families and their size bound
'time-out-of-range-converted|user/base/timeparse.c|		if (!(v <= TIME_MAX_S))|		if (0)|.output/tests/test_unit'
'watch-set-parser-v4|user/instance/watch.c|	v4 = bt_watch_key_is_v4(&k);|	(void)0;|tests/live/watch.sh'
'watch-no-count-first|user/core/watchlist.c|	l->counting = true;|	return 0;|.output/tests/test_watch'
'api-ignores-n|user/agent/http.c|bt_heavy_json(&f->hm, top, false, NULL) : json_object_new_array();|bt_heavy_json(&f->hm, 100000, false, NULL) : json_object_new_array();|tests/live/agent.sh'
'drops-api-unlocked|user/agent/http.c|	pthread_mutex_lock(&a->lock);
	o = bt_drops_json(&f->inst, 20);
	pthread_mutex_unlock(&a->lock);|	o = bt_drops_json(&f->inst, 20);|tests/live/agent.sh'
'tap-passes|bpf/bloomtap.bpf.c|verdict = c->tap ? XDP_DROP : XDP_PASS;|verdict = XDP_PASS;|tests/live/tap.sh'
'claim-without-position|bpf/spie.bpf.h|ring % cfg_windows != win|0|.output/tests/test_spie'
'present-never-checked|bpf/spie.bpf.h|cfg_k, sample && bt_present_sampled(h))|cfg_k, sample * 0)|.output/tests/test_spie'
'present-always-checked|bpf/spie.bpf.h|cfg_k, sample && bt_present_sampled(h))|cfg_k, sample)|.output/tests/test_spie'
'present-egress-never-checked|bpf/egress.bpf.h|	if (spie_insert_sent(c, win, h, true))|	if (spie_insert_sent(c, win, h, false))|tests/live/egress.sh'
'drop-ext-in-the-copy|bpf/drop.bpf.h|if (off + 8 > e->lin|if (off + 8 > 56|tests/live/drops.sh'
'archive-v8-walked|user/core/archive.h|#define BT_ARCHIVE_V6_EXT 9|#define BT_ARCHIVE_V6_EXT 8|.output/tests/test_spie'
'auth-only-with-tls|user/agent/http.c|!w->nusers)
		return 1;|!w->cert_pem)
		return 1;|tests/live/webapi.sh'
'login-costs-one|user/agent/http.c|rate_ok(c, BT_HTTP_AUTH_FAIL_COST - 1)|rate_ok(c, 0)|tests/live/webapi.sh'
'drop-v6-raw-word|bpf/drop.bpf.h|		p->hdr = spie_hdr_v6(*(__u64 *)ip);|		p->hdr = *(__u64 *)ip;|tests/live/drops.sh'
'suppressed-as-not-ip|bpf/drop.bpf.h|		dctr->c[BT_DROP_SUPPRESSED] += segs;|		dctr->c[BT_DROP_NOT_IP] += segs;|tests/live/drops.sh'
'window-other-never-set|bpf/drop.bpf.h|	d->other += n;|	(void)n;|tests/live/drops.sh'
'uppers-shared-last-wins|user/instance/drops.c|								      : BT_DROP_SHARED;|								      : own[i].v + BT_DROP_UPPER;|tests/live/uppers.sh'
'uppers-not-refreshed|user/agent/agent.c|			bt_drops_refresh_uppers();|			(void)0;|tests/live/uppers.sh'
'raw-copy-a-drop|bpf/drop.bpf.h|	if (raw_copy && drop_echo_reply(skb)) {|	if (raw_copy && drop_echo_reply(skb) && 0) {|tests/live/drops.sh'
'uppers-one-lower-enough|user/instance/drops.c|			    !bt_links_only_from(links, n, j, tag)) {|			    0) {|tests/live/uppers.sh'
'links-siblings-by-dump|user/core/links.c|	if (up->lower && from_siblings(up))|	if (0 && from_siblings(up))|.output/tests/test_unit'
'drop-gro-shared-unseen|bpf/drop.bpf.h|			    !drop_seen(seg_first_digest(&g), win))|			    1)|tests/live/uppers.sh'
'iface-gone-interval-goes-on|user/agent/agent.c|	if (!f->gone)
		end_interval(f, bt_mono_s(), false);
	f->gone = true;|	f->gone = true;|tests/live/ipfix.sh'
'remove-purges|debian/bloomtap.postrm|if [ "$1" = purge ]; then|if [ "$1" = purge -o "$1" = remove ]; then|tests/ship/package.sh'
'egress-never-records|bpf/egress.bpf.h|	win = c->window;|	win = cfg_windows;|tests/live/egress.sh'
'seg-ids-fixed|include/hash.h|	return fixed ? id0 : (__u16)(id0 + i);|	return id0;|.output/tests/test_unit'
'trace-budget-per-batch|user/report/trace_query.c|	t->archive_cut_ns = 0;	/* the probes go on counting|	t->probes = 0; t->archive_cut_ns = 0;	/* the probes go on counting|tests/live/spie.sh'
'seg-size-no-floor|user/core/segments.c|	if (s->size < BT_SEG_MIN) {|	if (0) {|.output/tests/test_unit'
'seg-syn-keeps-options|user/core/segments.c|			return syn - opts;|			return syn;|tests/live/gro.sh'
'segments-from-super-header|bpf/segments.bpf.h|	__u64 h = bt_hash_spie_finish(&cfg_keys, g->addrs, w, a, 0);|	__u64 h = bt_hash_spie_finish(&cfg_keys, g->addrs, g->hdr + 0 * w, g->after + 0 * a, 0);|tests/live/egress.sh'
'egress-gso-segs-0-as-1|bpf/egress.bpf.h|	if (segs)
		return segs > 1 ? segs : 1;|	if (1)
		return segs > 1 ? segs : 1;|tests/live/egress.sh'
'egress-forwarded-ids-incrementing|bpf/egress.bpf.h|.both_ids = pi->l3 == BT_CTR_L3_IPV4 && skb->ingress_ifindex };|.both_ids = false };|tests/live/egress.sh'
'spie-v6-ext-not-walked|bpf/parse.bpf.h|	pi->spie_hlen = ((w.spie_off|	pi->spie_hlen = 40 + 0 * ((w.spie_off|.output/tests/test_spie'
'digest-v6-ext-not-walked|user/core/digest.c|		dhl = v6_digest_off(ip, len, &left, &nh);|		dhl = 40 + 0 * v6_digest_off(ip, len, &left, &nh);|.output/tests/test_spie'
'archive-v7-queried-with-new-digest|user/core/archive.c|		return bt_spie_digest_v7(&f->keys, p);|		return bt_spie_digest(&f->keys, p);|.output/tests/test_spie'
'egress-v6-segments-at-40|bpf/egress.bpf.h|	__u32 hl = pi->spie_hlen;|	__u32 hl = pi->l3_hlen;|tests/live/egress.sh'
'udp-checksum-in-digest|bpf/spie.bpf.h|	in->after &= SPIE_CSUM_OUT;|	(void)0;|.output/tests/test_spie'
'egress-heavy-in-received-maps|bpf/egress.bpf.h|	const struct heavy_maps hm = { &ecms, &efm, &efmc, &efc, &efmo };|	const struct heavy_maps hm = { &cms, &fm, &fmc, &fc, &fmo };|tests/live/both_lab.sh'
'egress-classes-as-received|bpf/egress.bpf.h|	watch_count(pi, c, &cfg_keys, bytes, segs, BT_DIR_EGRESS);|	watch_count(pi, c, &cfg_keys, bytes, segs, BT_DIR_INGRESS);|tests/live/both_lab.sh'
'ipfix-sent-as-received|user/report/ipfix.c|.out_ifindex = sent ? ifindex : 0, .direction = sent,|.out_ifindex = sent ? ifindex : 0, .direction = 0,|tests/live/egress.sh'
'egress-alone-attaches-xdp|user/instance/link.c|	if (o->dir != BT_ATTACH_EGRESS) {|	if (o->dir != BT_ATTACH_EGRESS + 1) {|tests/live/egress.sh'
'heavy-json-hides-tcp|user/report/heavy_report.c|		const struct bt_heavy_flow *f = &r->flows[i];
		struct json_object *o = json_object_new_object();|		const struct bt_heavy_flow *f = &r->flows[i];
		if (f->key.proto == 6)
			continue;
		struct json_object *o = json_object_new_object();|tests/live/cli.sh'
'web-dummy-first-user|user/agent/webconfig.c|	const char *dummy = bt_web_dummy_hash(w);|	const char *dummy = w->nusers ? w->users[0].hash : NULL;|.output/tests/test_unit'
'web-cheap-user-no-dummy|user/agent/webconfig.c|bcrypt_cost(u->hash) < bcrypt_cost(dummy)|bcrypt_cost(u->hash) < 0|.output/tests/test_unit'
'http-work-uncharged|user/agent/http.c|			work_charge(r->key, thread_cpu_ms() - r->cpu0_ms);|			(void)0;|tests/live/webapi.sh'
'http-no-header-deadline|user/agent/http.c|				shutdown(k->fd, SHUT_RDWR);|				(void)0;|tests/live/webapi.sh'
'fleet-serial|user/report/pathtrace.c|		while (active < o->parallel && next < nx)|		while (active < 1 && next < nx)|tests/live/fleet.sh'
'fleet-ca-unverified|user/report/pathtrace.c|		curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);|		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);|tests/live/fleet.sh'
'fleet-names-from-list|user/report/pathtrace.c|		printable(a->name, NAME_GIVEN, name);|		(void)name;|tests/live/fleet.sh'
'fleet-prom-any-scheme|user/report/pathtrace.c|		if (strncmp(su, "http://", 7) && strncmp(su, "https://", 8)) {|		if (0) {|tests/live/fleet.sh'
'fleet-listed-twice-asked-twice|user/report/pathtrace.c|	dup = fleet_find(f, x);|	(void)fleet_find(f, x), dup = -1;|tests/live/fleet.sh'
'fleet-creds-clear|user/report/pathtrace.c|strncmp(a->url, "https://", 8);|0;|tests/live/pathtrace.sh'
'fleet-cut-ignored|user/report/pathtrace.c|(cut_off(pk) ? UNKNOWN_CUT : 0)|((cut_off(pk) && 0) ? UNKNOWN_CUT : 0)|tests/live/pathtrace.sh'
'fleet-damaged-ignored|user/report/pathtrace.c|	       json_object_get_int64(v) > 0;|	       json_object_get_int64(v) < 0;|tests/live/pathtrace.sh'
'fleet-down-asked-twice|user/report/pathtrace.c|		x->a->status_down = true;|		(void)0;|tests/live/pathtrace.sh'
'fleet-same-as-by-position|user/report/pathtrace.c|	f = sent_index(sp, json_object_get_int64(v));|	f = json_object_get_int64(v) - 1;|tests/live/pathtrace.sh'
'keeper-retry-each-turn|user/instance/keeper.c|			k->retry_at = bt_mono_s() + BT_KEEPER_RETRY_S;|			(void)0;|tests/live/agent.sh'
# archived drop reasons, subsystem reasons, a window's packets
'reasons-archived-as-codes|user/core/archive.c|	if (!ndrops && !nall)
		return 0;|	return 0;|.output/tests/test_unit'
'reasons-archived-as-codes-live|user/core/archive.c|	if (!ndrops && !nall)
		return 0;|	return 0;|tests/live/drops.sh'
'subsys-reasons-never-tried|user/core/reasons.c|!(all = bt_drop_reasons_all(&nall))|!(all = bt_drop_reasons(&nall))|.output/tests/test_unit'
'unread-window-tries-none|user/instance/drops.c|		out->other = true;	/* cannot tell: try them all */|		out->other = !v;|.output/tests/test_spie'
'drop-counted-twice|user/instance/spie.c|counted_by(s, i, 1, 1) / 2|counted_by(s, i, 1, 1)|tests/live/drops.sh'
'no-ready-always-ingress|bpf/spie.bpf.h|		count_event_of(BT_CTR_SPIE_NO_READY, prog == 1 ? BT_DIRS :
				prog == 2 ? BT_DIR_EGRESS : BT_DIR_INGRESS);|		count_event(BT_CTR_SPIE_NO_READY);|tests/live/drops.sh'
# the node's workloads
'workloads-lists-vanished|user/core/workloads.c|if (next[i].alive && (err = build_one(|if ((err = build_one(|tests/live/workloads.sh'
'workloads-no-socket-unlisted|user/core/workloads.c|			ns->alive = true;
			if (!setns(nsfd, CLONE_NEWNET)) {|			if (!setns(nsfd, CLONE_NEWNET) && (ns->alive = nl_open() >= 0)) {|tests/live/workloads.sh'
'workloads-refresh-dumps-all|user/core/workloads.c|		if (!next[i].dumped) {|		if (1) {|tests/live/workloads.sh'
'workloads-uid-underscores|user/core/workloads.c|out[i] = dash ? '"'-'"' :|out[i] = dash ? ch :|.output/tests/test_unit'
'workload-drops-uncounted|bpf/drop.bpf.h|	workload_ids(&key, c, bytes, hsegs, BT_WL_DROPPED, ids);|	ids[0] = ids[1] = 0;|tests/live/workload_drops.sh'
'heavy-dropped-unnamed|user/report/heavy_report.c|	if (!rn->wlh.n)
		return NULL;|	return NULL;|tests/live/workload_drops.sh'
'metrics-drops-unnamed|user/agent/metrics.c|		workload_stage(out[1], &left[1], a, i, BT_WL_DROPPED, n, names);|		(void)0;|tests/live/workload_drops.sh'
'drop-record-unnamed|bpf/recorder.bpf.h|	r->wl[1] = wl[1];|	r->wl[1] = 0;|tests/live/workload_drops.sh'
'workload-drop-unnamed|bpf/drop.bpf.h|	in_wl = shared && *shared == BT_SHARED_WORKLOAD;|	in_wl = shared && !shared;|tests/live/workload_drops.sh'
'workload-drops-unattributed|user/instance/drops.c|			if (!bpf_map_update_elem(fd, &key, &one, 0))
				bpf_map_update_elem(h->owners_fd, &key, &want, 0);|			(void)one;|tests/live/workload_drops.sh'
# the drop recorder: the reason it keeps, what it loses
'recorder-wrong-reason|bpf/recorder.bpf.h|	r->reason = reason;|	r->reason = segs;|tests/live/recorder.sh'
'recorder-overwrite-uncounted|bpf/recorder.bpf.h|		pos->overwritten++;|		(void)0;|tests/live/recorder.sh'
'recorder-followed-counted|bpf/recorder.bpf.h|	if (r->seq && !r->followed)|	if (r->seq)|tests/live/recorder.sh'
'drops-pcap-bytes-unbounded|user/instance/recorder.c|		if (f->max_bytes && dry.bytes > f->max_bytes) {|		if (0) {|tests/live/recorder.sh'
'recorder-follower-not-cleared|user/instance/recorder.c|	if (*pid && kill((pid_t)*pid, 0) && errno == ESRCH) {|	if (0) {|tests/live/recorder.sh'
'describe-cut|user/instance/sketch.h|#define BT_DESCRIBE_MAX 512|#define BT_DESCRIBE_MAX 256|.output/tests/test_unit'
'cut-batch-dropped|user/report/trace_query.c|	if (rc < 0 && !t->n) {|	if (rc < 0) {|tests/live/cli.sh'
# the docs check: a comment that names a path the tree does not have
'stale-path-in-comment|bpf/spie.bpf.h|user/core/digest.c builds the same.|user/digest.c builds the same.|tests/ship/docs.py'
# the layers: core/ makes no bpf(2) call
'core-calls-bpf|user/core/archive.c|int bt_archive_write(|int bt_archive_peek(int fd, void *v) { int bpf_map_lookup_elem(int, const void *, void *); return bpf_map_lookup_elem(fd, &fd, v); }
int bt_archive_write(|tests/ship/layers.py'
'core-includes-bpf|user/core/bloom.c|#include "bloom.h"|#include <bpf/bpf.h>
#include "bloom.h"|tests/ship/layers.py'
# an interface's instance of another network namespace taken for this one's
'netns-unchecked|user/instance/instance.c|	return self && self != meta->netns;|	return false && self != meta->netns;|tests/live/netns.sh'
'gap-param-writer-off|user/core/archive.c|__u32 *offs = (__u32 *)t, at = 0, m = bt_gap_param(w->set_bits, c->window_bits);|__u32 *offs = (__u32 *)t, at = 0, m = bt_gap_param(w->set_bits, c->window_bits) + 1;|.output/tests/test_spie'
'bloom-positions-share-bits|include/hash.h|	return (h >> (BT_BLOCK_POS_BITS * i)) & (BT_BLOCK_BITS - 1);|	return (h >> (BT_BLOCK_POS_BITS * (i & 1))) & (BT_BLOCK_BITS - 1);|.output/tests/test_spie'
'gap-decode-short-of-block|user/core/archive.c|	    (*why = chunk_upto(f, off % f->chunk_bytes + f->block_bits / 8)))|	    (*why = chunk_upto(f, off % f->chunk_bytes)))|tests/live/spie.sh'
'capture-window-ends-at-rotate|user/instance/spie.c|	last = w->start_ns + (__u64)w->capture_ms * 1000000;|	return w->end_ns;|tests/live/horizon.sh'
'cm-pattern-from-line-bits|include/hash.h|	return (__u32)((((h >> 22) & 0xffff) * npat) >> 16);|	return (__u32)(((h & 0xffff) * npat) >> 16);|.output/tests/test_heavy'
'cm-one-counter-not-raised|bpf/heavy.bpf.h|		line->bytes[c] = max_nb(line->bytes[c], min_b);|		if (i != 1)
			line->bytes[c] = max_nb(line->bytes[c], min_b);|.output/tests/test_heavy'
'replay-ignores-kept-sizes|user/cmd/replay.c|	if (!created && bt_kept_sizes_differ(|	if (0 && !created && bt_kept_sizes_differ(|tests/live/cli.sh'
)

# run_suite SUITE TREE LOG: SUITE (a script of tests/, a C test binary
# under .output/, or a Python check of the source) against the build in
# TREE; its exit code
run_suite() {
	local suite=$1 tree=$2 log=$3 run=(bash "$TOP/$1")
	[[ $suite == .output/* ]] && run=("$tree/$suite")
	[[ $suite == *.py ]] && run=(python3 "$tree/$suite")	# it reads its own tree's source
	BLOOMTAP=$tree/.output/bloomtap BT_PCAPS=$PCAPS_DIR KEEPER_KILL_ROUNDS=40 \
		BT_DEB=$tree/$(make -s -C "$tree" print-deb) BT_SRC=$tree timeout 900 "${run[@]}" > "$log" 2>&1
}

only=" $* "
selected=() suites=()
for m in "${MUTANTS[@]}"; do
	IFS='|' read -r -d '' name file old new suite <<<"$m" || true
	suite=${suite%$'\n'}
	# a "|" inside a field (C's ||) cuts the entry wrong: its suite would
	# be run under a name that is not one
	if [[ $suite == *"|"* || ! -f $TOP/$file ]]; then
		fail "mutant ${name:0:40}: not 5 fields (a '|' inside one?)"; continue
	fi
	[ -n "$*" ] && [[ "$only" != *" $name "* ]] && continue
	selected+=("$m")
	[[ " ${suites[*]} " == *" $suite "* ]] || suites+=("$suite")
done

# each suite once unmutated, against this tree's build (the package suite
# against its .deb): its mutants are judged only if it passes
declare -A clean
deb=; [[ " ${suites[*]} " == *" tests/ship/package.sh "* ]] && deb=deb
make -s -j"$(nproc)" -C "$TOP" all $deb $(printf '%s\n' "${suites[@]}" | grep '^\.output/') >/dev/null 2>&1 ||
	{ fail "the unmutated tree does not build"; summary; exit 1; }
for suite in "${suites[@]}"; do
	if run_suite "$suite" "$TOP" "$TOP/.output/mutants-clean.log"; then
		clean[$suite]=1; ok "unmutated, $suite passes"
	else
		fail "unmutated, $suite fails: its mutants prove nothing"
		grep '^  FAIL' "$TOP/.output/mutants-clean.log" | head -5
	fi
done

for m in "${selected[@]}"; do
	IFS='|' read -r -d '' name file old new suite <<<"$m" || true
	suite=${suite%$'\n'}
	[ -n "${clean[$suite]}" ] || continue
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
	# what the suite runs: the tool, a C test binary, the .deb, or (a
	# Python suite) the sources alone
	targets="all"
	[[ $suite == .output/* ]] && targets="all $suite"
	[ "$suite" = tests/ship/package.sh ] && targets="all deb"
	[[ $suite == *.py ]] && targets=
	if [ -n "$targets" ] && ! make -s -j"$(nproc)" -C "$dir" BT_PCAPS="$PCAPS_DIR" $targets >"$dir/build.log" 2>&1; then
		fail "mutant $name: does not build"; tail -5 "$dir/build.log"; rm -rf "$dir"; continue
	fi
	run_suite "$suite" "$dir" "$dir/suite.log"
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
