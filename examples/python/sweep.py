#!/usr/bin/env python3
"""A small hyperparameter sweep with the Python client (docs/python.md).

One job, a sweep (spec.sweep): an array with one element per combination of
learning rate and batch size, each with its parameters in its environment
(TESSERA_SWEEP_LR, TESSERA_SWEEP_BATCH_SIZE), at most --limit at a time. It
waits for the array, reads each element's log and collects the line the
element printed as its result, then prints a table, best first.

    export TESSERA_SERVER=https://127.0.0.1:7070 TESSERA_CA_FILE=$PWD/tessera-data/tls/ca.crt
    export TESSERA_TOKEN_FILE=$PWD/tessera-data/admin.token
    PYTHONPATH=python python3 examples/python/sweep.py --lr 1e-4,3e-4,1e-3 --batch-size 32,64

The "training" is a stand-in that prints a loss computed from its
parameters; replace TRAIN with your script (it reads its parameters from the
environment and prints one `RESULT {json}` line).
"""

import argparse
import json
import sys

import tessera

# What each element runs: reads its parameters from the environment,
# "trains", and prints its result as one line of JSON after "RESULT ".
TRAIN = r"""
import json, math, os, time
lr, batch = float(os.environ["TESSERA_SWEEP_LR"]), int(os.environ["TESSERA_SWEEP_BATCH_SIZE"])
print(f"training with lr={lr} batch={batch} on GPU(s) {os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
time.sleep(1)
loss = round((math.log10(lr) + 3.5) ** 2 + 8.0 / batch, 6)
print("RESULT " + json.dumps({"lr": lr, "batch_size": batch, "loss": loss}), flush=True)
"""


def sweep_spec(name, queue, lrs, batches, limit):
    spec = {
        "sweep": {"lr": lrs, "batch_size": batches},
        "tasks": [{"name": "train", "resources": {"gpus": 1}, "command": ["python3", "-c", TRAIN]}],
    }
    if limit:
        spec["array"] = f"%{limit}"
    return {"apiVersion": "tessera/v1", "kind": "Job",
            "metadata": {"name": name, **({"queue": queue} if queue else {})}, "spec": spec}


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
    parser.add_argument("--limit", type=int, default=0, help="at most this many elements at a time (0: no limit)")
    parser.add_argument("--queue", help="the queue (default: the server's default)")
    parser.add_argument("--name", default="sweep", help="the sweep job's name")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for the whole sweep")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    client = tessera.Client()  # $TESSERA_SERVER, $TESSERA_TOKEN_FILE, $TESSERA_CA_FILE, as the CLI
    spec = sweep_spec(args.name, args.queue, args.lr.split(","), [int(x) for x in args.batch_size.split(",")], args.limit)
    try:
        [array] = client.submit(spec)
    except tessera.ApiError as e:
        sys.exit(f"sweep: the server refused the sweep ({e.status}): {e}")
    print(f"submitted sweep {array['id']}: {client.get(array['id'])['array']['size']} elements", file=sys.stderr)

    try:
        client.wait(array["id"], timeout=args.timeout)
    except (KeyboardInterrupt, tessera.WaitTimeout) as e:
        # Leave nothing running behind: the array with every element it has not finished.
        try:
            client.cancel(array["id"])
        except (tessera.Conflict, tessera.NotFound):
            pass
        sys.exit(f"sweep: stopped ({e or 'interrupted'}); its elements were cancelled")

    rows = []
    for element in client.elements(array["id"]):
        ref = tessera.element(array["id"], element["arrayIndex"])
        result = result_of(client.logs(ref)) if element["state"] == "succeeded" else None
        rows.append({"job": ref, "state": element["state"], "lr": float(element["parameters"]["lr"]),
                     "batch_size": int(element["parameters"]["batch_size"]), "result": result})

    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(f"{'element':>9} {'lr':>8} {'batch':>5} {'state':<10} loss")
        for row in sorted(rows, key=lambda r: (r["result"] is None, (r["result"] or {}).get("loss", 0))):
            loss = f"{row['result']['loss']:.4f}" if row["result"] else "-"
            print(f"{row['job']:>9} {row['lr']:>8g} {row['batch_size']:>5} {row['state']:<10} {loss}")
    return 0 if rows and all(r["result"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
