/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Types shared by the XDP program and the bloomtap tool.
 *
 * This header includes nothing: the BPF side gets __u8..__u64 from vmlinux.h,
 * user space from <linux/types.h>. Every struct here is a map key or value or a
 * packet-derived record, so every hole is filled with an explicit padding field
 * and every size is pinned by a static assertion: both sides must agree to the
 * byte (after pping's shared headers).
 */
#ifndef BLOOMTAP_H
#define BLOOMTAP_H

#define BT_ABI_VERSION 24

/* Canonical flow key (DESIGN.md "Flow key").
 * Addresses are 16 bytes; IPv4 is stored v4-mapped (::ffff:a.b.c.d, RFC 4291
 * 2.5.5.2) so that one key type serves both families. Ports are in network
 * order as on the wire. For ICMP and ICMPv6, sport holds the type and dport the
 * code, in network order like ports, as flow exporters commonly do. Ports are 0
 * for non-first IPv4/IPv6 fragments and for protocols without ports. The
 * struct is zeroed before it is filled so the padding hashes as zero.
 */
struct bt_flow_key {
	__u8 src[16] __attribute__((aligned(8)));	/* hashed as 5 u64 words */
	__u8 dst[16];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 pad[3];		/* explicit: keeps the key 4-byte aligned, zeroed;
				 * a dropped flow's: the drop reason, 24 bits;
				 * a received heavy flow's: its addresses'
				 * workload ids (bt_wl_pack) */
};
_Static_assert(sizeof(struct bt_flow_key) == 40, "bt_flow_key must be 40 bytes");
#define BT_FLOW_KEY_WORDS 5

/* Key modes: which fields of the flow key heavy-flow detection counts by.
 * The others are zeroed before hashing. */
enum bt_key_mode {
	BT_KEY_5TUPLE,
	BT_KEY_SRC,
	BT_KEY_DST,
	BT_KEY_PAIR,
};

/* Exact per-flow counters, kept only when the instance was created with the
 * flow table on (bloomtap replay --flows): the datapath's own view of every
 * flow, checked against an independent dissector by the oracle test.
 */
struct bt_flow_val {
	__u64 packets;
	__u64 bytes;
};
_Static_assert(sizeof(struct bt_flow_val) == 16, "bt_flow_val must be 16 bytes");

/* Per-CPU counters, one slot each. The order is the ABI of the counters map;
 * names for output live in user space (user/report/counters.c) in the same order.
 * Invariants kept by the datapath (checked by the tests):
 *   packets == l3_ipv4 + l3_ipv6 + l3_other
 *   l3_ipv4 + l3_ipv6 == l4_tcp + l4_udp + l4_sctp + l4_icmp + l4_icmpv6 + l4_other
 * Flags (fragments, vlan, truncated, malformed, too_deep) may overlap.
 */
enum bt_counter {
	BT_CTR_PACKETS,
	BT_CTR_BYTES,		/* whole frame, linear part and fragments */
	BT_CTR_L3_IPV4,
	BT_CTR_L3_IPV6,
	BT_CTR_L3_OTHER,	/* ARP, LLDP, anything not IP */
	BT_CTR_L4_TCP,
	BT_CTR_L4_UDP,
	BT_CTR_L4_SCTP,
	BT_CTR_L4_ICMP,
	BT_CTR_L4_ICMPV6,
	BT_CTR_L4_OTHER,	/* other protocols, and IP packets not keyed */
	BT_CTR_FRAGMENTS,	/* any IPv4/IPv6 fragment, first or later */
	BT_CTR_VLAN,		/* at least one 802.1Q/802.1ad tag */
	BT_CTR_TRUNCATED,	/* a header ran past the end of the packet */
	BT_CTR_MALFORMED,	/* a header field is impossible (IHL < 5...) */
	BT_CTR_TOO_DEEP,	/* more VLAN tags or IPv6 ext headers than parsed */
	BT_CTR_FLOW_TABLE_FULL,	/* flow table insert failed (replay --flows) */
	BT_CTR_NOMINATED,	/* flows entered into the flow memory */
	BT_CTR_FM_FULL,		/* flows the full flow memory refused (each once a
				 * CPU, while its flow cache entry stays) */
	BT_CTR_SPIE_INSERTED,	/* digests recorded in the current window */
	BT_CTR_SPIE_PRESENT,	/* digests already there: duplicates, loops, FPs;
				 * one digest in BT_PRESENT_SAMPLE checked, a hit
				 * counting that many */
	BT_CTR_SPIE_NO_READY,	/* a full window found no ready one after it (per
				 * batch of digests): user space is behind */
	BT_CTR_GSO_SEGMENTS,	/* egress: TCP segments of GSO skbs digested one
				 * by one (packets counts them as well) */
	BT_CTR_GSO_NOT_DIGESTED,	/* egress: segments past BT_MAX_SEGS of one
					 * skb, or of a GSO skb other than TCP
					 * (UDP GSO): counted */
	BT_CTR_MAX,
};

/* BT_CTR_SPIE_PRESENT samples: the digests whose top bits are 0, one in
 * this many (1 << BT_PRESENT_SAMPLE_BITS), are checked for bits set
 * already, and a hit counts this many times. Checking them all costs a
 * load of the shared line before each write (bpf/spie.bpf.h bloom_set). */
#define BT_PRESENT_SAMPLE_BITS 6
#define BT_PRESENT_SAMPLE (1 << BT_PRESENT_SAMPLE_BITS)

/* One CPU's part of heavy-flow interval num: the packets that read num
 * from bt_ctl.interval (each reads it once), so an interval's volume is
 * exact however a flip falls between packets. Kept in part[num & 1]; a CPU
 * that meets a newer num there starts it from zero. */
struct bt_iv_part {
	__u64 bytes;		/* N_c of the fraction rule ("Heavy flows") */
	__u64 packets;
	__u64 fm_full;		/* nominations the full flow memory refused */
	__u32 num;
	__u32 pad;
};

/* 64-byte aligned so per-CPU slots never share a cache line
 * (after traffic-pacing-edt's per-CPU records). */
/* Key of the counters map: what a packet did at the interface. */
enum bt_direction {
	BT_DIR_INGRESS,		/* received (XDP) */
	BT_DIR_EGRESS,		/* sent (tc egress) */
	BT_DIRS,
};

struct bt_counters {
	__u64 c[BT_CTR_MAX];
	struct bt_iv_part part[2];	/* the current interval and the one before */
};
_Static_assert(sizeof(struct bt_counters) == 256, "bt_counters must be 4 cache lines");

/* ---- Heavy flows (DESIGN.md "Heavy flows") ----
 *
 * Count-min sketch with conservative update (Estan & Varghese 2002;
 * Cormode & Muthukrishnan 2005), blocked: a flow's d counters lie in one
 * 64-byte line of BT_CM_LINE_CELLS cells (as the OM sketch, Zhou et al.
 * 2017, puts them in one word), so that a packet reads one random line of
 * the sketch, not d. Per CPU and interval, lines lines: a flow's d
 * counters are d distinct cells of its line (include/hash.h,
 * bt_cm_pattern()), so each counter is as likely in each of w = 10 * lines
 * / d cells as a row's. Line l of (cpu, interval) is at (cpu * 2 + iv) *
 * (lines + 1) + l in the mmap of the "cms" array (one value of lines
 * lines and a spare per CPU and interval: user/instance/sketch.h,
 * bt_cm_value_lines()): per-CPU sketches without a per-CPU map, so that
 * user space reads and clears a whole interval through one mmap.
 *
 * A cell is 32 bits of bytes and 16 of packets, both saturating: a
 * saturated estimate nominates the flow (bpf/heavy.bpf.h), which is then
 * counted exactly, so a CPU's part of a flow never needs more than the
 * cells hold; 10 cells a line make two flows of a line share all four
 * cells with probability 1/210, where 8 cells of 32 + 32 bits gave 1/70.
 */
#define BT_MAX_DEPTH 8
#define BT_INTERVALS 2
#define BT_CM_LINE_CELLS 10
#define BT_CM_MAX_PATTERNS 252	/* C(10, 5): the most sets of d cells */
#define BT_CM_BYTES_MAX 0xffffffffULL
#define BT_CM_PACKETS_MAX 0xffffULL

struct bt_cm_line {
	__u32 bytes[BT_CM_LINE_CELLS];
	__u16 packets[BT_CM_LINE_CELLS];
	__u32 pad;
};
_Static_assert(sizeof(struct bt_cm_line) == 64, "a sketch line must be one cache line");

/* The flow memory's exact counts (below) */
struct bt_cm_cell {
	__u64 bytes;
	__u64 packets;
};
_Static_assert(sizeof(struct bt_cm_cell) == 16, "bt_cm_cell must be 16 bytes");

/* Flow memory (Estan & Varghese's exact counters for nominated flows): an
 * open-addressed table per interval in the mmap-able "fm" array, indexed by
 * the flow's hash, at most BT_FM_PROBES slots probed. A slot is claimed by
 * compare-and-swap of state EMPTY -> CLAIMING, filled, then published VALID;
 * only VALID slots are read. One cache line per slot. The exact counts are
 * per CPU, in the "fmc" array (struct bt_cm_cell (cpu * 2 + iv) * slots +
 * slot in its mmap): plain adds, no locked instruction on the path most
 * packets take. */
/* 32: with 8, linear probing refused flows at 12 % occupancy (a run of 8
 * full slots; a heavy flow missed in about one run in a hundred of
 * test_heavy's crowded flow cache, 0.22 refusals an interval in a
 * simulation at 4,000 flows in 16,384 slots, none with 32). A lookup stops
 * at the first empty slot, so the range costs only the verifier. */
#define BT_FM_PROBES 32
enum bt_fm_state { BT_FM_EMPTY, BT_FM_CLAIMING, BT_FM_VALID };

/* Flow memory occupancy: per interval (the "fmo" array, index iv), a bit a
 * slot, set before the slot leaves BT_FM_EMPTY. A flow is looked for only
 * when the bit of its first slot is set (probing stops at an empty slot):
 * the keyed path of a flow that was never nominated reads one word, in L1,
 * instead of a random line of the table. Cleared with its interval. */
static inline __u32 bt_fmo_words(__u32 fm_slots)
{
	return fm_slots < 64 ? 1 : fm_slots / 64;
}

struct bt_fm_slot {
	struct bt_flow_key key;	/* masked by the key mode */
	__u32 state;		/* enum bt_fm_state */
	__u32 cpu;		/* CPU that nominated it */
	/* that CPU's estimate of the flow when it nominated it, the packet
	 * that did included: its part before nomination there, bounded at
	 * the time (later packets of other flows raise its cells) */
	__u64 nom_bytes, nom_packets;
};
_Static_assert(sizeof(struct bt_fm_slot) == 64, "bt_fm_slot must be one cache line");

/* Flow cache: per CPU, direct-mapped, BT_FC_ENTRIES entries in the "fc"
 * array (index cpu, value BT_FC_ENTRIES entries). It remembers where this
 * CPU last found a nominated flow in the flow memory, so that the packets
 * of heavy flows, most packets, skip the keyed hash: a hit is an exact key
 * match in the same interval. Indexed by a cheap multiplicative hash; a
 * collision, crafted or not, only sends packets down the keyed path. Only
 * the datapath reads or writes it. */
#define BT_FC_BITS 9
#define BT_FC_ENTRIES (1u << BT_FC_BITS)

#define BT_FC_REFUSED 0xffffffffu	/* the flow memory had no room for it */

/* make bench's breakdown of the heavy-flow stage (bench/heavy.c): parts
 * of the stage left out of an instance (struct bt_instance_cfg.cut). */
enum bt_cut {
	BT_CUT_CACHE = 1,	/* no flow cache: every packet keyed */
	BT_CUT_FLOW_MEMORY = 2,	/* no flow memory: the sketch alone */
	BT_CUT_SKETCH = 4,	/* no sketch: estimates are the packet's */
};

struct bt_fc_entry {
	struct bt_flow_key key;	/* masked by the key mode */
	__u32 interval;		/* bt_ctl.interval when it was filled */
	__u32 slot;		/* flow memory slot + 1; 0: empty; or BT_FC_REFUSED */
	__u64 reserved[2];
};
_Static_assert(sizeof(struct bt_fc_entry) == 64, "bt_fc_entry must be one cache line");

/* Runtime control, one entry in the mmap-able "ctl" array, written by user
 * space (agent, heavy --interval, replay), read by the datapath per packet. */
struct bt_ctl {
	__u32 interval;		/* heavy-flow interval number; its low bit is the sketch */
	__u32 window;		/* current SPIE window: ring % windows, once the
				 * rotation that claimed ring has stored it */
	__u64 nominate_bytes;	/* per-CPU estimate that nominates a flow (byte and */
	__u64 nominate_packets;	/* packet thresholds; fractions: the datapath's rule) */
	__u64 interval_start_ns[BT_INTERVALS];	/* CLOCK_REALTIME, user space */
	__u32 watch;		/* loads of watch lists so far: its low bit is the
				 * slot in use ("Watch lists") */
	__u32 test_gate;	/* tests only: enum bt_test_gate */
	__u64 ring;		/* SPIE rotations since the ring started; each is
				 * claimed by a compare-and-swap of this word;
				 * BT_RING_KEEPER: user space's, under way */
	__u32 tap;		/* 1: every frame dropped once recorded
				 * (attach --tap): a mirror port's */
	__u32 workloads;	/* wl_addr's table in use (low bit) and its
				 * addresses (the rest; 0: none looked up),
				 * "Workloads" */
	__u64 reserved[8];	/* unused: bt_ctl stays 128 bytes */
};
_Static_assert(sizeof(struct bt_ctl) == 128, "bt_ctl must be 128 bytes");
#define BT_RING_KEEPER (1ULL << 63)

/* Tests only (struct bt_instance_cfg.test_hold): the first window
 * rotation whose claim a CPU wins after a test armed the gate stops there,
 * before its other steps, until the test opens the gate (tests/prog/test_spie.c:
 * a CPU stalled mid-rotation, as a vCPU the host deschedules is). */
enum bt_test_gate {
	BT_TEST_GATE_OFF,
	BT_TEST_GATE_ARMED,	/* test: hold the next rotation */
	BT_TEST_GATE_HELD,	/* datapath: holding, between claim and steps */
	BT_TEST_GATE_OPEN,	/* test: go on */
	BT_TEST_GATE_TIMED_OUT,	/* datapath: nobody opened it (a second or more) */
};

/* ---- SPIE digests: their words, include/hash.h "The SPIE digest" ---- */
#define BT_SPIE_WORDS 7

/* Blocked Bloom filter (Putze, Sanders & Singler 2007) with blocks of one
 * 64-byte cache line, k positions in each (include/hash.h). The "spie"
 * array holds the ring of windows, block index win * blocks_per_window +
 * block. */
#define BT_BLOCK_BITS 512
#define BT_BLOCK_WORDS (BT_BLOCK_BITS / 64)
struct bt_bloom_block {
	__u64 w[BT_BLOCK_WORDS];
};
_Static_assert(sizeof(struct bt_bloom_block) == 64, "bt_bloom_block must be 64 bytes");

/* The datapath adds a CPU's digests to its window's fill in batches of
 * this many (at most; fewer for tiny windows, cfg_batch_mask). */
#define BT_SPIE_BATCH 64
/* Each window's per-CPU digest counts ("wcount"), one slot a program:
 * XDP's, the drop program's, tc egress's (bpf/maps.bpf.h). */
#define BT_WCOUNT_SLOTS 3

/* One window of the ring, in the mmap-able "windows" array.
 *
 * Life of a window: user space clears it and marks it READY, ahead of the
 * datapath. The datapath moves from the CURRENT window to the next when
 * the current one's fill reaches the design load, if the next is READY;
 * user space does the same on time. A rotation is claimed by one
 * compare-and-swap of bt_ctl.ring from r to r + 1, made only while the
 * index is r % windows, so one claimant wins each rotation and no late
 * one can act on a ring that has moved. The winner then makes the next
 * window CURRENT, stores the index and closes the old window; others see
 * the ring busy until the index moves. A BPF program always finishes its
 * steps; a keeper may be killed among them, so its claim carries
 * BT_RING_KEEPER until it is done, and the next keeper finishes what a
 * marked claim left (bt_spie_repair). tests/prog/test_spie.c checks every
 * interleaving of these steps (ring_model). User space seals a
 * CLOSED window once no program can still be writing it (an RCU grace
 * period: membarrier), counting its packets and bits, archives it, and
 * much later clears it again. If the next window is not READY, the
 * datapath stays in the current one: no digest is ever dropped, the
 * window is flagged OVERLOADED and its false-positive rate, computed from
 * its fill, says what that cost. Times are CLOCK_BOOTTIME ns (the
 * datapath's clock, read once a window), converted for people. */
enum bt_window_state {
	BT_WIN_EMPTY,		/* never used, or being cleared */
	BT_WIN_READY,		/* clean, next in line */
	BT_WIN_CURRENT,		/* the datapath writes it */
	BT_WIN_CLOSED,		/* written until just now; to be sealed */
	BT_WIN_SEALED,		/* counted (and archived if there is an archive) */
	BT_WIN_STATES,
};

enum bt_window_flags {
	BT_WIN_OVERLOADED = 1 << 0,	/* datapath: past its load, no READY next */
	BT_WIN_ARCHIVED = 1 << 1,	/* user space: written to the archive */
	BT_WIN_SENT = 1 << 2,		/* user space, when sealed: holds sent
					 * packets' digests (tc egress) */
	BT_WIN_REPLAY_TIME = 1 << 3,	/* user space (replay): its times are
					 * the replay's, not its packets' */
	BT_WIN_CAPTURE_TIME = 1 << 4,	/* user space (replay --capture-time):
					 * its times are its packets' capture
					 * times; never closed on time */
};

struct bt_window {
	__u64 start_ns;		/* CLOCK_BOOTTIME: became current */
	__u64 end_ns;		/* CLOCK_BOOTTIME: the next became current; 0 before */
	__u64 fill;		/* datapath: digests added, in batches (atomic) */
	__u64 packets;		/* user space: packets it holds digests of (a drop's
				 * two once), exact, when sealed */
	__u64 set_bits;		/* user space: when sealed */
	__u64 fpr_e15;		/* user space: false-positive rate from the fill
				 * when sealed, in units of 1e-15 */
	__u32 state;		/* enum bt_window_state */
	__u32 seq;		/* user space: windows since the instance began */
	__u32 flags;		/* enum bt_window_flags */
	__u32 capture_ms;	/* user space (replay --capture-time): its last
				 * packet's time, in ms after start_ns, + 1 (0:
				 * none), so that a window closed later (on
				 * rotate, a day on) still ends at its packets */
};
_Static_assert(sizeof(struct bt_window) == 64, "bt_window must be 64 bytes");

/* Instance metadata, one entry in the pinned "meta" array. Written once by
 * user space when the instance is created; the datapath never reads it (its
 * settings come from .rodata). Lets later commands find out what an instance
 * is without reloading it.
 */
#define BT_META_MAGIC 0x626c6f6f6d746170ULL /* "bloomtap" */
#define BT_IFNAME_LEN 16
#define BT_META_ARCHIVE_LEN 256

enum bt_meta_flags {
	BT_META_FLOW_TABLE = 1 << 0,	/* exact flow table on */
	BT_META_ATTACHED = 1 << 1,	/* created by attach, not replay */
	BT_META_SKB_MODE = 1 << 2,	/* attached in generic (skb) mode */
	BT_META_NO_HEAVY = 1 << 3,	/* heavy-flow detection compiled out */
	BT_META_NO_SPIE = 1 << 4,	/* SPIE digests compiled out */
	BT_META_SEPARATE_HASH = 1 << 5,	/* make bench's ablation: the heavy-flow
					 * stage hashes its whole key itself */
	BT_META_EGRESS = 1 << 6,	/* what the interface sends is recorded */
	BT_META_EGRESS_TC = 1 << 7,	/* ... through a clsact filter (kernels
					 * before tcx, 6.6); else a tcx link */
	BT_META_NO_INGRESS = 1 << 8,	/* attached for egress alone: no XDP */
	BT_META_EGRESS_MAPS = 1 << 9,	/* made to record egress: its egress
					 * heavy-flow maps are sized (set at
					 * create, never changed) */
};

struct bt_meta {
	__u64 magic;
	__u32 abi_version;
	__u32 flags;		/* enum bt_meta_flags */
	__u32 ifindex;		/* 0 for a replay instance */
	__u32 flow_table_size;	/* entries, 0 when off */
	__u64 created_ns;	/* CLOCK_REALTIME, ns */
	char ifname[BT_IFNAME_LEN];
	struct bt_hash_key_raw {
		__u64 k0, k1;
	} hash_key;		/* secret: pins are root-only, never printed */
	__u32 ncpu;		/* possible CPUs the arrays were sized for */
	__u32 key_mode;		/* enum bt_key_mode */
	__u32 depth;		/* a flow's counters d, 1..BT_MAX_DEPTH */
	__u32 width;		/* asked cells a counter, a power of two: the
				 * sketch has d * width cells rounded up to a
				 * power of two of lines (bt_cm_lines()) */
	__u32 fm_slots;		/* flow memory slots per interval, power of two */
	__u32 threshold_kind;	/* enum bt_threshold_kind */
	__u64 threshold;	/* bytes, packets, or a fraction * 1e9 */
	struct bt_hash_key_raw reserved_key;	/* zero (every key derives
						 * from hash_key) */
	__u64 window_bits;	/* m: bits of one window's filter */
	__u64 design_load;	/* packets a window is sized for */
	__u32 windows;		/* W: windows in the ring */
	__u32 k;		/* bits set per packet, even, <= 8 */
	__u32 fpr_target_ppb;	/* rotate early past this false-positive rate */
	__u32 window_ms;	/* rotate at least this often (agent) */
	__u32 holder_pid;	/* the process that last took the instance's lock
				 * (flock on its pin directory), as its PID
				 * namespace sees it: named when the lock is
				 * refused, where /proc/locks is hidden (a unit's
				 * ProcSubset=pid); 0 if an older bloomtap took it */
	__u32 drop_ring;	/* the drop recorder's slots per CPU, 0: off */
	__u32 drop_head;	/* bytes of each dropped frame it keeps */
	__u32 netns;		/* the network namespace of the interface, as the
				 * inode of its nsfs file (stat of /proc/self/ns/net
				 * at attach): interface names are per namespace,
				 * the pins the host's; 0: none (replay) or unknown */
	/* CLOCK_REALTIME - CLOCK_BOOTTIME, the least and the most any keeper
	 * of the instance saw (0: none yet): a clock step between a window's
	 * time and its conversion moves it by at most clock_hi - clock_lo */
	__s64 clock_lo, clock_hi;
	char archive[BT_META_ARCHIVE_LEN];	/* where the instance's agent archives
						 * sealed windows (an absolute path,
						 * NUL-terminated; empty: none known):
						 * trace searches it */
};
_Static_assert(sizeof(struct bt_meta) == 432, "bt_meta must be 432 bytes");

/* ---- Watch lists (DESIGN.md "Watch lists"; Chazelle, Kilian, Rubinfeld
 * and Tal, "The Bloomier Filter", SODA 2004) ----
 *
 * A function from keys to bytes, a key being a prefix length (0..128, IPv4
 * as 96 + its length over the v4-mapped address) and the address masked to
 * it; a listed prefix's byte is its class 1..255 (a marker's, below, a
 * length). The table is the paper's mutable form in the space-coupled "fuse"
 * layout of binary fuse filters (Graf & Lemire, 2022): a key hashes to four
 * cells in four consecutive segments; peeling the hypergraph gives each key
 * a cell of its own, which no key peeled after it uses. Four cells, not
 * three: the hypergraph peels at 1.075 cells a key, not 1.125, and the
 * index of the own cell (0..3) fills its 2 bits, so a table takes 1.08 x
 * its class and check bits, for one more cell read a probe. Each cell is 7
 * bytes (56 bits, little-endian; 9 cells a 64-byte array element, a cache
 * line) and holds two things:
 *   bits 8..55: the XOR part. For a key with fingerprint F (48 bits) whose
 *               own cell is its j-th (0..3), the XOR of its four cells'
 *               parts is F ^ j: the index, under 44 check bits, the
 *               leaf and the marker bits;
 *   bits 0..7:  the byte of the key whose own cell this is (0: nobody's).
 * A lookup XORs four cells: check bits zero (under the table's mask) give
 * the byte in cell j, which `watch set` rewrites in place. A key outside
 * answers "none" but with probability 2^-R * (entries / cells) a probe, R
 * the check bits (44 unless `--check-bits`). 7 bytes, not 8: 7.6 bytes an
 * entry, and 44 check bits still make a wrong answer for an address (2^-44
 * a probe) a thing of centuries at line rate.
 *
 * Longest-prefix match (IPv4 in a range table: searched as IPv6 below,
 * behind /16 words of lengths, it took 2.5 probes an address):
 *   - IPv4: not in the Bloomier table but in a range table (Degermark et
 *     al.'s and DXR's idea: Zec, Rizzo and Mikuc, "DXR: towards a billion
 *     routing lookups per second", 2012): the list's IPv4 prefixes cut the
 *     address space into ranges, each answered by one longest match. A
 *     direct table of the 65,536 /16s (a u64 each, after the index) gives the
 *     class of a /16 that no prefix longer than /16 cuts (BT_WATCH_R_DIRECT:
 *     class, and the length of its best match), or where the /16's ranges
 *     are (BT_WATCH_R_FIRST, BT_WATCH_R_COUNT) and the first step of their
 *     search (BT_WATCH_R_MID). The ranges of all
 *     cut /16s follow the cells, packed in /16 order, BT_WATCH_R_LINE to a
 *     64-byte element (a cache line): a range's first address in its /16
 *     (16 bits), its best match's IPv4 length and its class. After them,
 *     the index: each line's first address (16 bits), BT_WATCH_R_INDEX an
 *     element, 1/32 of the ranges' bytes, small enough to stay in cache.
 *     An IPv4 address reads its /16's word, searches the index over its
 *     /16's lines (the word holds the first step: nothing to read for a
 *     /16 within two lines; a /16 of over 32 lines first guesses its line
 *     as if its ranges were even, checked in the index), and reads one
 *     line.
 *     The answer is exact: no check bits, no false hit; `watch set`
 *     rewrites the class of the ranges whose best match is the prefix
 *     (same length, inside it);
 *   - IPv6, when every IPv6 prefix is /64 or shorter and the tree is at
 *     most a quarter larger than the Bloomier table (BT_WATCH_F_V6_TREE,
 *     user/core/watchlpm.c choose_v6_tree): its ranges in
 *     a static B+ tree, after the /16 words (below, "IPv6's range tree");
 *   - IPv6 otherwise (and IPv4 with BT_WATCH_F_FLAT, make bench's
 *     ablation): the family's lengths, in the header, searched as follows:
 *   - the search: binary search on those lengths (Waldvogel, Varghese,
 *     Turner and Plattner, "Scalable high speed IP routing lookups",
 *     SIGCOMM 1997), at most two levels deeper than the balanced tree
 *     and never more than 8: the tree is in the header, the one the
 *     builder expects to take the fewest probes and markers
 *     (user/core/watchlpm.c). A hit means
 *     "longer", a miss "shorter"; so that a hit exists on the way to each
 *     prefix, every prefix puts a *marker* at the lengths where its search
 *     goes longer. A marker's byte is the length of the longest listed
 *     prefix that covers it (its best match, BT_WATCH_NONE: none), not a
 *     class: the class stays in the prefix's own cell alone, and `watch
 *     set` still writes one byte. The search ends on the last hit: a
 *     prefix gives its class; a marker, its best match's length, probed
 *     once more for the class.
 * Two bits of the XOR part are not check bits: BT_WATCH_MARKER_BIT tells
 * markers from keys (markers are XORed with it), BT_WATCH_LEAF_BIT marks a
 * key with no listed prefix under it, where the search can stop (most of a
 * routing table's /48s: one probe for an address under one). An IPv4
 * address reads its word, at most BT_WATCH_R_SEARCH index entries and one
 * line; an IPv6 address takes at most 8 + 1 probes, whatever the list; 4
 * cells a probe.
 *
 * Two slots: `watch load` builds a table (its array in chunks, inner maps
 * of the "watch_cells" array of maps: cells, ranges, index and /16 words;
 * its header in "watch_hdr") into the slot not in use, then points
 * bt_ctl.watch at it: one write (the word counts the loads, the slot is its
 * low bit, so a reader can tell a load came). */
#define BT_WATCH_CLASSES 256		/* ids 1..255; 0 is "none" */
#define BT_WATCH_CLASS_LEN 32
#define BT_WATCH_LENGTHS 129		/* prefix lengths 0..128 */
#define BT_WATCH_CHECK_BITS 44
#define BT_WATCH_MARKER_BIT 47		/* of the XOR part's 48 bits */
#define BT_WATCH_LEAF_BIT 46		/* a key with no listed prefix under it */
#define BT_WATCH_NONE 0xff		/* a length byte: no prefix */
#define BT_WATCH_DIR 65536		/* IPv4 /16s: a table's words, after its index */
#define BT_WATCH_R_WORDS 8		/* /16 words an element */
/* A /16's word (u64): BT_WATCH_R_DIRECT, then bits 0..7 its class and
 * 8..15 its best match's IPv4 length (BT_WATCH_NONE: none); else its first
 * range in the range array, how many, and the index entry that the search
 * over its lines reads first (the first address of the line in the middle:
 * a /16 of two lines needs no index read). */
#define BT_WATCH_R_DIRECT (1ULL << 63)
#define BT_WATCH_R_FIRST(d) ((__u32)(d) & 0x3ffffff)		/* 64M ranges */
#define BT_WATCH_R_COUNT(d) ((__u32)((d) >> 26) & 0x1ffff)
#define BT_WATCH_R_MID(d) ((__u32)((d) >> 43) & 0xffff)
#define BT_WATCH_R_WORD(first, n, mid) ((__u64)(first) | (__u64)(n) << 26 | (__u64)(mid) << 43)
#define BT_WATCH_R_LINE 16		/* ranges a 64-byte element */
#define BT_WATCH_R_INDEX 32		/* lines' first addresses an element */
#define BT_WATCH_R_SEARCH 13		/* index steps: a /16's 65,536 ranges
					 * span at most 4,097 lines */
/* A range: first address in the /16 << 16 | best match's IPv4 length << 8
 * (BT_WATCH_NONE: none) | class; after the last, BT_WATCH_R_PAD. The
 * search key of an address is above the ranges that start at or below it
 * (BT_WATCH_R_KEY of its low 16 bits). */
#define BT_WATCH_R_PAD 0xffffffffu
#define BT_WATCH_R_KEY(a16) ((__u32)(a16) << 16 | 0xfffe)
#define BT_WATCH_V4 96			/* IPv4 /L is the length 96 + L */
#define BT_WATCH_F_FLAT 1		/* IPv4 searched over all its lengths, as
					 * IPv6 (make bench's ablation only) */
#define BT_WATCH_F_V6_TREE 2		/* IPv6 in the range tree, not searched */
/* IPv6's range tree: a list whose IPv6 prefixes are all /64 or
 * shorter cuts the top 64 bits of the space into ranges, as IPv4's; they
 * are the leaves of a static B+ tree (Bayer and McCreight; laid out level
 * by level, a node a cache line). A node holds the first address of its
 * children 1..8 (child 0 starts where the node does); node x's children
 * are x * 9 + 0..8 of the level below (the last levels' rightmost nodes
 * may be missing: an address past the level's last node takes its last).
 * A leaf holds 6 ranges: their first addresses, then their answers (best
 * match's length << 8 | class); a compact leaf 9, whose first addresses
 * lie within 2^32 of its first. After a leaf's last range, copies of it. */
#define BT_WATCH_T_KEYS 8		/* a node's keys */
#define BT_WATCH_T_FAN (BT_WATCH_T_KEYS + 1)
#define BT_WATCH_T_LEAF 6		/* ranges a leaf */
#define BT_WATCH_T_COMPACT 9		/* ranges a compact leaf: the first's
					 * address, the others' 32-bit offsets
					 * from it (ranges within 2^32 /64s) */
#define BT_WATCH_T_LEVELS 8		/* above the leaves, at most: a slot's
					 * 2^22 elements need 7 */
#define BT_WATCH_T_MAX_LEN 64		/* the longest IPv6 prefix it holds */
#define BT_WATCH_CELL_BYTES 7
/* A table's array in chunks of one size: inner maps of one size
 * let the verifier inline their lookups, where an inner map of its own
 * size (BPF_F_INNER_MAP) costs a call a read, 4 a probe (docs/benchmark.md,
 * "Watch lists at speed": inlined against called).
 * Element g of slot s is element g % BT_WATCH_CHUNK of the map at
 * s * BT_WATCH_CHUNKS + g / BT_WATCH_CHUNK. A chunk costs its map's page
 * and a table its last chunk's rest: 256 KiB chunks minimize the sum for
 * tables of about 10 MiB. */
#define BT_WATCH_CHUNK_SHIFT 12
#define BT_WATCH_CHUNK (1u << BT_WATCH_CHUNK_SHIFT)	/* elements: 256 KiB */
#define BT_WATCH_CHUNKS 1024		/* a slot's at most: 256 MiB */
/* watch_cells' key of chunk c of slot s */
#define BT_WATCH_CHUNK_KEY(s, c) ((__u32)(s) * BT_WATCH_CHUNKS + (__u32)(c))
#define BT_WATCH_GROUP 9		/* cells an array element (63 of its 64
					 * bytes: an element is a cache line) */

/* An element of a table's array: 9 cells, a line of IPv4 ranges, of
 * their index or of /16 words, a node or a leaf of IPv6's tree. */
struct bt_watch_group {
	union {
		__u8 b[64];
		__u32 w[BT_WATCH_R_LINE];
		__u16 h[BT_WATCH_R_INDEX];
		__u64 d[BT_WATCH_R_WORDS];	/* /16 words; a tree's node */
		struct {
			__u64 s[BT_WATCH_T_LEAF];
			__u16 e[BT_WATCH_T_LEAF];
			__u8 pad[3];
			__u8 compact;		/* 0 */
		} t;				/* a tree's leaf */
		struct {
			__u64 base;		/* the first range's first address */
			__u32 d[BT_WATCH_T_COMPACT - 1];	/* the others', - base */
			__u16 e[BT_WATCH_T_COMPACT];
			__u8 pad[5];
			__u8 compact;		/* 1 */
		} tc;				/* a compact leaf */
	};
};

struct bt_watch_hdr {
	__u64 seed;		/* of the hash; a new one each retry */
	__u64 check_mask;	/* the check bits compared, << 2 (over the index) */
	__u32 seg_len;		/* cells a segment, a power of two */
	__u32 seg_count_len;	/* segments * seg_len: where a key's first cell falls */
	__u32 cells;		/* (segments + 3) * seg_len: a key's first cell in
				 * the first segments, its fourth 3 after; 9 a group */
	__u32 keys;		/* entries of the Bloomier table, markers too */
	__u8 nlen[2];		/* distinct prefix lengths: IPv4 keys, IPv6 keys */
	__u8 flags;		/* BT_WATCH_F_* */
	__u8 pad;
	__u32 markers;		/* of the keys */
	__u32 entries;		/* the list's, after expansion; 0: no table */
	__u32 groups;		/* array elements of the cells; IPv4's after */
	__u32 v4_lines;		/* elements of IPv4's ranges */
	__u32 v4_index;		/* elements of their index, after them */
	__u32 v4_ranges;	/* ranges in use */
	__u32 v4_dir;		/* elements of /16 words after the index
				 * (BT_WATCH_DIR / 8); 0: no IPv4 key */
	__u8 len[2][136];	/* each family's lengths, shortest first */
	/* The search tree over each family's lengths (IPv6's; IPv4's only
	 * with BT_WATCH_F_FLAT): node i is the length len[f][i], its children
	 * nodes left[f][i] (shorter) and right[f][i] (longer), BT_WATCH_NONE
	 * for none; root[f] the first. */
	__u8 root[2];
	__u8 depth[2];		/* the tree's levels: its most probes */
	__u8 pad2[4];
	__u8 left[2][136];
	__u8 right[2][136];
	/* IPv6's range tree (BT_WATCH_F_V6_TREE), after the /16 words: each
	 * level's first element and elements, the root's first, the leaves'
	 * at v6_levels */
	__u32 v6_at[BT_WATCH_T_LEVELS + 1];
	__u32 v6_nodes[BT_WATCH_T_LEVELS + 1];
	__u32 v6_ranges;
	__u32 v6_elems;		/* of the whole tree */
	__u8 v6_levels;		/* above the leaves */
	__u8 pad3[7];
};
_Static_assert(sizeof(struct bt_watch_hdr) == 976, "bt_watch_hdr must be 976 bytes");

/* Per CPU and class: [0] as source, [1] as destination. */
struct bt_watch_count {
	__u64 packets[2];
	__u64 bytes[2];
};
_Static_assert(sizeof(struct bt_watch_count) == 32, "bt_watch_count must be 32 bytes");

/* A class's name (user space's: the datapath counts by id). */
struct bt_watch_class {
	char name[BT_WATCH_CLASS_LEN + 1];	/* "" when the id is free */
	__u8 pad[7];
	__u64 entries;		/* list entries of the table in use */
};
_Static_assert(sizeof(struct bt_watch_class) == 48, "bt_watch_class must be 48 bytes");

/* What makes a flow heavy: at least this many bytes or packets in an
 * interval, or at least this fraction (ppb) of the interval's bytes. */
enum bt_threshold_kind { BT_THR_FRACTION, BT_THR_BYTES, BT_THR_PACKETS };

/* ---- Drops (the kernel's drop path, tp_btf/kfree_skb) ----
 *
 * One program for the host (bpf/drops_host.bpf.c) sees every drop of every
 * network namespace. It attributes a drop to an instance by the pair
 * (network namespace inode, ingress ifindex), never the ifindex alone, and
 * tail-calls that instance's own drop program (bpf/drop.bpf.h), which
 * shares the instance's maps: the packet's SPIE digest, tagged with the
 * reason (bt_hash_drop), goes into the instance's current window, the
 * same filter, fill and ring as the XDP program's digests. Reasons are
 * the running kernel's enum skb_drop_reason values (names from its BTF,
 * never a table here): the core's below 1 << 16, a subsystem's with the
 * subsystem in the upper 16 bits. */
#define BT_DROP_SLOTS 64		/* instances with drops, host-wide */
#define BT_DROP_OWNERS 4096		/* drop_owners' entries: the instances'
					 * interfaces, their stacked devices, the
					 * workloads' devices */
#define BT_DROP_SHARED_MAX 4096	/* an instance's drop_shared entries */
#define BT_DROP_REASONS 1024		/* bits of the suppression map: core
					 * reasons (subsystems' are never
					 * suppressed) */
#define BT_MAX_SEGS 64		/* segments of one GRO or GSO skb digested, at most */

struct bt_drop_owner {
	__u32 netns;		/* the namespace's inode (/proc/self/ns/net) */
	__u32 ifindex;
};
/* drop_owners' value: the instance's slot in drop_progs for its own
 * interface; with BT_DROP_UPPER for a device stacked on it (a bridge's
 * local delivery, a VLAN, a bond, a macvlan: each receives the packet
 * again and names itself in skb_iif) whose every lower is the instance's
 * interface; with BT_DROP_UPPER | BT_DROP_DIGEST for one that also
 * receives what the instance never saw (a bridge's other ports, a bond's
 * other slaves, a macvlan's or ipvlan's siblings): its drops are the
 * instance's only when the packet's digest is in the instance's current
 * or previous window (its "drop_shared" map names the device for the drop
 * program); BT_DROP_SHARED for a device stacked on several instances'
 * interfaces: its slot is past drop_progs' end, so the tail call fails
 * and the host counts the drop (user/instance/drops.c keeps them). With
 * BT_DROP_UPPER | BT_DROP_DIGEST | BT_DROP_WORKLOAD: a workload's device
 * in another namespace (a container's veth end, whose peer the node
 * forwards into), digest-checked as a shared device is; the agent's
 * loop keeps these (user/instance/drops.c bt_drops_refresh_workloads). */
#define BT_DROP_SLOT_MASK 0xffffu
#define BT_DROP_UPPER (1u << 31)
#define BT_DROP_DIGEST (1u << 30)
#define BT_DROP_WORKLOAD (1u << 29)
/* drop_shared's value: what kind of device its key names */
#define BT_SHARED_UPPER 1	/* stacked on the instance's interface and others' */
#define BT_SHARED_WORKLOAD 2	/* a workload's, in another namespace */
#define BT_DROP_SHARED (BT_DROP_UPPER | BT_DROP_SLOT_MASK)

/* Per CPU and reason (key: the reason). */
struct bt_drop_count {
	__u64 packets;		/* GRO'd skbs count their segments */
	__u64 bytes;
};

/* Drops that got no digest, by cause (per CPU, the instance's
 * "drop_counters"): counted, never guessed at. */
enum bt_drop_counter {
	BT_DROP_DIGESTED,	/* packets whose digest went in */
	BT_DROP_SUPPRESSED,	/* a suppressed reason: counted, no digest */
	BT_DROP_NO_NETWORK,	/* network header unset, or no L2 header */
	BT_DROP_NOT_IP,		/* skb->protocol not IPv4/IPv6, or the
				 * version nibble disagrees */
	BT_DROP_NONLINEAR,	/* the 8 bytes after the IP header are not
				 * in the linear part */
	BT_DROP_SEGS_CAPPED,	/* GRO segments past BT_MAX_SEGS */
	BT_DROP_GSO_NOT_TCP,	/* segments of a GRO'd skb other than TCP (UDP
				 * GRO: each segment's checksum is gone) */
	BT_DROP_GRO_SKBS,	/* GRO'd TCP skbs whose segments were rebuilt
				 * (not a cause: how often GRO was met) */
	/* Frees that are not this instance's drops (no reason counted, no
	 * digest): */
	BT_DROP_DELIVERED_FREED,	/* an ICMP echo reply freed as NO_SOCKET
					 * after a raw socket took its clone:
					 * delivered (ping without ping sockets) */
	BT_DROP_SHARED_NOT_SEEN,	/* on a device stacked on the instance's
					 * interface and others (BT_DROP_DIGEST):
					 * its digest is not in the instance's
					 * windows, or it has none to look for */
	BT_DROP_WORKLOAD_NOT_SEEN,	/* the same on a workload's device in
					 * another namespace (BT_DROP_WORKLOAD):
					 * a container's own traffic, mostly */
	BT_DROP_CTR_MAX,
};

struct bt_drop_counters {
	__u64 c[16];		/* enum bt_drop_counter */
};
_Static_assert(BT_DROP_CTR_MAX <= 16, "bt_drop_counters holds 16 counters");
_Static_assert(sizeof(struct bt_drop_counters) == 128, "bt_drop_counters must be 128 bytes");

/* The reasons of one window's drop digests, per CPU ("wdrops", W
 * entries): a reason claims a slot; one that finds none counts in other,
 * and a query then tries every reason the kernel has. User space sums the
 * CPUs' slots when it seals the window and keeps them in the archive. */
#define BT_WIN_DROP_SLOTS 7
struct bt_window_drops {
	__u32 reason[BT_WIN_DROP_SLOTS];
	__u32 count[BT_WIN_DROP_SLOTS];	/* 0: the slot is free */
	__u32 other;
	__u32 pad;
};
_Static_assert(sizeof(struct bt_window_drops) == 64, "bt_window_drops must be 64 bytes");

/* The drop recorder: the recent drops themselves (bpf/drop.bpf.h
 * record_drop), for each drop that got a digest. "drop_rec" is a per-CPU
 * array ring of drop_ring slots, each a struct bt_drop_rec and the
 * frame's first drop_head bytes (value size BT_DROP_REC_SIZE): each CPU
 * writes its own slot (written % drop_ring), overwriting the oldest, with
 * no lock. A slot is a seqlock: the writer sets its seq to 0 (an atomic
 * exchange, a full barrier) before it writes the record, and to the
 * record's number last (another); a reader takes a slot only if its seq
 * is the number that position holds (BT_REC_SEQ_AT below) in
 * a lookup before its copy and in one after. "drop_rec_pos", per CPU, the
 * drop program's counts. A record is read when a follower got it (the
 * ring buffer took it: followed); a dump (drops --pcap, the API) reads a
 * snapshot and marks nothing. A slot overwritten while it holds a record
 * no follower got counts in overwritten. While "drop_follow" holds a
 * follower's PID, each record also goes to the "drop_events" ring buffer,
 * or counts as follow_lost when the buffer is full. */
#define BT_DROP_HEAD_DEFAULT 256
#define BT_DROP_HEAD_MAX 9216		/* a jumbo frame: a per-CPU value stays
					 * under the kernel's 32 KiB */
#define BT_DROP_RING_DEFAULT 512	/* slots per CPU */
#define BT_DROP_RING_MAX 65536
#define BT_DROP_EVENTS_BYTES (1u << 20)	/* the follower's ring buffer */
#define BT_DROP_DIR_IN 1		/* pcapng epb_flags' direction bits */
#define BT_DROP_DIR_OUT 2
struct bt_drop_rec {
	__u64 seq;		/* this CPU's record number, from 1; 0: empty, or
				 * being written */
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 reason;		/* the kernel's enum skb_drop_reason value */
	__u32 ifindex;		/* the device it died on (skb->dev) */
	__u32 iif;		/* the device it came in by (skb_iif) */
	__u32 frame_len;	/* bytes from the frame's start to its end */
	__u16 segs;		/* packets it stands for (a GRO'd skb's gso_segs) */
	__u16 followed;		/* 1: the follower's ring buffer took it */
	__u16 cap_len;		/* bytes of data[] kept: the linear part, drop_head at most */
	__u8 dir;		/* BT_DROP_DIR_IN: skb->dev is skb_iif; else OUT */
	__u8 l2;		/* 1: data starts at an Ethernet header; 0: at the IP header */
	__u16 wl[2];		/* the source's and destination's workload ids
				 * when it was dropped (0: none; wl_names) */
	__u32 netns;		/* the inode of skb->dev's network namespace:
				 * ifindex's (a workload's device is another's) */
	__u8 data[];
};
_Static_assert(sizeof(struct bt_drop_rec) == 48, "bt_drop_rec must be 48 bytes");
#define BT_DROP_REC_SIZE(head) ((sizeof(struct bt_drop_rec) + (head) + 7) / 8 * 8)
/* The record number slot i of a ring of `slots` holds once `written`
 * records were made: the newest n <= written with n % slots == (i + 1) %
 * slots; 0 if none */
#define BT_REC_SEQ_AT(written, slots, i)                                                  \
	((written) > (i) ? (written) - ((written) - 1 - (i)) % (slots) : 0)

enum { BT_REC_POS_KERNEL, BT_REC_POS_KEYS };
struct bt_drop_rec_pos {
	__u64 written;		/* records made */
	__u64 overwritten;	/* records overwritten that no follower got */
	__u64 follow_sent;	/* records the ring buffer took */
	__u64 follow_lost;	/* records it had no room for */
};
_Static_assert(sizeof(struct bt_drop_rec_pos) == 32, "bt_drop_rec_pos must be 32 bytes");

/* Workloads (docs/workloads.md "Attribution"): the agent keeps the
 * node's workloads' addresses in wl_addr, one id a workload generation (a
 * namespace and its containers as the agent saw them; a new container on
 * the same address is a new generation). The datapath looks up each
 * received packet's two addresses there (when bt_ctl.workloads), counts
 * them per id in wl_counts and writes the ids into the heavy-flow key's
 * pad, so that a flow is named by the workload its address had when the
 * packet passed, and an address reused by the next pod is a new flow.
 * Ids are 12 bits: 1..BT_WL_IDS - 1, given round-robin, so that an id
 * comes back only after BT_WL_IDS - 2 later generations; wl_names keeps
 * each id's name (user space only) until then.
 *
 * wl_addr: two tables (bt_ctl.workloads' low bit: the one in use; the
 * rest: its addresses, 0 when none), each BT_WL_SLOTS slots, open
 * addressing: an address in one of the BT_WL_PROBES slots from
 * bt_wl_hash(), the first empty slot (id 0) ending a search. The agent
 * writes the table not in use whole, switches with one store, and writes
 * the other only after a grace period. Array lookups, which the verifier
 * inlines: a hash map's two lookups cost 70 ns a packet here. */
#define BT_WL_IDS 4096
/* wl_counts' stages: enum bt_direction's, then the drop program's (the
 * instance's drops, counted by the workloads of their two addresses) */
#define BT_WL_DROPPED BT_DIRS
#define BT_WL_STAGES (BT_DIRS + 1)
#define BT_WL_SLOTS 16384	/* a table's slots, a power of two */
#define BT_WL_ADDRS 8192	/* addresses a table takes at most: half full */
#define BT_WL_PROBES 8
#define BT_WL_NAME_LEN 183	/* bytes of a name kept (cut beyond) */

struct bt_wl_slot {
	__u64 addr[2];		/* the address's bytes as a flow key holds them */
	__u32 id;		/* 0: empty */
	__u32 pad;
};
_Static_assert(sizeof(struct bt_wl_slot) == 24, "bt_wl_slot must be 24 bytes");

/* The first slot of an address's search (its two 8-byte words, as loaded
 * from the key): a multiply-shift hash. Unkeyed: only the agent's
 * addresses are in the table, and a search reads at most BT_WL_PROBES
 * slots whatever the traffic. */
static inline __u32 bt_wl_hash(__u64 w0, __u64 w1)
{
	return ((w0 ^ (w1 * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL) >> 50;
}

struct bt_wl_name {
	__u64 gen;			/* the agent's generation number; 0: free */
	char name[BT_WL_NAME_LEN + 1];	/* namespace/pod/container, a container's
					 * name, or the network namespace's */
};
_Static_assert(sizeof(struct bt_wl_name) == 192, "bt_wl_name must be 192 bytes");

/* The source's and destination's ids in a flow key's pad, 12 bits each. */
static inline void bt_wl_pack(__u8 pad[3], __u32 src, __u32 dst)
{
	pad[0] = src & 0xff;
	pad[1] = (src >> 8 & 0xf) | (dst & 0xf) << 4;
	pad[2] = dst >> 4 & 0xff;
}

static inline __u32 bt_wl_unpack(const __u8 pad[3], int side)
{
	return side ? (pad[1] >> 4 | (__u32)pad[2] << 4) : (pad[0] | (__u32)(pad[1] & 0xf) << 8);
}

#endif /* BLOOMTAP_H */
