#!/usr/bin/env python3
"""The seccomp profile the agent's container runs with: the container
runtime's default profile, with bpf(2) and perf_event_open(2) allowed, and
ptrace(2), process_vm_readv(2), process_vm_writev(2) and pidfd_getfd(2)
refused: the DaemonSet runs with hostPID and CAP_SYS_PTRACE (to read other
processes' /proc/PID/ns/net, which needs the capability, not the calls),
and with these a compromised agent could reach into any process of the
node.

Debian's containers-common allows the two to CAP_SYS_ADMIN alone, and the
agent runs with CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON instead; the kernel
still checks those capabilities on each call (and unprivileged BPF is off).

usage: seccomp.py [DEFAULT_PROFILE] > bloomtap-seccomp.json
  DEFAULT_PROFILE: /usr/share/containers/seccomp.json when not given.
Install the output where the kubelet finds Localhost profiles
(/var/lib/kubelet/seccomp/bloomtap.json: deploy/daemonset.yaml names it)."""
import json
import sys

WANTED = {"bpf", "perf_event_open"}
REFUSED = {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
    profile = json.load(open(src))
    rules = []
    for rule in profile["syscalls"]:
        names = [n for n in rule["names"] if n not in WANTED and not
                 (n in REFUSED and rule["action"] == "SCMP_ACT_ALLOW")]
        if names:
            rules.append(dict(rule, names=names))
    rules.append({"names": sorted(WANTED), "action": "SCMP_ACT_ALLOW", "args": [],
                  "comment": "bloomtap: the kernel checks CAP_BPF and CAP_PERFMON",
                  "includes": {}, "excludes": {}})
    profile["syscalls"] = rules
    json.dump(profile, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
