#!/usr/bin/env bash
# Metrics through a real Prometheus: the server's and an agent's /metrics pass
# promtool (the agent's only camelCase complaints are dcgm-exporter's own
# labels, kept on purpose); a Prometheus started here with a 1 s scrape
# interval reads Tessera's figures back through its HTTP API; and every query
# of the Grafana dashboard in deploy/ runs against it, and the idle-allocation
# alert rule sees the two allocated (fake, 0%-busy) GPUs.
source "$(dirname "$0")/lib.sh" "$1"
command -v prometheus >/dev/null && command -v promtool >/dev/null || { echo "SKIP: prometheus is not installed" >&2; exit 77; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

start_server
start_agent m1 2
wait_until 20 nodes_ready 1
wait_until 10 grep -q "metrics: http://" "$WORK/m1.log"
AGENT_METRICS=$(grep -o "metrics: http://[0-9.:]*/metrics" "$WORK/m1.log" | cut -d' ' -f2)

whole=$(submit --name whole --gpus 1 -- sleep 60)
half=$(submit --name half --gpus 0.5 --gpu-memory 20Gi -- sleep 60)
wait_until 20 job_state_is "$whole" running
wait_until 20 job_state_is "$half" running

# promtool on both endpoints.
curl -sf "$SERVER_URL/metrics" >"$WORK/server.prom" || fail "GET /metrics on the server"
promtool check metrics <"$WORK/server.prom" 2>&1 || fail "promtool rejects the server's metrics"
wait_until 10 sh -c "curl -sf '$AGENT_METRICS' | grep -q 'tessera_gpu_allocation_ratio.*job_name=\"half\"'"
curl -sf "$AGENT_METRICS" >"$WORK/agent.prom" || fail "GET /metrics on the agent"
problems=$(promtool check metrics <"$WORK/agent.prom" 2>&1 | grep -v "^DCGM_FI_DEV_[A-Z_]* label names should be written in 'snake_case' not 'camelCase'$" || true)
[ -z "$problems" ] || fail "promtool on the agent's metrics: $problems"
grep -q 'tessera_queue_running_jobs{queue="default"} 2' "$WORK/server.prom" || fail "two running jobs in the default queue"
grep -q 'tessera_node_gpus{model="H100",node="m1",state="allocated"} 1.5' "$WORK/server.prom" || fail "1.5 GPUs allocated on m1"
grep -q 'tessera_gpu_allocation_ratio{.*job_name="half".*} 0.5' "$WORK/agent.prom" || fail "the half job's share of its GPU"
log "promtool accepts both endpoints"

# A real Prometheus scraping both every second.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$ROOT/deploy/prometheus/tessera-alerts.yaml"]
scrape_configs:
  - job_name: tessera-server
    static_configs: [{targets: ["${SERVER_URL#http://}"]}]
  - job_name: tessera-agents
    static_configs: [{targets: ["$(echo "$AGENT_METRICS" | sed 's|http://||; s|/metrics||')"]}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$port" >"$WORK/prometheus.log" 2>&1 &
PIDS+=("$!")
PROM="http://127.0.0.1:$port"
query() { curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1"; }
value_is() { [ "$(query "$1" | jq -r '.data.result[0].value[1] // empty')" = "$2" ]; }
# The first samples take a few seconds: poll, never sleep blindly.
wait_until 60 value_is 'tessera_queue_running_jobs{queue="default"}' 2
wait_until 30 value_is 'count(DCGM_FI_DEV_GPU_UTIL{job="tessera-agents"})' 2
wait_until 30 value_is 'sum(tessera_gpu_allocation_ratio)' 1.5
log "Prometheus reads the running jobs and the agent's GPUs back"

# Every query of the Grafana dashboard is valid and answers.
jq -r '.panels[].targets[].expr' "$ROOT/deploy/grafana/tessera-cluster.json" | while read -r expr; do
  status=$(query "$expr" | jq -r .status) || fail "dashboard query failed: $expr"
  [ "$status" = success ] || fail "dashboard query: $expr -> $status"
done
[ "$(curl -sf "$PROM/api/v1/rules" | jq '[.data.groups[].rules[]] | length')" = 7 ] || fail "Prometheus should load the 7 alert rules"
# The fake GPUs report 0% utilization: both allocated GPUs are idle allocations.
wait_until 30 value_is 'count(ALERTS{alertname="TesseraIdleGpuAllocation"})' 2
log "the dashboard's $(jq '[.panels[].targets[]] | length' "$ROOT/deploy/grafana/tessera-cluster.json") queries and the alert rules work"
