# bloomtap: XDP observability agent. See README.md.
#   make          build .output/bloomtap (BPF object, skeleton, tool)
#   make demo     install what is missing, build, run the built-in lab
#   make check    build, the unit and BPF_PROG_TEST_RUN suites, layers,
#                 docs and commit messages: a few minutes, installs nothing
#   make test     install what is missing, build, run every test
#                 (SUITES="spie drops": those alone, tests/run.sh's names)
#   make vmlinux  regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
#   make test-kernels  the BPF_PROG_TEST_RUN suites on each kernel of
#                 tests/kernels/kernels.list, under QEMU, and on this one

OUTPUT    := .output
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= gcc
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX   := vmlinux/$(ARCH)/vmlinux.h
# The version is the package's: debian/changelog's first entry, the one
# place it is written (bloomtap --version, the metrics, the .deb, the image).
VERSION   := $(shell sed -n '1s/^bloomtap .\([^ ]*\). .*/\1/p' debian/changelog)

# Every Debian package make test calls a command of, listed once here:
# tests/ship/deps.py fails when a suite calls a command from a package that
# is neither here nor in a fresh Debian's required set. Lists are
# recursive (=) so each may name the ones defined after it.
# make test-kernels (and make test's guests): QEMU's software emulation
# boots Debian's kernels from Debian's mirror; busybox makes the
# initramfs, mmdebstrap the systemd guest's root file system; xz, zstd,
# gzip and lz4 undo the compressions a kernel image may carry
# (tests/kernels/btf.sh takes its BTF out of it).
KERNEL_PKGS = qemu-system-x86 busybox-static kmod xz-utils zstd lz4
# make deb, make image and their test: debhelper and lintian; mmdebstrap
# makes the image's root file system from Debian's mirror, podman imports
# and runs it (with runc: Debian's crun fails here); node and npm for the
# manifests' schema check (tests/ship/manifests.sh). A node that already has
# npm (nodesource's nodejs provides and conflicts with Debian's npm)
# counts as npm: see deps below.
PACKAGE_PKGS = build-essential debhelper lintian mmdebstrap podman runc nodejs npm
# Build, test oracle (tshark) and test traffic; htpasswd (apache2-utils)
# makes the bcrypt users of a web config as the docs do.
DEB_PKGS  = clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev \
	     libcmocka-dev libjson-c-dev libzstd-dev libmicrohttpd-dev \
	     pkg-config iproute2 iputils-ping netcat-openbsd tshark python3 \
	     prometheus curl python3-yaml systemd libclang-rt-14-dev \
	     libfixbuf-dev nfdump pmacct man-db bash-completion nftables ethtool \
	     libyaml-dev libgnutls28-dev libcurl4-gnutls-dev libcrypt-dev openssl libcap2-bin util-linux git \
	     apache2-utils \
	     $(KERNEL_PKGS) $(PACKAGE_PKGS)

PC_LIBS   := libbpf libpcap json-c libzstd zlib libmicrohttpd libfixbuf yaml-0.1 gnutls libcrypt libcurl
LIBS      := $(shell pkg-config --libs $(PC_LIBS) 2>/dev/null || echo -lbpf -lelf -lz -lpcap -ljson-c -lzstd -lmicrohttpd -lfixbuf -lglib-2.0 -lyaml -lgnutls -lcrypt -lcurl-gnutls) -lm -lpthread
# libfixbuf's headers include glib's: as system headers, out of -Werror's way
FIXBUF_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libfixbuf 2>/dev/null))
OPT_CFLAGS ?= -O2 -g
# -MMD -MP: every object depends on the headers it includes (the .d files
# included at the end), include/hash.h on both sides among them.
CFLAGS    := $(OPT_CFLAGS) -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -std=gnu11 \
	     -Iinclude -Iuser -I$(OUTPUT) -D_GNU_SOURCE -MMD -MP $(FIXBUF_CFLAGS) -DBT_VERSION='"$(VERSION)"'
BPF_CFLAGS := -O2 -g -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
	     -Iinclude -Ivmlinux/$(ARCH) -mcpu=v3 -MMD -MP

# The captures the tests read, one definition for the shell and C tests.
BT_PCAPS  ?= $(CURDIR)/../shared/data/pcaps
export BT_PCAPS

# user/'s folders are its layers, lowest first (tests/ship/layers.py keeps an
# include from pointing up, and each layer to its rule): base, core (no
# bpf(2)), instance (what calls bpf(2)), report (the answers the CLI and the
# API share), agent, cmd
USER_LIB_SRCS := $(filter-out user/cmd/main.c,$(wildcard user/*/*.c))
USER_LIB_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_LIB_SRCS))
# the layers below instance/ alone: what links them makes no bpf(2) call
USER_CORE_OBJS := $(filter $(OUTPUT)/user/base/% $(OUTPUT)/user/core/%,$(USER_LIB_OBJS))
# the skeleton is generated: objects that include it wait for it
USER_HDRS := $(OUTPUT)/bloomtap.skel.h $(OUTPUT)/drops_host.skel.h

TEST_BINS := $(OUTPUT)/tests/test_unit $(OUTPUT)/tests/test_datapath $(OUTPUT)/tests/test_heavy $(OUTPUT)/tests/test_spie $(OUTPUT)/tests/test_watch $(OUTPUT)/tests/test_ring \
	     $(OUTPUT)/tests/xdp_pass.bpf.o $(OUTPUT)/tests/tc_drop.bpf.o $(OUTPUT)/tests/flowgen \
	     $(OUTPUT)/tests/mkarchive

.PHONY: all deps demo check test test-kernels test-mutants test-asan asan-build fuzz fuzz-build bench soak clean vmlinux print-pcaps print-fuzz-targets \
	man install uninstall deb image seccomp package-test print-version print-deb print-deb-pkgs
all: $(OUTPUT)/bloomtap

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests:
	mkdir -p $@

$(OUTPUT)/bloomtap.bpf.o: bpf/bloomtap.bpf.c | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c bpf/bloomtap.bpf.c -o $@

$(OUTPUT)/bloomtap.skel.h: $(OUTPUT)/bloomtap.bpf.o
	$(BPFTOOL) gen skeleton $< name bloomtap_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/drops_host.bpf.o: bpf/drops_host.bpf.c | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -c bpf/drops_host.bpf.c -o $@

$(OUTPUT)/drops_host.skel.h: $(OUTPUT)/drops_host.bpf.o
	$(BPFTOOL) gen skeleton $< name drops_host_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) | $(OUTPUT)/user
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# made anew: two folders may hold a file of one name (cmd/trace.c beside
# report/, instance/), and ar r would replace one member with the other
$(OUTPUT)/libbloomtap.a: $(USER_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^
$(OUTPUT)/libbloomtap_core.a: $(USER_CORE_OBJS)
	rm -f $@
	ar rcs $@ $^

# the two that print the version are rebuilt when it changes
$(OUTPUT)/user/cmd/main.o $(OUTPUT)/user/agent/metrics.o: debian/changelog

$(OUTPUT)/bloomtap: $(OUTPUT)/user/cmd/main.o $(OUTPUT)/libbloomtap.a
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/tests/%.bpf.o: tests/lib/%.bpf.c | $(OUTPUT)/tests
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/flowgen: tests/lib/flowgen.c | $(OUTPUT)/tests
	$(CC) $(CFLAGS) -Itests/lib $< -o $@

$(OUTPUT)/tests/mkarchive: tests/lib/mkarchive.c $(OUTPUT)/libbloomtap.a | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $< $(OUTPUT)/libbloomtap.a $(LIBS) -o $@

# tests/unit: pure user space; tests/prog: the BPF object under BPF_PROG_TEST_RUN
TEST_CMD = $(CC) $(CFLAGS) -DBT_PCAPS='"$(BT_PCAPS)"' -Itests/lib $< $(OUTPUT)/libbloomtap.a $(LIBS) -lcmocka -lpthread -o $@
$(OUTPUT)/tests/%: tests/unit/%.c $(OUTPUT)/libbloomtap.a $(USER_HDRS) | $(OUTPUT)/tests
	$(TEST_CMD)
$(OUTPUT)/tests/%: tests/prog/%.c $(OUTPUT)/libbloomtap.a $(USER_HDRS) | $(OUTPUT)/tests
	$(TEST_CMD)

# Installs only what is missing, so a second run costs nothing. A
# package counts as there when it is installed or an installed package
# provides it (nodesource's nodejs provides npm).
deps:
	@have=$$(dpkg-query -W -f='$${db:Status-Abbrev}|$${Package} $${Provides}\n' 2>/dev/null | \
		sed -n 's/^ii *|//p' | sed -E 's/ \([^)]*\)//g; s/,/ /g; s/:[a-z0-9]+//g'); \
	missing=""; for p in $(DEB_PKGS); do \
		printf '%s\n' $$have | grep -qx -- "$$p" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

demo: deps
	$(MAKE) all
	$(OUTPUT)/bloomtap demo

# the builds use every CPU (serial, they took about 6 of make test's 50
# minutes here); the suites run one at a time (they share the host's
# drop program and bpffs)
NPROC := $(shell nproc 2>/dev/null || echo 1)
# SUITES="a b" (tests/run.sh's names, exported to it): those alone, and of
# the ASan, fuzz and package builds only the ones they run against
test_needs = $(if $(SUITES),$(filter $(1),$(SUITES)),all)
test: deps
	$(MAKE) -j$(NPROC) all $(TEST_BINS)
	$(if $(call test_needs,asan/%),$(MAKE) -j$(NPROC) asan-build)
	$(if $(call test_needs,fuzz),$(MAKE) -j$(NPROC) fuzz-build)
	$(if $(call test_needs,package image systemd),$(MAKE) deb image)
	FUZZ_TEST_SECONDS=$(FUZZ_TEST_SECONDS) tests/run.sh

# The loop between two edits, in under 5 minutes on this 2-CPU machine:
# tests/run.sh's machinery over the suites that need no guest, lab,
# container or package. It installs nothing: what is missing is named.
CHECK_SUITES := test_unit test_datapath test_heavy test_spie test_watch test_ring \
	layers docs doc_commands commits
CHECK_CMDS   := $(CLANG) $(BPFTOOL) $(CC) pkg-config python3 git unshare
check:
	@cmds=""; libs=""; for c in $(CHECK_CMDS); do command -v $$c >/dev/null || cmds="$$cmds $$c"; done; \
	for l in $(PC_LIBS) cmocka; do pkg-config --exists $$l 2>/dev/null || libs="$$libs $$l"; done; \
	[ -z "$$cmds$$libs" ] || { echo "make check: missing$${cmds:+ commands:$$cmds;}$${libs:+ libraries (pkg-config):$$libs;}" \
		"make deps installs them" >&2; exit 1; }
	$(MAKE) -j$(NPROC) all $(addprefix $(OUTPUT)/tests/,$(filter test_%,$(CHECK_SUITES)))
	SUITES="$(CHECK_SUITES)" tests/run.sh

# The kernels' matrix (tests/kernels/vmtest.sh); KERNELS="6.1 running"
# picks some of tests/kernels/kernels.list's.
KERNELS ?=
test-kernels: deps
	$(MAKE) all $(TEST_BINS)
	tests/kernels/vmtest.sh $(KERNELS)

# Deliberately broken builds, each of which a suite must catch (not part
# of make test: a build and a suite run each).
test-mutants: deps
	$(MAKE) all
	tests/mutants.sh

# User space once more under AddressSanitizer and UndefinedBehaviorSanitizer
# (any report aborts the test that met it, which then fails).
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan-build:
	$(MAKE) OUTPUT=$(OUTPUT)/asan OPT_CFLAGS="$(ASAN_FLAGS)" $(OUTPUT)/asan/bloomtap \
		$(patsubst $(OUTPUT)/%,$(OUTPUT)/asan/%,$(TEST_BINS))

test-asan: deps
	$(MAKE) asan-build
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ONLY_BUILD=$(OUTPUT)/asan tests/run.sh

$(OUTPUT)/bench.bpf.o: bench/bench.bpf.c | $(OUTPUT)
	$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@

$(OUTPUT)/bench.skel.h: $(OUTPUT)/bench.bpf.o
	$(BPFTOOL) gen skeleton $< name bench_bpf > $@.tmp && mv $@.tmp $@

# main.c (the sections' table), core.c, lab.c and one file a section
BENCH_SRCS := $(filter-out bench/soakgen.c bench/%.bpf.c,$(wildcard bench/*.c))
$(OUTPUT)/bench: $(BENCH_SRCS) bench/bench.h bench/driver.h tests/lib/bgp_shape.h $(OUTPUT)/bench.skel.h $(OUTPUT)/libbloomtap.a $(USER_HDRS)
	$(CC) $(CFLAGS) $(BENCH_SRCS) $(OUTPUT)/libbloomtap.a $(LIBS) -o $@

$(OUTPUT)/soakgen: bench/soakgen.c bench/driver.c $(OUTPUT)/bench.skel.h $(OUTPUT)/libbloomtap.a $(USER_HDRS)
	$(CC) $(CFLAGS) bench/soakgen.c bench/driver.c $(OUTPUT)/libbloomtap.a $(LIBS) -o $@

# libFuzzer targets (clang): the library built again with coverage and
# sanitizers into $(OUTPUT)/fuzz. make fuzz runs each for FUZZ_SECONDS;
# make test runs each for FUZZ_TEST_SECONDS (tests/fuzz/run.sh). Crashes
# land in $(OUTPUT)/fuzz/artifacts/<target>/; keep each, named for what it
# found, in tests/fuzz/regressions/<target>/, which run.sh replays first.
FUZZ_TARGETS := capture hex options archive topology watchlist
# those that link base/ and core/ alone (libbloomtap_core.a)
FUZZ_CORE_TARGETS := archive hex watchlist
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 8
FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
fuzz-build:
	$(MAKE) OUTPUT=$(OUTPUT)/fuzz CC=clang OPT_CFLAGS="$(FUZZ_CFLAGS)" $(OUTPUT)/fuzz/libbloomtap.a \
		$(OUTPUT)/fuzz/libbloomtap_core.a
	for t in $(FUZZ_TARGETS); do \
		lib=$(OUTPUT)/fuzz/libbloomtap.a; \
		case " $(FUZZ_CORE_TARGETS) " in *" $$t "*) lib=$(OUTPUT)/fuzz/libbloomtap_core.a;; esac; \
		clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser \
			-I$(OUTPUT)/fuzz tests/fuzz/fuzz_$$t.c $$lib $(LIBS) \
			-o $(OUTPUT)/fuzz/fuzz_$$t || exit 1; \
	done

fuzz: deps
	$(MAKE) fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS)

# Speed and memory against baselines measured in the same run (needs root).
# ARGS: the sections to run (ARGS="live watch"; ARGS=-h lists them), all
# but watch-list without it
bench: deps
	$(MAKE) all $(OUTPUT)/bench
	$(OUTPUT)/bench -o $(OUTPUT)/bench.txt $(ARGS)

# The agent under load for about 10 minutes, killed twice (needs root; not
# part of make test). SOAK_SECONDS sets the traffic's length.
soak: deps
	$(MAKE) all $(OUTPUT)/soakgen $(OUTPUT)/tests/xdp_pass.bpf.o
	bash -o pipefail -c 'OUTPUT=$(OUTPUT) python3 tests/oracle/soak.py | tee $(OUTPUT)/soak.txt'

# Installing like a system tool. PREFIX and DESTDIR as usual; what install
# puts down is listed in $(DATADIR)/installed, which uninstall removes file
# by file. A configuration already in $(SYSCONFDIR) is kept (and not
# listed); one changed since it was installed survives uninstall.
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
SBINDIR    := $(PREFIX)/sbin
MANDIR     := $(PREFIX)/share/man
DATADIR    := $(PREFIX)/share/bloomtap
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMPDIR    ?= $(PREFIX)/share/bash-completion/completions
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# the list uninstall reads; a package leaves it out (dpkg keeps its own)
INSTALL_MANIFEST ?= yes

# bloomtap(8) from the tool's own --help: one source, no drift
man: $(OUTPUT)/bloomtap.8
$(OUTPUT)/bloomtap.8: $(OUTPUT)/bloomtap deploy/bloomtap-man.py
	python3 deploy/bloomtap-man.py $(OUTPUT)/bloomtap > $@.tmp && mv $@.tmp $@

install: all man
	@set -e; m="$(DESTDIR)$(DATADIR)/installed"; mkdir -p "$(DESTDIR)$(DATADIR)"; : > "$$m.tmp"; \
	sed -e 's|/usr/local/sbin/bloomtap|$(SBINDIR)/bloomtap|' \
	    -e 's|/etc/bloomtap/|$(SYSCONFDIR)/bloomtap/|' deploy/bloomtap.service > $(OUTPUT)/bloomtap.service; \
	put() { install -D -m $$1 "$$2" "$(DESTDIR)$$3"; echo "$$3" >> "$$m.tmp"; echo "  $$3"; }; \
	put 0755 $(OUTPUT)/bloomtap $(SBINDIR)/bloomtap; \
	put 0644 $(OUTPUT)/bloomtap.service $(UNITDIR)/bloomtap.service; \
	put 0644 $(OUTPUT)/bloomtap.8 $(MANDIR)/man8/bloomtap.8; \
	put 0644 deploy/bloomtap.bash-completion $(COMPDIR)/bloomtap; \
	put 0644 deploy/bloomtap.sysusers $(SYSUSERSDIR)/bloomtap.conf; \
	put 0644 deploy/bloomtap.conf $(DATADIR)/bloomtap.conf.example; \
	put 0644 deploy/grafana/bloomtap.json $(DATADIR)/grafana/bloomtap.json; \
	put 0644 deploy/bloomtap-seccomp.json $(DATADIR)/bloomtap-seccomp.json; \
	put 0644 deploy/bloomtap-workloads.conf $(DATADIR)/bloomtap-workloads.conf; \
	conf=$(SYSCONFDIR)/bloomtap/bloomtap.conf; \
	if [ ! -e "$(DESTDIR)$$conf" ]; then put 0644 deploy/bloomtap.conf $$conf; \
	elif grep -qx "$$conf" "$$m" 2>/dev/null; then \
		echo "$$conf" >> "$$m.tmp"; echo "  kept $$conf (installed before: still ours)"; \
	else echo "  kept $$conf (not installed by make install)"; fi; \
	if [ "$(INSTALL_MANIFEST)" = yes ]; then echo "$(DATADIR)/installed" >> "$$m.tmp"; mv "$$m.tmp" "$$m"; \
	else rm -f "$$m.tmp"; fi; \
	if [ -z "$(DESTDIR)" ] && ! getent passwd bloomtap >/dev/null; then \
		if command -v systemd-sysusers >/dev/null; then \
			systemd-sysusers "$(SYSUSERSDIR)/bloomtap.conf"; \
		else useradd --system --home-dir /var/lib/bloomtap --no-create-home \
			--shell /usr/sbin/nologin bloomtap; fi; \
		echo "  made the system user bloomtap (the service runs as it)"; fi

uninstall:
	@set -e; m="$(DESTDIR)$(DATADIR)/installed"; \
	[ -f "$$m" ] || { echo "uninstall: nothing installed under $(DESTDIR)$(PREFIX) ($$m)" >&2; exit 1; }; \
	if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl disable --now bloomtap.service >/dev/null 2>&1 || true; fi; \
	conf=$(SYSCONFDIR)/bloomtap/bloomtap.conf; changed=; \
	if [ -e "$(DESTDIR)$$conf" ] && ! cmp -s "$(DESTDIR)$$conf" "$(DESTDIR)$(DATADIR)/bloomtap.conf.example"; then \
		changed=1; fi; \
	while read -r f; do \
		if [ "$$f" = "$$conf" ] && [ -n "$$changed" ]; then \
			echo "  kept $$f (changed since installed)"; continue; fi; \
		rm -f "$(DESTDIR)$$f"; echo "  removed $$f"; done < "$$m"; \
	rmdir --ignore-fail-on-non-empty "$(DESTDIR)$(DATADIR)/grafana" "$(DESTDIR)$(DATADIR)" \
		"$(DESTDIR)$(SYSCONFDIR)/bloomtap" 2>/dev/null || true

# The Debian package, built by dpkg-buildpackage in a copy of the tree
# (its build writes next to the source, and cleans it first): the .deb,
# its lintian report and build log land in $(OUTPUT)/.
DEB      := $(OUTPUT)/bloomtap_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
deb: deps
	$(MAKE) $(DEB)
$(DEB): $(shell git ls-files 2>/dev/null) | $(OUTPUT)
	rm -rf $(OUTPUT)/deb && mkdir -p $(OUTPUT)/deb/bloomtap-$(VERSION)
	tar -c --exclude=./.output* --exclude=./.git . | tar -x -C $(OUTPUT)/deb/bloomtap-$(VERSION)
	cd $(OUTPUT)/deb/bloomtap-$(VERSION) && dpkg-buildpackage -us -uc -b -j$(NPROC) > ../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	cp $(OUTPUT)/deb/bloomtap_$(VERSION)_*.deb $(OUTPUT)/
	lintian --info --display-info --pedantic $(OUTPUT)/deb/bloomtap_$(VERSION)_*.changes \
		> $(OUTPUT)/lintian.txt 2>&1 || true
	cat $(OUTPUT)/lintian.txt

# The container image from Debian's packages alone (deploy/image.sh):
# bloomtap:$(VERSION) in podman's store and $(OUTPUT)/bloomtap_$(VERSION).oci.tar.
# The packages it downloads are kept in IMAGE_APT_CACHE for the next build.
IMAGE_APT_CACHE ?= /var/cache/bloomtap-build/debs
image: deb
	APT_CACHE=$(IMAGE_APT_CACHE) deploy/image.sh $(DEB) $(VERSION) $(OUTPUT)/bloomtap_$(VERSION).oci.tar

# The container's seccomp profile, in the tree (so that a clone has it;
# make install, the .deb and the image put it in $(DATADIR)): the
# runtime's default with bpf(2) and perf_event_open(2) allowed, made again
# from this host's default by deploy/seccomp.py (tests/ship/doc_commands.py
# checks that it is current).
seccomp:
	python3 deploy/seccomp.py > deploy/bloomtap-seccomp.json

# The package and the image, installed and run (also part of make test).
package-test: deps
	$(MAKE) all deb image
	SUITES="package image manifests" tests/run.sh

print-pcaps:
	@echo $(BT_PCAPS)

print-version:
	@echo $(VERSION)

# the .deb make deb writes, from the top of the tree (the tests' default)
print-deb:
	@echo $(DEB)

# the packages make deps installs (tests/ship/deps.py checks the run needs no other)
print-deb-pkgs:
	@echo $(DEB_PKGS)

print-fuzz-targets:
	@echo $(FUZZ_TARGETS)

vmlinux:
	mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

clean:
	rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/tests/*.d)
