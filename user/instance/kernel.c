// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* kernel: what the running kernel offers bloomtap, probed by asking it.
 * The first kernels named are mainline's; a distribution kernel may have
 * a feature earlier (backports), which is why nothing here reads the
 * version number. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "base/common.h"
#include "kernel.h"

static const struct {
	const char *name;
	const char *since;	/* the first mainline release that has it */
	bool required;
	const char *without;	/* what an optional feature's absence turns off */
} features[BT_KF_MAX] = {
	[BT_KF_BPF] = { "bpf_xdp_programs", "4.8", true },
	[BT_KF_MMAP_ARRAY] = { "mmapable_arrays", "5.5", true },
	[BT_KF_BOOT_NS] = { "ktime_get_boot_ns", "5.8", true },
	[BT_KF_XDP_LINK] = { "xdp_bpf_link", "5.9", true },
	[BT_KF_ATOMICS] = { "bpf_atomics", "5.12", true },
	[BT_KF_BTF] = { "kernel_btf", "5.4", false,
			"no drop recording (tp_btf needs the kernel's BTF)" },
	[BT_KF_DROP_REASONS] = { "drop_reasons", "5.17", false,
				 "no drop recording (kfree_skb has no reason argument)" },
	[BT_KF_XDP_FRAGS] = { "xdp_frags", "5.18", false,
			      "no multi-buffer program: interfaces with an MTU above 3,498 "
			      "are refused, and replay skips packets longer than a page" },
	[BT_KF_LIVE_FRAMES] = { "xdp_live_frames", "5.18", false,
				"make bench has no live-rate rows" },
	[BT_KF_LOOP] = { "bpf_loop", "5.17", false,
			 "no egress recording (attach --direction egress)" },
	[BT_KF_TCX] = { "tcx", "6.6", false,
			"egress is attached as a clsact filter, not a pinned link" },
};

static struct {
	char release[65];
	int has[BT_KF_MAX];
} k;

/* 1 when fd >= 0 (closing it), 0 when the kernel said no, -1 when it
 * would not say (no privilege). */
static int answer(int fd)
{
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EPERM || errno == EACCES ? -1 : 0;
}

static int probe_map_flag(__u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);

	return answer(bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, &o));
}

static int probe_helper(enum bpf_func_id id)
{
	int r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, id, NULL);

	return r < 0 ? (r == -EPERM ? -1 : 0) : r;
}

/* A compare-and-exchange on the stack: "reserved fields" (EINVAL) from a
 * kernel that knows only BPF_XADD. */
static int probe_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return answer(bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns, 6, NULL));
}

static bool btf_has(const struct btf *btf, const char *name, int kind)
{
	return btf && btf__find_by_name_kind(btf, name, kind) > 0;
}

static void probe_once(void)
{
	struct utsname u;
	struct btf *btf;

	if (!uname(&u))
		snprintf(k.release, sizeof(k.release), "%s", u.release);
	/* without the privilege to use bpf(2), its answers say nothing of
	 * the kernel (libbpf's probes then answer 0): unknown, and the
	 * command's own error will say it needs root */
	if (probe_map_flag(0) < 0) {
		k.has[BT_KF_BPF] = k.has[BT_KF_MMAP_ARRAY] = -1;
		k.has[BT_KF_BOOT_NS] = k.has[BT_KF_XDP_FRAGS] = k.has[BT_KF_ATOMICS] = -1;
		k.has[BT_KF_LOOP] = -1;
	} else {
		k.has[BT_KF_BPF] = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) > 0;
		k.has[BT_KF_MMAP_ARRAY] = probe_map_flag(BPF_F_MMAPABLE);
		k.has[BT_KF_BOOT_NS] = probe_helper(BPF_FUNC_ktime_get_boot_ns);
		k.has[BT_KF_XDP_FRAGS] = probe_helper(BPF_FUNC_xdp_get_buff_len);
		k.has[BT_KF_ATOMICS] = probe_atomics();
		k.has[BT_KF_LOOP] = probe_helper(BPF_FUNC_loop);
	}
	/* the rest from the kernel's own types (a link_create cannot tell:
	 * it says EINVAL for a missing interface as for an unknown attach
	 * type): XDP links are struct bpf_xdp_link, the tracepoint's reason
	 * an enum skb_drop_reason, the live-frame runner's pages struct
	 * xdp_page_head. Without BTF, XDP links are not known to be absent. */
	btf = btf__parse(BT_VMLINUX_BTF, NULL);
	k.has[BT_KF_BTF] = btf != NULL;
	k.has[BT_KF_XDP_LINK] = btf ? btf_has(btf, "bpf_xdp_link", BTF_KIND_STRUCT) : -1;
	k.has[BT_KF_DROP_REASONS] = btf_has(btf, "skb_drop_reason", BTF_KIND_ENUM);
	k.has[BT_KF_LIVE_FRAMES] = btf_has(btf, "xdp_page_head", BTF_KIND_STRUCT);
	k.has[BT_KF_TCX] = btf_has(btf, "tcx_link", BTF_KIND_STRUCT);
	btf__free(btf);
}

static void probe(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, probe_once);
}

int bt_kernel_has(enum bt_kfeature f)
{
	probe();
	return k.has[f];
}

const char *bt_kernel_release(void)
{
	probe();
	return k.release;
}

int bt_kernel_require(void)
{
	probe();
	for (int f = 0; f < BT_KF_MAX; f++)
		if (features[f].required && !k.has[f]) {
			bt_err("this kernel (%s) lacks %s, which bloomtap needs: Linux %s or "
			       "later (the minimum is 5.12; see 'bloomtap kernel')",
			       k.release, features[f].name, features[f].since);
			return -EOPNOTSUPP;
		}
	return 0;
}

/* An optional feature the agent goes without (the live-frame runner is
 * make bench's, not the agent's). */
static bool off(int f)
{
	return !features[f].required && !k.has[f] && f != BT_KF_LIVE_FRAMES;
}

static void note_optional_once(void)
{
	for (int f = 0; f < BT_KF_MAX; f++)
		if (off(f))
			bt_info("kernel %s has no %s (Linux %s): %s", k.release,
				features[f].name, features[f].since, features[f].without);
}

struct json_object *bt_kernel_off_json(void)
{
	struct json_object *a = json_object_new_array();

	probe();
	for (int f = 0; f < BT_KF_MAX; f++)
		if (off(f))
			json_object_array_add(a, json_object_new_string(features[f].name));
	return a;
}

void bt_kernel_print_off(void)
{
	probe();
	for (int f = 0; f < BT_KF_MAX; f++)
		if (off(f))
			printf("kernel %s: without %s (Linux %s): %s\n", k.release,
			       features[f].name, features[f].since, features[f].without);
}

void bt_kernel_note_optional(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	probe();
	pthread_once(&once, note_optional_once);
}

struct json_object *bt_kernel_json(void)
{
	struct json_object *o = json_object_new_object(), *fs = json_object_new_array();

	probe();
	json_object_object_add(o, "release", json_object_new_string(k.release));
	for (int f = 0; f < BT_KF_MAX; f++) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(features[f].name));
		json_object_object_add(e, "present", k.has[f] < 0 ? json_object_new_null()
							      : json_object_new_boolean(k.has[f]));
		json_object_object_add(e, "required", json_object_new_boolean(features[f].required));
		json_object_object_add(e, "since", json_object_new_string(features[f].since));
		if (!features[f].required)
			json_object_object_add(e, "without",
					       json_object_new_string(features[f].without));
		json_object_array_add(fs, e);
	}
	json_object_object_add(o, "features", fs);
	return o;
}

/* ---- the verifier's figures ---- */

#define VLOG_SIZE 4096	/* log level 4 (BPF_LOG_STATS) writes two lines */

struct bt_verifier_logs {
	struct bpf_object *obj;
	int n;
	char (*buf)[VLOG_SIZE];
};

struct bt_verifier_logs *bt_verifier_logs_attach(struct bpf_object *obj)
{
	struct bt_verifier_logs *l = calloc(1, sizeof(*l));
	struct bpf_program *p;
	int n = 0, i = 0;

	bpf_object__for_each_program(p, obj)
		n++;
	if (!l || !(l->buf = calloc(n ? n : 1, VLOG_SIZE))) {
		free(l);
		return NULL;
	}
	l->obj = obj;
	l->n = n;
	bpf_object__for_each_program(p, obj) {
		bpf_program__set_log_buf(p, l->buf[i++], VLOG_SIZE);
		bpf_program__set_log_level(p, 4);
	}
	return l;
}

void bt_verifier_logs_read(struct bt_verifier_logs *l, struct json_object *arr)
{
	struct bpf_program *p;
	int i = 0;

	if (!l)
		return;
	bpf_object__for_each_program(p, l->obj) {
		const char *s = strstr(l->buf[i++], "processed ");
		unsigned long processed, limit = 0;
		struct json_object *e;
		char stack[64];

		if (!bpf_program__autoload(p) || !s ||
		    sscanf(s, "processed %lu insns (limit %lu)", &processed, &limit) < 1)
			continue;
		e = json_object_new_object();
		/* refused: the verifier's last words, before its figures */
		if (bpf_program__fd(p) < 0)
			json_object_object_add(e, "refused", json_object_new_string_len(
				l->buf[i - 1], s - l->buf[i - 1]));
		json_object_object_add(e, "program", json_object_new_string(bpf_program__name(p)));
		json_object_object_add(e, "insns", json_object_new_int64(bpf_program__insn_cnt(p)));
		json_object_object_add(e, "processed", json_object_new_int64(processed));
		json_object_object_add(e, "limit", json_object_new_int64(limit));
		/* each frame's stack, main program first: their sum, each frame
		 * rounded up to 32 bytes before Linux 6.x's verifiers, must
		 * stay within 512 */
		if ((s = strstr(l->buf[i - 1], "stack depth ")) &&
		    sscanf(s, "stack depth %63[0-9+]", stack) == 1)
			json_object_object_add(e, "stack_depth", json_object_new_string(stack));
		json_object_array_add(arr, e);
	}
	free(l->buf);
	free(l);
}
