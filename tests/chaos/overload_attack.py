#!/usr/bin/env python3
"""Hostile and overloading clients against a real Tessera server, and what an
administrator and the agents see meanwhile (tests/chaos/overload.sh).

Phases, one after another, each for --phase-seconds:
  beyond-the-caps-one   from 127.0.0.1, the administrator's and the agents'
                        own address, more connections than the caps allow:
                        half TLS connections that send a request line and
                        then a header byte a second, never the end; half TCP
                        connections that never finish their TLS handshake;
  below-the-caps        from several addresses, both kinds again, few enough
                        that deadlines close them, not evictions;
  beyond-the-caps-many  the first phase from several addresses;
  flood                 `tessera bench flood`: keep-alive connections
                        submitting jobs as fast as the server answers, with
                        several users' tokens.
Each attacker reconnects as soon as the server closes it, so the pressure
lasts. Throughout, a probe asks for the job list as a cluster admin (GET
/v1/jobs on a new TLS connection each time, as `tessera jobs` does, without
the CLI's own start, which the sanitizers make slow and the attackers'
load slower) and reads the nodes' heartbeats.
Prints one JSON object: latencies, heartbeat gaps, the jobs the flood got
accepted, and how fast the server was back to normal afterwards.
"""
import argparse
import asyncio
import json
import os
import resource
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.request


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


class Probe:
    """An administrator's job list four times a second, and the nodes'
    heartbeats as the server records them, ten times a second."""

    def __init__(self, args, context):
        self.args, self.context = args, context
        self.samples = []  # (time, seconds, ok)
        self.gaps = {}     # node -> the longest time between two heartbeats, ms
        self.last = {}
        self.lost = set()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.admin, daemon=True), threading.Thread(target=self.heartbeats, daemon=True)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()

    def quiet_median(self, samples, deadline_s):
        """The median job list before any attack: what it costs on this
        machine and build, so that the goals are about what the attack adds."""
        deadline = time.monotonic() + deadline_s
        while len(self.samples) < samples:
            if time.monotonic() > deadline:
                sys.exit(f"only {len(self.samples)} quiet job-list samples in {deadline_s} s")
            time.sleep(0.05)
        return statistics.median(s[1] for s in self.samples[:samples])

    def timed_jobs(self):
        """(seconds, answered) for one GET /v1/jobs on a new connection."""
        start = time.monotonic()
        try:
            self.api("/v1/jobs", timeout=30)
            return time.monotonic() - start, True
        except (OSError, ValueError):  # refused, reset, timed out, an HTTP error status, a cut answer
            return time.monotonic() - start, False

    def api(self, path, timeout=10):
        request = urllib.request.Request(self.args.server + path, headers={"Authorization": "Bearer " + self.args.admin_token})
        with urllib.request.urlopen(request, context=self.context, timeout=timeout) as answer:
            return json.load(answer)

    def admin(self):
        while not self.stopping.is_set():
            start = time.monotonic()
            self.samples.append((start, *self.timed_jobs()))
            self.stopping.wait(0.25)

    def heartbeats(self):
        while not self.stopping.is_set():
            try:
                for node in self.api("/v1/nodes")["nodes"]:
                    name, beat = node["name"], node.get("lastHeartbeat", 0)
                    if node.get("state") == "lost":
                        self.lost.add(name)
                    if name in self.last and beat > self.last[name]:
                        self.gaps[name] = max(self.gaps.get(name, 0), beat - self.last[name])
                    self.last[name] = max(beat, self.last.get(name, 0))
            except OSError:
                pass  # the admin's probe records whether an administrator got in
            self.stopping.wait(0.1)


async def slow_headers(server, port, context, source, stop, counts):
    """A TLS connection that never finishes its request's headers."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(server, port, ssl=context, local_addr=(source, 0),
                                                           server_hostname="localhost", ssl_handshake_timeout=10)
        except (OSError, asyncio.TimeoutError, ssl.SSLError):
            counts["refused"] += 1
            await asyncio.sleep(0.05)
            continue
        counts["opened"] += 1
        try:
            writer.write(b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\n")
            while not stop.is_set():
                await writer.drain()
                # Whatever the server says ends this connection: a 503, or its close.
                try:
                    data = await asyncio.wait_for(reader.read(1024), 1.0)
                    if not data or data.startswith(b"HTTP/1.1 503"):
                        counts["closed"] += 1
                        break
                except asyncio.TimeoutError:
                    writer.write(b"X")
        except (OSError, ssl.SSLError):
            counts["closed"] += 1
        finally:
            writer.close()


async def stalled_handshake(server, port, source, stop, counts):
    """A TCP connection to the TLS port that never completes a handshake."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(server, port, local_addr=(source, 0))
        except OSError:
            counts["refused"] += 1
            await asyncio.sleep(0.05)
            continue
        counts["opened"] += 1
        writer.write(b"\x16\x03\x01")  # the start of a ClientHello, and no more
        try:
            while not stop.is_set():
                try:
                    if not await asyncio.wait_for(reader.read(1024), 1.0):
                        counts["closed"] += 1
                        break
                except asyncio.TimeoutError:
                    pass
        except OSError:
            counts["closed"] += 1
        finally:
            writer.close()


async def phase(name, seconds, make_tasks):
    stop = asyncio.Event()
    counts = {"opened": 0, "closed": 0, "refused": 0}
    tasks = [asyncio.create_task(t) for t in make_tasks(stop, counts)]
    started = time.monotonic()
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.wait(tasks, timeout=15)
    for t in tasks:
        t.cancel()
    return {"phase": name, "start": started, "end": time.monotonic(), "counts": counts}


def connections(args, context):
    request = urllib.request.Request(args.server + "/metrics", headers={"Authorization": "Bearer " + args.admin_token})
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        text = answer.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith("tessera_http_connections{"):
            total += float(line.rsplit(" ", 1)[1])
    return total, text


async def flood(args):
    """`tessera bench flood`: submissions back to back on many connections, with the users' tokens."""
    accepted = os.path.join(args.work, "accepted")
    command = [args.tessera, "bench", "flood", "--server", args.server, "--ca-file", args.ca_file, "--connections",
               str(args.flood_connections), "--seconds", str(args.phase_seconds), "--accepted-file", accepted]
    for token in args.user_token_files:
        command += ["--token-file", token]
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    result = json.loads(out)
    with open(accepted) as f:
        result["accepted_ids"] = [int(line) for line in f]
    return {"phase": "flood", "start": started, "end": time.monotonic(), "counts": result}


async def attack(args, context):
    host, port = args.server.split("//")[1].rsplit(":", 1)
    port = int(port)
    sources = [f"127.0.0.{i}" for i in range(2, 2 + args.addresses)]
    def beyond_the_caps(addresses, count):
        # Half slow headers, half stalled handshakes: more than the caps, so
        # that newcomers evict the oldest of them.
        return lambda stop, c: [attacker for a in addresses for _ in range(count // len(addresses) // 2)
                                for attacker in (slow_headers(host, port, context, a, stop, c),
                                                 stalled_handshake(host, port, a, stop, c))]

    phases = [
        # From the address the administrator and the agents use too.
        await phase("beyond-the-caps-one", args.phase_seconds, beyond_the_caps(["127.0.0.1"], args.connections)),
        # Below the caps, so that what closes them is a deadline, not an eviction.
        await phase("below-the-caps", args.phase_seconds,
                    lambda stop, c: [attacker for s in sources for _ in range(args.below_cap_connections // args.addresses // 2)
                                     for attacker in (stalled_handshake(host, port, s, stop, c),
                                                      slow_headers(host, port, context, s, stop, c))]),
        await phase("beyond-the-caps-many", args.phase_seconds, beyond_the_caps(sources, args.connections)),
        await flood(args),
    ]
    return phases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--user-token-files", nargs="+", required=True)
    parser.add_argument("--work", required=True, help="a directory for the flood's accepted ids")
    parser.add_argument("--connections", type=int, default=1500)
    parser.add_argument("--addresses", type=int, default=5)
    parser.add_argument("--below-cap-connections", type=int, default=800,
                        help="half stalled handshakes, half slow headers, few enough that deadlines close them, not evictions")
    parser.add_argument("--flood-connections", type=int, default=128)
    parser.add_argument("--phase-seconds", type=float, default=8)
    parser.add_argument("--answer-within", type=float, default=1,
                        help="seconds the job list may take beyond its quiet median for the server to count as back to normal")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the attackers hold thousands of connections
    context = ssl.create_default_context(cafile=args.ca_file)

    baseline, _ = connections(args, context)
    probe = Probe(args, context)
    probe.start()
    quiet = probe.quiet_median(samples=5, deadline_s=30)
    phases = asyncio.run(attack(args, context))
    flooded = phases[-1]["counts"]
    accepted = flooded.pop("accepted_ids")
    attack_end = time.monotonic()
    # Back to normal: connections at their level before the attack, and the admin answered at once.
    recovered_after = None
    while time.monotonic() - attack_end < 30:
        now_open, _ = connections(args, context)
        seconds, ok = probe.timed_jobs()
        if ok and now_open <= baseline + 2 and seconds < quiet + args.answer_within:
            recovered_after = time.monotonic() - attack_end
            break
        time.sleep(0.1)
    probe.stop()
    _, metrics = connections(args, context)
    during = [s for s in probe.samples if phases[0]["start"] <= s[0] <= attack_end]
    listed = {j["id"] for j in probe.api("/v1/jobs")["jobs"]}  # every job the flood got accepted must still be there
    print(json.dumps({
        "phases": [{"phase": p["phase"], "seconds": round(p["end"] - p["start"], 1), **p["counts"]} for p in phases],
        "admin_jobs_quiet_median_s": round(quiet, 3),
        "admin_jobs_samples": len(during),
        "admin_jobs_failures": sum(1 for s in during if not s[2]),
        "admin_jobs_p99_s": round(percentile([s[1] for s in during], 0.99), 3),
        "admin_jobs_max_s": round(max((s[1] for s in during), default=0), 3),
        "heartbeat_gap_max_ms": max(probe.gaps.values(), default=0),
        "nodes_lost": sorted(probe.lost),
        "flood_sent_per_s": round(flooded["answered_per_s"], 1),
        "flood_accepted": len(accepted),
        "flood_accepted_missing": len(set(accepted) - listed),
        "recovered_after_s": None if recovered_after is None else round(recovered_after, 2),
        "metrics": [line for line in metrics.splitlines() if line.startswith(("tessera_http_connections_refused_total{",
                                                                               "tessera_http_connection_timeouts_total{",
                                                                               "tessera_http_requests_shed_total{"))],
    }))


if __name__ == "__main__":
    main()
