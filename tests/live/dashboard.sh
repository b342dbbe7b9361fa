#!/usr/bin/env bash
# The Grafana dashboard (deploy/grafana/bloomtap.json) without Grafana:
# every PromQL expression of its panels and variables is pulled out of the
# JSON, parsed by promtool, and evaluated by a real Prometheus scraping a
# real agent that carries traffic (with a watch list, an IPFIX collector
# and an archive, so that every panel has something to show). Every query
# must return data, and every metric a panel names must be one the agent
# exports.
source "$(dirname "$0")/../lib/lib.sh"
need_root "dashboard"

ID=$$
NSA=bt-db-a-$ID NSB=bt-db-b-$ID
VA=btdba$ID VB=btdbb$ID
PORT=9480 PROMPORT=9091
TMP=$(mktemp -d)
DASH=$TOP/deploy/grafana/bloomtap.json
AGENT= PROM= PING=
cleanup() {
	for p in $PING $PROM $AGENT; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	"$BLOOMTAP" detach --instance "$VB" >/dev/null 2>&1
	cleanup_netns
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
get() { in_ns "$NSB" curl -s -m 5 "$@"; }

# ---- the expressions, as Prometheus will see them ----
# Grafana's variables: $interface (All: .*), $__rate_interval (here: 4
# scrapes of 1 s and more)
python3 - "$DASH" > "$TMP/exprs.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        print("%s\t%s" % (p["title"], t["expr"]))
for v in d["templating"]["list"]:
    q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    if q.startswith("label_values("):	# label_values(METRIC, LABEL): the metric's series
        q = q[len("label_values("):].rsplit(",", 1)[0]
    print("variable %s\t%s" % (v["name"], q))
EOF
N=$(wc -l < "$TMP/exprs.txt")
check "the dashboard's panels and variables hold $N expressions" test "$N" -ge 15
sed -e 's/\$interface/.*/g' -e 's/\$__rate_interval/10s/g' "$TMP/exprs.txt" > "$TMP/queries.txt"
python3 - "$TMP/queries.txt" > "$TMP/rules.yml" <<'EOF'
import sys
print("groups:\n  - name: dashboard\n    rules:")
for i, line in enumerate(open(sys.argv[1])):
    expr = line.rstrip("\n").split("\t", 1)[1]
    print("      - record: dashboard:expr_%d\n        expr: %s" % (i, "'" + expr.replace("'", "''") + "'"))
EOF
check "promtool parses every expression" promtool check rules "$TMP/rules.yml"
check "the dashboard's JSON: a title, a Prometheus data source input, panels with ids and grid positions" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["title"] and d["uid"]
assert any(i["pluginId"] == "prometheus" for i in d["__inputs"])
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids))
for p in d["panels"]:
    g = p["gridPos"]
    assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0
' "$DASH"

# ---- an agent with traffic, a watch list, an IPFIX collector ----
veth_pair "$NSA" "$VA" "$NSB" "$VB" 15 || { fail "namespaces"; summary; exit 1; }
printf '198.18.15.1 sender\n198.18.15.0/24 lab\n' > "$TMP/watch.list"
nsenter --net=/var/run/netns/"$NSB" "$BLOOMTAP" run "$VB" --interval 2 --window 0.5 \
	--listen "127.0.0.1:$PORT" --archive "$TMP/archive" --archive-flush 1 \
	--watch "$TMP/watch.list" --ipfix 127.0.0.1:4820 > "$TMP/agent.log" 2>&1 &
AGENT=$!
for i in $(seq 50); do get "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
nsenter --net=/var/run/netns/"$NSA" ping -q -i 0.02 -s 1200 198.18.15.2 >/dev/null 2>&1 &
PING=$!
prometheus_start "$NSB" "127.0.0.1:$PORT" "127.0.0.1:$PROMPORT" "$TMP/prom"
sleep 12	# scrapes for the rates, intervals for the heavy flows, sealed windows

get "127.0.0.1:$PORT/metrics" > "$TMP/metrics.txt"
MISSING=$(grep -o 'bloomtap_[a-z0-9_]*' "$TMP/queries.txt" | sort -u | while read -r m; do
	grep -q "^$m[{ ]" "$TMP/metrics.txt" || echo "$m"
done)
eq "every metric the dashboard names is one the agent exports" "$MISSING" ""
while IFS=$'\t' read -r title expr; do
	R=$(get -G "127.0.0.1:$PROMPORT/api/v1/query" --data-urlencode "query=$expr")
	N=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["data"]["result"]) if d.get("status") == "success" else -1)' <<<"$R" 2>/dev/null)
	check "panel '$title': $expr returns data (${N:-?} series)" test "${N:-0}" -gt 0
done < "$TMP/queries.txt"

summary
[ "$FAIL" = 0 ]
