#!/usr/bin/env bash
# Multi-node NVLink domains on a live cluster (docs/agent.md, "GPUs"): two
# agents whose fake GPUs report one NVLink fabric as NVML does (a cluster
# UUID and a clique), two that declare a domain with --nvlink-group, and one
# in none. A 2 x 4-GPU gang that requires one NVLink domain fits no single
# 4-GPU node, so it runs only where the server formed a domain from what the
# agents reported: one gang on each pair, and a third waits.
source "$(dirname "$0")/lib.sh" "$1"

start_server
for n in r1 r2; do
  FAKE_GPU_EXTRA='fabric: {clusterUuid: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0, clique: 1}' start_agent "$n" 4
done
for n in m1 m2; do start_agent "$n" 4 --nvlink-group manual-b; done
start_agent solo 4
wait_until 30 nodes_ready 5

groups=$("$TESSERA" nodes -o json | jq -c '[.nodes[] | {(.name): .nvlinkGroup}] | add')
expected='{"r1":"fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.1","r2":"fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.1","m1":"manual-b","m2":"manual-b","solo":""}'
[ "$(jq -S . <<<"$groups")" = "$(jq -S . <<<"$expected")" ] || fail "the nodes' NVLink groups: $groups, expected $expected"
grep -q "multi-node NVLink domain: fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.1" "$WORK/r1.log" || fail "r1 does not say which fabric it found"

cat >"$WORK/rack.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: rack}
spec:
  topology: {level: nvlink-domain, mode: required}
  tasks: [{name: w, replicas: 2, resources: {gpus: 4}, command: [sleep, '60']}]
YAML
a=$(submit "$WORK/rack.yaml")
b=$(submit "$WORK/rack.yaml")
c=$(submit "$WORK/rack.yaml")
wait_until 60 job_state_is "$a" running
wait_until 60 job_state_is "$b" running
nodes_of() { job_field "$1" '[.tasks[].node] | sort | join(",")'; }
placed=$(printf '%s\n%s\n' "$(nodes_of "$a")" "$(nodes_of "$b")" | sort | paste -sd' ')
[ "$placed" = "m1,m2 r1,r2" ] || fail "each gang should fill one domain: $placed"
"$TESSERA" cancel "$a" >/dev/null
wait_until 60 job_state_is "$c" running
[ "$(nodes_of "$c")" = "$(nodes_of "$a")" ] || fail "the third gang should take the domain the first left: $(nodes_of "$c")"
log "gangs placed by domain: $placed; the third after the first: $(nodes_of "$c")"
