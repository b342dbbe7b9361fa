#!/usr/bin/env bash
# deploy/: the systemd unit verifies, the Kubernetes manifest and the
# Prometheus configuration are valid.
source "$(dirname "$0")/lib.sh"
D=$TOP/deploy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if command -v systemd-analyze >/dev/null; then
	# verify wants the ExecStart binary where the unit says; point it at the build
	sed "s|/usr/local/sbin/bloomtap|$BLOOMTAP|" "$D/bloomtap.service" > "$TMP/bloomtap.service"
	check "systemd-analyze verify bloomtap.service" bash -c \
		"systemd-analyze verify '$TMP/bloomtap.service' 2>&1 | grep -v -e 'Failed to connect' -e 'not found' | { ! grep -q .; }"
	check "unit keeps bpf(2) capabilities only" bash -c \
		"grep -q '^CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_PERFMON$' '$D/bloomtap.service'"
else
	skip_all "systemd-analyze not installed"
fi
# the example, on lo and a scratch archive, checked without attaching
sed -e 's/^interface = .*/interface = lo/' -e "s|^archive = .*|archive = $TMP/archive|" \
	"$D/bloomtap.conf" > "$TMP/bloomtap.conf"
check "example configuration passes bloomtap run --check" "$BLOOMTAP" run --check --config "$TMP/bloomtap.conf"
check "prometheus-kubernetes.yml parses" /usr/bin/python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$D/prometheus-kubernetes.yml"
check "daemonset.yaml parses, with hostNetwork and the capabilities" /usr/bin/python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
s = d["spec"]["template"]["spec"]
c = s["containers"][0]
assert d["kind"] == "DaemonSet" and s["hostNetwork"] is True
assert set(c["securityContext"]["capabilities"]["add"]) == {"BPF", "NET_ADMIN", "PERFMON"}
assert any(v["hostPath"]["path"] == "/sys/fs/bpf" for v in s["volumes"] if "hostPath" in v)
assert d["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
' "$D/daemonset.yaml"
check "promtool check config prometheus.yml" promtool check config "$D/prometheus.yml"
summary
[ $FAIL -eq 0 ]
