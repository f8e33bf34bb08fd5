#!/usr/bin/env python3
"""A stand-in for torch.distributed's TCP rendezvous, with no dependency.

Rank 0 listens on MASTER_ADDR:MASTER_PORT; every other rank connects and
sends "RANK WORLD_SIZE". Rank 0 checks that it heard exactly ranks 1..W-1,
each agreeing on the world size, then answers every rank "ok". Exit 0 only
when the whole gang met; it prints what it checked (the end-to-end tests read
it). With TRAIN_SECONDS set, every rank then pretends to train that long.
"""
import os
import socket
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
addr = os.environ["MASTER_ADDR"]
port = int(os.environ["MASTER_PORT"])
deadline = time.time() + 60

if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(world)
    server.settimeout(60)
    peers = {}
    while len(peers) < world - 1:
        conn, _ = server.accept()
        peer_rank, peer_world = map(int, conn.recv(64).decode().split())
        if peer_world != world or peer_rank in peers or not 0 < peer_rank < world:
            print(f"rank 0: bad peer {peer_rank} {peer_world}", flush=True)
            sys.exit(1)
        peers[peer_rank] = conn
    for conn in peers.values():
        conn.sendall(b"ok")
        conn.close()
    print(f"rank 0: rendezvous ok with world {world} at {addr}:{port} "
          f"local_rank {os.environ['LOCAL_RANK']} node_rank {os.environ['NODE_RANK']} "
          f"gpus {os.environ['CUDA_VISIBLE_DEVICES']}", flush=True)
else:
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                print(f"rank {rank}: cannot reach {addr}:{port}", flush=True)
                sys.exit(1)
            time.sleep(0.2)
    conn.sendall(f"{rank} {world}".encode())
    if conn.recv(16) != b"ok":
        sys.exit(1)
    print(f"rank {rank}: rendezvous ok with world {world} at {addr}:{port} "
          f"local_rank {os.environ['LOCAL_RANK']} node_rank {os.environ['NODE_RANK']} "
          f"gpus {os.environ['CUDA_VISIBLE_DEVICES']}", flush=True)

for step in range(int(os.environ.get("TRAIN_SECONDS", "0"))):
    print(f"rank {rank}: step {step}", flush=True)
    time.sleep(1)
