#!/usr/bin/env bash
# spec.network: isolated (docs/containers.md). Two agents as separate hosts,
# each in a network namespace of its own on a bridge, pull an image from a
# registry on the bridge. A 2-node isolated job's containers meet over its
# overlay at MASTER_ADDR; another isolated job on the same nodes cannot
# reach them, by overlay address or by loopback, and neither can the node.
source "$(dirname "$0")/lib.sh" "$1"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v bridge >/dev/null || ! command -v nsenter >/dev/null; then
  echo "SKIP: needs root, iproute2 (ip, bridge) and nsenter for network namespaces"
  exit 77
fi
for tool in runc skopeo umoci docker-registry; do
  command -v "$tool" >/dev/null || fail "$tool is missing: scripts/install-deps.sh installs it"
done
modprobe vxlan 2>/dev/null || true
# The overlay needs the kernel's VXLAN: a kernel without it skips, saying so.
probe_ns="tvxprobe$$"
ip netns add "$probe_ns"
if ! ip -n "$probe_ns" link add tvx0 type vxlan id 1 local 127.0.0.1 dstport 4789 2>"$WORK/vxlan.err"; then
  ip netns del "$probe_ns"
  echo "SKIP: this kernel cannot make VXLAN devices: $(cat "$WORK/vxlan.err")"
  exit 77
fi
ip netns del "$probe_ns"
tag=$((RANDOM % 200 + 20))
net=10.$tag.0
bridge_dev="tbr$tag"
ip link add "$bridge_dev" type bridge || { echo "SKIP: cannot create a bridge here"; exit 77; }
CLEANUPS+=("ip link del $bridge_dev")
ip addr add "$net.1/24" dev "$bridge_dev"
ip link set "$bridge_dev" up

# The image and a registry on the bridge.
layout=$WORK/layout
"$E2E_DIR/../../scripts/busybox-image.sh" "$layout" 1 >/dev/null
read -r reg_port < <(free_ports 1)
registry=$net.1:$reg_port
printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' "$WORK/registry" "$registry" >"$WORK/registry.yaml"
docker-registry serve "$WORK/registry.yaml" >>"$WORK/registry.log" 2>&1 &
PIDS+=("$!")
disown "$!"
wait_until 10 curl -sf "http://$registry/v2/" -o /dev/null
skopeo copy --quiet --dest-tls-verify=false "oci:$layout:1" "docker://$registry/test/busybox:1"

# The server off loopback (TLS, its own CA); agents prove their nodes with certificates.
for i in 1 2; do "$TESSERA" certs issue --ca-dir "$WORK/server/tls" --name "host$i" --out "$WORK/host$i" >/dev/null; done
export TESSERA_CA_FILE=$WORK/server/tls/ca.crt
"$TESSERA" server --listen "$net.1:0" --no-auth --data-dir "$WORK/server" >>"$WORK/server.log" 2>&1 &
PIDS+=("$!")
disown "$!"
wait_until 10 grep -q "listening on" "$WORK/server.log"
export TESSERA_SERVER=$(grep -o 'listening on https://[0-9.:]*' "$WORK/server.log" | sed 's/listening on //')

for i in 1 2; do
  ns="tns$tag-$i"
  netns_host "$ns" "tvh$tag-$i" "$bridge_dev" "$net.1$i/24"
  CLEANUPS+=("for n in \$(ip netns list | grep -o '^tsr-host$i-[^ ]*'); do ip netns del \$n; done")
  CLEANUPS+=("for c in \$(runc --root $WORK/host$i/containers/runc list -q 2>/dev/null); do runc --root $WORK/host$i/containers/runc delete --force \$c; done; umount -l $WORK/host$i/containers/bundles/*/rootfs 2>/dev/null")
  # nsenter, not `ip netns exec`: that also gives a mount namespace without the cgroup mounts runc needs.
  nsenter --net="/run/netns/$ns" "$TESSERA" agent --server "$TESSERA_SERVER" --name "host$i" --address "$net.1$i" --insecure-registry "$registry" \
    --ca-file "$TESSERA_CA_FILE" --cert-file "$WORK/host$i.crt" --key-file "$WORK/host$i.key" --data-dir "$WORK/host$i" \
    --fake-gpus "$(fake_gpus "host$i" 4)" --heartbeat 0.5 --no-cgroups >>"$WORK/host$i.log" 2>&1 &
  PIDS+=("$!")
  disown "$!"
done
wait_until 20 nodes_ready 2

# Job "served": rank 0 serves a page on MASTER_PORT inside its network until
# told to stop; rank 1, on the other node, fetches it at MASTER_ADDR.
mkdir -p "$WORK/ctl/www"
chmod 777 "$WORK/ctl"
echo "from rank 0" >"$WORK/ctl/www/index.html"
cat >"$WORK/served.yaml" <<EOF
apiVersion: tessera/v1
kind: Job
metadata: {name: served}
spec:
  network: isolated
  tasks:
    - name: rank
      replicas: 2
      image: $registry/test/busybox:1
      user: "1000:1000"
      resources: {gpus: 4}
      mounts: [{hostPath: $WORK/ctl, mountPath: /ctl, readOnly: false}]
      command:
        - sh
        - -c
        - |
          if [ "\$RANK" = 0 ]; then
            busybox httpd -p \$MASTER_PORT -h /ctl/www && echo \$MASTER_PORT > /ctl/port
            while [ ! -e /ctl/stop ]; do sleep 0.2; done
          else
            for i in \$(seq 100); do
              printf 'GET / HTTP/1.0\r\n\r\n' | busybox nc -w 2 \$MASTER_ADDR \$MASTER_PORT | grep 'from rank 0' && exit 0
              sleep 0.2
            done
            exit 1
          fi
EOF
served=$(submit "$WORK/served.yaml")
# Fails at once, with what the ranks said, should the job end before rank 0 serves.
serving() {
  [ -s "$WORK/ctl/port" ] && return 0
  job_state_is "$served" failed && fail "the isolated job failed: $(job_json "$served" | jq -c '[.tasks[] | {name, message, exitCode}]') $("$TESSERA" logs "$served" --task rank-0 2>&1) $("$TESSERA" logs --stderr "$served" --task rank-0 2>&1)"
  return 1
}
wait_until 60 serving
port=$(cat "$WORK/ctl/port")
rank1=$(job_json "$served" | jq -r '.tasks[1].name')
wait_until 60 bash -c "'$TESSERA' logs $served --task $rank1 | grep -q 'from rank 0'"
[ "$(job_json "$served" | jq -r '[.tasks[].node] | unique | length')" = 2 ] || fail "the two ranks should run on two nodes: $(job_json "$served" | jq -c .tasks)"
log "an isolated job's ranks met across nodes at MASTER_ADDR (rank 0 serving on $port)"

# Another isolated job reaches neither that address nor its loopback; nor does the node.
cat >"$WORK/prober.yaml" <<EOF
apiVersion: tessera/v1
kind: Job
metadata: {name: prober}
spec:
  network: isolated
  tasks:
    - name: probe
      image: $registry/test/busybox:1
      user: "1000:1000"
      command: [sh, -c, 'for a in 10.128.0.1 10.128.0.2 127.0.0.1 $net.11 $net.1; do printf "GET / HTTP/1.0\r\n\r\n" | busybox nc -w 2 \$a $port | grep -q "from rank 0" && echo "REACHED \$a"; done; busybox httpd -p 8099 -h /etc && printf "GET /motd HTTP/1.0\r\n\r\n" | busybox nc -w 2 127.0.0.1 8099 | grep -q "inside the image" && echo "own server reached"; echo probed']
EOF
prober=$(submit "$WORK/prober.yaml")
wait_until 60 job_state_is "$prober" succeeded
out=$("$TESSERA" logs "$prober")
echo "$out" | grep -q probed || fail "the prober should run to its end: $out"
echo "$out" | grep -q "own server reached" || fail "the prober should reach its own server (so its probes can succeed): $out"
! echo "$out" | grep -q REACHED || fail "another job reached the isolated job: $out"
for i in 1 2; do
  ! ip netns exec "tns$tag-$i" curl -s -m 2 "http://10.128.0.1:$port/" >/dev/null || fail "host$i reaches into the job's network"
done
log "another isolated job, and the nodes, could not reach it"

touch "$WORK/ctl/stop"
wait_until 30 job_state_is "$served" succeeded
# Each run's namespaces go with its last task.
wait_until 20 bash -c "! ip netns list | grep -q '^tsr-host'"
log "the runs' network namespaces are gone"
