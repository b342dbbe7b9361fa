#!/usr/bin/env bash
# deploy/daemonset.yaml and prometheus-kubernetes.yml, offline (no
# cluster here for kubectl --dry-run). Three checks, each catching what
# the others let through, each shown failing on a broken copy:
#  - kubernetes-models (deploy/check/validate.js): the API's types and
#    required fields; it accepts a field the API lacks;
#  - deploy/check/strict.js: tsc's excess-property check against the same
#    package's interfaces refuses any field the API lacks, at any depth;
#  - consistency (below): what no schema knows: the image make image
#    builds, the ConfigMap's port where the probes and the scrape look,
#    three capabilities and no privilege, bpffs and the archive mounted
#    where the configuration points, the scrape config keyed on the
#    annotations the pods carry.
# The npm packages are pinned (deploy/check/package-lock.json) and
# installed under .output/manifest-check.
source "$(dirname "$0")/../lib/lib.sh"
D=$TOP/deploy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
VERSION=$(make -s -C "$TOP" print-version)
CHK=$TOP/.output/manifest-check

command -v npm >/dev/null || { fail "npm is not installed (make deps installs nodejs)"; summary; exit 1; }
mkdir -p "$CHK"
cp "$D"/check/package.json "$D"/check/package-lock.json "$D"/check/*.js "$CHK"/
if ! cmp -s "$CHK/package-lock.json" "$CHK/node_modules/.package-lock.json.ci" 2>/dev/null; then
	check "npm ci: kubernetes-models, typescript, js-yaml (pinned)" \
		npm ci --prefix "$CHK" --no-audit --no-fund --loglevel=error &&
		cp "$CHK/package-lock.json" "$CHK/node_modules/.package-lock.json.ci"
fi
validate() { node "$CHK/validate.js" "$1"; }
strict() { node "$CHK/strict.js" "$1"; }

consistent() {	# daemonset.yaml prometheus-kubernetes.yml
	BT_SECCOMP=${BT_SECCOMP:-$D/bloomtap-seccomp.json} python3 - "$1" "$2" "$VERSION" <<'EOF'
import json, os, re, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
scrape = yaml.safe_load(open(sys.argv[2]))
version = sys.argv[3]
ds = next(d for d in docs if d["kind"] == "DaemonSet")
cm = next(d for d in docs if d["kind"] == "ConfigMap")
svc = next(d for d in docs if d["kind"] == "Service")
# "name = value" lines, and flags alone on theirs ("listen-metrics-only")
conf = dict((l.split("=", 1) + [""])[:2] for l in cm["data"]["bloomtap.conf"].splitlines()
            if l.strip() and not l.strip().startswith("#"))
conf = {k.strip(): v.strip() for k, v in conf.items()}
pod = ds["spec"]["template"]
spec = pod["spec"]
c = spec["containers"][0]
errors = []
def need(cond, what):
    if not cond:
        errors.append(what)
need(c["image"] == f"localhost/bloomtap:{version}", f"image {c['image']}: make image builds localhost/bloomtap:{version}")
need(spec.get("hostNetwork") is True, "hostNetwork: the agent attaches to the node's interfaces")
sc = c["securityContext"]
need(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False, "privileged and escalation off")
caps = sorted(sc["capabilities"]["add"])
wl = conf.get("workloads", "auto") != "off"
need(sc["capabilities"]["drop"] == ["ALL"] and caps == sorted(["BPF", "NET_ADMIN", "PERFMON"] +
                                                               (["SYS_ADMIN", "SYS_PTRACE"] if wl else [])),
     "capabilities: all dropped but BPF, NET_ADMIN, PERFMON, and for workloads = auto SYS_PTRACE and SYS_ADMIN")
need(bool(spec.get("hostPID")) == wl, "hostPID: true for workloads = auto (the node's /proc), false for off")
for m in c["volumeMounts"]:
    p = m["mountPath"]
    if p.startswith(("/var/log/", "/run/containerd", "/run/containers", "/var/lib/containers",
                     "/run/netns")):
        need(m.get("readOnly") is True, f"{p}: read-only (workloads only read it)")
    # a runtime's socket, or the containers' file systems: node root
    need(p not in ("/run/containerd", "/run/containers/storage", "/var/lib/containers/storage",
                   "/run/crio", "/var/run/docker.sock", "/run/docker.sock", "/var/lib/docker"),
         f"{p}: a runtime's socket or every container's files; mount the directory the scan reads")
prof = json.load(open(os.environ["BT_SECCOMP"]))	# the profile the DaemonSet names
allowed = {n for r in prof["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
for call in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"):
    need(not wl or call not in allowed,
         f"seccomp: {call} refused (hostPID and SYS_PTRACE would let it reach any process)")
need(not wl or any(m["mountPath"] == "/var/log/pods" for m in c["volumeMounts"]),
     "workloads = auto: the kubelet's /var/log/pods mounted (pods' names)")
need(sc.get("seccompProfile") == {"type": "Localhost", "localhostProfile": "bloomtap.json"},
     "seccomp: the Localhost profile bloomtap.json (the runtime's default refuses bpf(2) to CAP_BPF)")
need(c["args"] == ["run", "--config", "/etc/bloomtap/bloomtap.conf"], "args: run --config /etc/bloomtap/bloomtap.conf")
port = int(conf["listen"].rsplit(":", 1)[1])
need(conf["listen"].rsplit(":", 1)[0] in ("0.0.0.0", "[::]"), "listen on the node's addresses: the probes and the scrape come from outside")
need([p["containerPort"] for p in c["ports"]] == [port], f"containerPort is the ConfigMap's listen port {port}")
ann = pod["metadata"]["annotations"]
need(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == str(port)
     and ann.get("prometheus.io/path") == "/metrics", "scrape annotations: true, the listen port, /metrics")
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in spec["volumes"]}
# safe as shipped: beyond loopback, the API wants a user, so a web config
# from a Secret the pods wait for (not optional), or none of the API
web = conf.get("web-config", "")
wdir = web.rsplit("/", 1)[0]
secret = vols.get(mounts.get(wdir), {}).get("secret")
need("listen-metrics-only" in conf or (web and secret and not secret.get("optional")),
     "the API beyond loopback without users: give web-config from a Secret the pods wait for, or listen-metrics-only")
for probe in ("readinessProbe", "livenessProbe"):
    g = c.get(probe, {}).get("httpGet", {})
    need(g.get("path") == "/healthz" and g.get("port") == port and "host" not in g, f"{probe}: GET /healthz on {port}")
    need(g.get("scheme") == ("HTTPS" if web else "HTTP") or (not web and "scheme" not in g),
         f"{probe}: HTTPS, as the web config's TLS wants")
job = scrape["scrape_configs"][0]
need(not web or (job.get("scheme") == "https" and job.get("basic_auth", {}).get("username")
                 and job.get("tls_config", {}).get("ca_file")),
     "the scrape config: https, a user and the certificate, as the web config wants")
def host_path(mount):
    v = vols.get(mounts.get(mount), {})
    return v.get("hostPath", {}).get("path")
need(host_path("/sys/fs/bpf") == "/sys/fs/bpf", "bpffs: the host's /sys/fs/bpf")
arch = conf["archive"]
need(any(arch.startswith(m + "/") and host_path(m) for m in mounts), f"the archive {arch}: on a hostPath")
need(mounts.get("/etc/bloomtap") and "configMap" in vols[mounts["/etc/bloomtap"]], "the configuration: the ConfigMap")
sock = conf.get("api-socket", "")
need(not sock or any(sock.startswith(m + "/") for m in mounts) or not sc.get("readOnlyRootFilesystem"),
     "the API socket's directory is writable")
lim = c["resources"]["limits"]["memory"]
need(re.fullmatch(r"\d+Mi", lim) and int(lim[:-2]) >= 128, "a memory limit of at least 128Mi (the maps are charged to it)")
relabel = scrape["scrape_configs"][0]["relabel_configs"]
keys = {s for r in relabel for s in r.get("source_labels", [])}
for a in ("scrape", "port", "path"):
    need(f"__meta_kubernetes_pod_annotation_prometheus_io_{a}" in keys, f"the scrape config reads prometheus.io/{a}")
# the headless Service trace --agents-from-dns reads: every pod's address
need(svc["spec"].get("clusterIP") == "None", "the Service is headless (clusterIP: None): its name gives every pod")
need(svc["spec"].get("selector") == ds["spec"]["selector"]["matchLabels"], "the Service selects the DaemonSet's pods")
need(svc["metadata"]["namespace"] == ds["metadata"]["namespace"], "the Service in the DaemonSet's namespace")
need([p["port"] for p in svc["spec"]["ports"]] == [int(conf["listen"].rsplit(":", 1)[1])],
     "the Service's port is the ConfigMap's listen port")
need(svc["spec"].get("publishNotReadyAddresses") is True,
     "the Service lists pods not ready too: trace names them down, rather than never asking")
for e in errors:
    print("inconsistent:", e)
sys.exit(1 if errors else 0)
EOF
}

# ---- the manifests as they are ----
check "kubernetes-models: daemonset.yaml's documents are valid" validate "$D/daemonset.yaml"
check "strict: no field the API lacks" strict "$D/daemonset.yaml"
check "consistent with the image, the configuration and the scrape config" \
	consistent "$D/daemonset.yaml" "$D/prometheus-kubernetes.yml"
check "prometheus-kubernetes.yml parses" python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' \
	"$D/prometheus-kubernetes.yml"

# ---- broken copies: which check catches what ----
broken() {	# name, sed expression: a copy of daemonset.yaml
	sed "$2" "$D/daemonset.yaml" > "$TMP/$1.yaml"
	cmp -s "$D/daemonset.yaml" "$TMP/$1.yaml" && echo "        (the edit $2 changed nothing)"
}
broken misspelled 's/readinessProbe:/readinessprobe:/'
check "a misspelled field (readinessprobe): kubernetes-models lets it through" validate "$TMP/misspelled.yaml"
expect_fail "and strict refuses it" "'\"readinessprobe\"' does not exist" strict "$TMP/misspelled.yaml"
broken toplevel 's/hostNetwork: true/hostNetwrok: true/'
expect_fail "a misspelled pod field (hostNetwrok): strict refuses it" "'\"hostNetwrok\"' does not exist" \
	strict "$TMP/toplevel.yaml"
broken noname 's/- name: bloomtap$/- nome: bloomtap/'
expect_fail "a container without its required name: kubernetes-models refuses it" "containers/0 must have required property name" \
	validate "$TMP/noname.yaml"
broken badtype 's/containerPort: 9477/containerPort: "9477x"/'
expect_fail "a port that is not a number: kubernetes-models refuses it" "containerPort must be integer" validate "$TMP/badtype.yaml"
expect_fail "and strict too" "not assignable" strict "$TMP/badtype.yaml"
broken oldimage "s|localhost/bloomtap:$VERSION|bloomtap:0.1.0|"
check "another image: both schema checks let it through" bash -c \
	"node '$CHK/validate.js' '$TMP/oldimage.yaml' && node '$CHK/strict.js' '$TMP/oldimage.yaml'"
expect_fail "and the consistency check refuses it" "make image builds" consistent "$TMP/oldimage.yaml" "$D/prometheus-kubernetes.yml"
broken privileged 's/privileged: false/privileged: true/'
expect_fail "privileged: the consistency check refuses it" "privileged" \
	consistent "$TMP/privileged.yaml" "$D/prometheus-kubernetes.yml"
broken port 's/listen = 0.0.0.0:9477/listen = 0.0.0.0:9478/'
expect_fail "the agent listening elsewhere than the probes look: refused" "containerPort" \
	consistent "$TMP/port.yaml" "$D/prometheus-kubernetes.yml"
broken open '/web-config = /d'
expect_fail "the API on the node's addresses without a web config: refused" "without users" \
	consistent "$TMP/open.yaml" "$D/prometheus-kubernetes.yml"
broken optional 's/secretName: bloomtap-web,/secretName: bloomtap-web, optional: true,/'
expect_fail "the web config's Secret optional (pods would start open): refused" "without users" \
	consistent "$TMP/optional.yaml" "$D/prometheus-kubernetes.yml"
broken plainprobe 's/, scheme: HTTPS//'
expect_fail "probes in plain HTTP to the TLS port: refused" "HTTPS" \
	consistent "$TMP/plainprobe.yaml" "$D/prometheus-kubernetes.yml"
broken clusterip '/^  clusterIP: None$/d'
expect_fail "the Service with a cluster IP (one address, not each pod's): refused" "headless" \
	consistent "$TMP/clusterip.yaml" "$D/prometheus-kubernetes.yml"
broken svcselector 's/^  selector: { app.kubernetes.io\/name: bloomtap }$/  selector: { app: bloomtap }/'
expect_fail "the Service selecting other pods: refused" "selects the DaemonSet's pods" \
	consistent "$TMP/svcselector.yaml" "$D/prometheus-kubernetes.yml"
broken nohostpid '/^      hostPID: true$/d'
expect_fail "workloads = auto without hostPID (the pod's own /proc): refused" "hostPID" \
	consistent "$TMP/nohostpid.yaml" "$D/prometheus-kubernetes.yml"
broken wloff 's/^    workloads = auto$/    workloads = off/'
expect_fail "workloads = off with SYS_ADMIN and SYS_PTRACE left: refused" "capabilities" \
	consistent "$TMP/wloff.yaml" "$D/prometheus-kubernetes.yml"
broken socketdir 's|mountPath: /run/containerd/io.containerd.runtime.v2.task,|mountPath: /run/containerd,|'
expect_fail "containerd's whole directory mounted (its socket): refused" "a runtime's socket" \
	consistent "$TMP/socketdir.yaml" "$D/prometheus-kubernetes.yml"
python3 "$D/seccomp.py" /usr/share/containers/seccomp.json | python3 -c '
import json, sys
p = json.load(sys.stdin)
p["syscalls"].append({"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "args": []})
json.dump(p, sys.stdout)' > "$TMP/ptrace.json"
BT_SECCOMP=$TMP/ptrace.json expect_fail "a seccomp profile that allows ptrace beside hostPID: refused" \
	"ptrace refused" consistent "$D/daemonset.yaml" "$D/prometheus-kubernetes.yml"
broken rwlogs 's/mountPath: \/var\/log\/pods, readOnly: true/mountPath: \/var\/log\/pods/'
expect_fail "the pods' logs mounted writable: refused" "read-only" \
	consistent "$TMP/rwlogs.yaml" "$D/prometheus-kubernetes.yml"
sed '/^    scheme: https$/d' "$D/prometheus-kubernetes.yml" > "$TMP/plainscrape.yml"
expect_fail "a scrape config in plain HTTP: refused" "the scrape config: https" \
	consistent "$D/daemonset.yaml" "$TMP/plainscrape.yml"
summary
[ $FAIL -eq 0 ]
