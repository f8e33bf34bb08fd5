#!/usr/bin/env python3
"""A small hyperparameter sweep with the Python client (docs/python.md).

One job per combination of learning rate and batch size, each with its
parameters in its environment (LR, BATCH_SIZE), all submitted together (one
request: accepted together or not at all). It waits for every job, reads
each one's log and collects the line the job printed as its result, then
prints a table, best first.

Tessera has no job arrays yet: this submits separate jobs. Once the API has
`spec.array` / `spec.sweep`, the client will submit the same sweep as one job.

    export TESSERA_SERVER=https://127.0.0.1:7070 TESSERA_CA_FILE=$PWD/tessera-data/tls/ca.crt
    export TESSERA_TOKEN_FILE=$PWD/tessera-data/admin.token
    PYTHONPATH=python python3 examples/python/sweep.py --lr 1e-4,3e-4,1e-3 --batch-size 32,64

The "training" is a stand-in that prints a loss computed from its
parameters; replace TRAIN with your script (it reads LR and BATCH_SIZE and
prints one `RESULT {json}` line).
"""

import argparse
import itertools
import json
import sys
import time

import tessera

# What each job runs: reads its parameters from the environment, "trains",
# and prints its result as one line of JSON after "RESULT ".
TRAIN = r"""
import json, math, os, time
lr, batch = float(os.environ["LR"]), int(os.environ["BATCH_SIZE"])
print(f"training with lr={lr} batch={batch} on GPU(s) {os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
time.sleep(1)
loss = round((math.log10(lr) + 3.5) ** 2 + 8.0 / batch, 6)
print("RESULT " + json.dumps({"lr": lr, "batch_size": batch, "loss": loss}), flush=True)
"""


def job_spec(name, queue, lr, batch):
    return {
        "apiVersion": "tessera/v1",
        "kind": "Job",
        "metadata": {"name": name, **({"queue": queue} if queue else {})},
        "spec": {"tasks": [{
            "name": "train",
            "resources": {"gpus": 1},
            "command": ["python3", "-c", TRAIN],
            "env": {"LR": repr(lr), "BATCH_SIZE": str(batch)},
        }]},
    }


def result_of(log):
    """The last `RESULT {...}` line of a job's log, or None."""
    for line in reversed(log.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lr", default="1e-4,3e-4,1e-3", help="learning rates, comma-separated")
    parser.add_argument("--batch-size", default="32,64", help="batch sizes, comma-separated")
    parser.add_argument("--queue", help="the queue (default: the server's default)")
    parser.add_argument("--name", default="sweep", help="prefix of the jobs' names")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for the whole sweep")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    grid = list(itertools.product([float(x) for x in args.lr.split(",")], [int(x) for x in args.batch_size.split(",")]))
    client = tessera.Client()  # $TESSERA_SERVER, $TESSERA_TOKEN_FILE, $TESSERA_CA_FILE, as the CLI
    specs = [job_spec(f"{args.name}-{i}", args.queue, lr, batch) for i, (lr, batch) in enumerate(grid)]
    try:
        jobs = client.submit(specs)
    except tessera.ApiError as e:
        sys.exit(f"sweep: the server refused the sweep ({e.status}): {e}")
    print(f"submitted {len(jobs)} jobs: {', '.join(str(j['id']) for j in jobs)}", file=sys.stderr)

    deadline = time.monotonic() + args.timeout
    rows = []
    try:
        for job, (lr, batch) in zip(jobs, grid):
            ended = client.wait(job["id"], timeout=max(0.0, deadline - time.monotonic()))
            result = result_of(client.logs(job["id"])) if ended["state"] == "succeeded" else None
            rows.append({"job": job["id"], "name": job["name"], "state": ended["state"], "lr": lr,
                         "batch_size": batch, "result": result})
    except (KeyboardInterrupt, tessera.WaitTimeout) as e:
        # Leave nothing running behind: cancel what has not ended.
        for job in jobs:
            try:
                client.cancel(job["id"])
            except (tessera.Conflict, tessera.NotFound):
                pass
        sys.exit(f"sweep: stopped ({e or 'interrupted'}); its jobs were cancelled")

    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(f"{'job':>5} {'lr':>8} {'batch':>5} {'state':<10} loss")
        for row in sorted(rows, key=lambda r: (r["result"] is None, (r["result"] or {}).get("loss", 0))):
            loss = f"{row['result']['loss']:.4f}" if row["result"] else "-"
            print(f"{row['job']:>5} {row['lr']:>8g} {row['batch_size']:>5} {row['state']:<10} {loss}")
    return 0 if all(r["result"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
