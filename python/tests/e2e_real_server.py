"""The Python client against a real Tessera server, driven by
tests/e2e/python_client.sh (which starts the server and agents):

    python3 e2e_real_server.py plain   # a server without access control, plain HTTP; from $TESSERA_SERVER
    python3 e2e_real_server.py tls URL TOKEN_FILE CA_FILE   # `tessera up`: TLS from its CA, tokens

Every wait has a deadline; a failed check exits nonzero naming what was expected and what came.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import tessera


def check(condition, message):
    if not condition:
        raise SystemExit(f"FAIL: {message}")


def log(message):
    print(f"[python] {message}", file=sys.stderr, flush=True)


def expect_error(cls, status, text, call, *args, **kwargs):
    """The call raises `cls` with this status and the server's message containing `text`."""
    try:
        call(*args, **kwargs)
    except cls as e:
        check(isinstance(e, tessera.ApiError), f"{cls.__name__} is an ApiError")
        check(e.status == status, f"{call.__name__}{args}: status {status}, not {e.status} ({e.message})")
        check(text in e.message, f"{call.__name__}{args}: the server's message says {text!r}: {e.message!r}")
        return e
    except tessera.TesseraError as e:
        raise SystemExit(f"FAIL: {call.__name__}{args} raised {e!r}, not {cls.__name__}")
    raise SystemExit(f"FAIL: {call.__name__}{args} raised nothing, not {cls.__name__}")


def job(name, command, env=None, gpus=1):
    task = {"name": "main", "command": command, "resources": {"gpus": gpus}}
    if env:
        task["env"] = env
    return {"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"tasks": [task]}}


# Long tasks carry the test's marker in their command line, so that the
# test's cleanup kills them if an agent is killed under them.
MARKER = os.environ.get("E2E_MARKER", "e2e")


def sleeper(seconds):
    return ["python3", "-c", f"import time; time.sleep({seconds})", MARKER]


class Counting(tessera.Client):
    """Counts the HTTP requests it sends."""

    calls = 0

    def _send(self, *args, **kwargs):
        self.calls += 1
        return super()._send(*args, **kwargs)


def wait_for_event(client, job_id, kind, seconds):
    for event in client.events(since=0, job=job_id, wait=5, timeout=seconds):
        if event["type"] == kind:
            return event
    raise SystemExit(f"FAIL: no {kind} event for job {job_id} within {seconds} s: {client.get(job_id)['state']}")


def plain():
    client = tessera.Client()  # everything from the environment, as the CLI
    check(client.server == os.environ["TESSERA_SERVER"], f"the server from $TESSERA_SERVER: {client.server}")

    # Submit from a dict, and from a YAML file holding two documents.
    [from_dict] = client.submit(job("py-dict", ["sh", "-c", 'echo "hello from a dict, GREETING=$GREETING"'],
                                    env={"GREETING": "bonjour"}))
    check(from_dict["name"] == "py-dict", f"submit answers id and name: {from_dict}")
    workdir = tempfile.mkdtemp(prefix="py-e2e-")
    path = os.path.join(workdir, "two.yaml")
    with open(path, "w") as f:
        f.write("# two jobs, accepted together\n"
                "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: py-yaml-a}\n"
                "spec:\n  tasks:\n    - name: main\n      resources: {gpus: 1}\n"
                "      command: [sh, -c, 'echo yaml-a in $(pwd)']\n"
                "---\n"
                "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: py-yaml-b}\n"
                "spec:\n  tasks:\n    - name: worker\n      replicas: 2\n      resources: {gpus: 1}\n"
                "      command: [sh, -c, 'echo yaml-b rank $RANK of $WORLD_SIZE']\n")
    yaml_jobs = client.submit(path, workdir=workdir)
    check([j["name"] for j in yaml_jobs] == ["py-yaml-a", "py-yaml-b"], f"both documents, in order: {yaml_jobs}")
    check(yaml_jobs[0]["id"] == from_dict["id"] + 1 and yaml_jobs[1]["id"] == from_dict["id"] + 2,
          f"ids in submission order: {from_dict} {yaml_jobs}")
    log(f"submitted {from_dict['id']} from a dict, {[j['id'] for j in yaml_jobs]} from {path}")

    # get and list.
    got = client.get(from_dict["id"])
    check(got["name"] == "py-dict" and got["spec"] and isinstance(got["events"], list), f"get: {got}")
    check([j["id"] for j in client.list(name="py-dict")] == [from_dict["id"]], "list(name=) finds the job")
    ids = [j["id"] for j in client.list()]
    check(all(j["id"] in ids for j in [from_dict] + yaml_jobs), f"list() holds every job: {ids}")
    check(client.list_with_revision(limit=0)["revision"] > 0, "the list carries a revision")

    # wait, then logs.
    ended = client.wait(from_dict["id"], timeout=60)
    check(ended["state"] == "succeeded", f"the dict job succeeded: {ended['state']} {ended['message']}")
    text = client.logs(from_dict["id"])
    check(text == "hello from a dict, GREETING=bonjour\n", f"its log, with its env: {text!r}")
    check(from_dict["id"] in [j["id"] for j in client.list("succeeded")], "list('succeeded') holds it")
    for j in yaml_jobs:
        check(client.wait(j, timeout=60)["state"] == "succeeded", f"{j['name']} succeeded")
    check(client.logs(yaml_jobs[0]["id"]) == f"yaml-a in {workdir}\n",
          f"the YAML job started in the submission's workdir: {client.logs(yaml_jobs[0]['id'])!r}")
    check(client.logs(yaml_jobs[1]["id"], task="worker-1") == "yaml-b rank 1 of 2\n",
          f"a task's log by name: {client.logs(yaml_jobs[1]['id'], task='worker-1')!r}")
    types = [e["type"] for e in client.events(since=0, job=from_dict["id"], wait=0, timeout=2)]
    check(types[0] == "JobSubmitted" and types[-1] == "JobSucceeded" and "JobRunning" in types,
          f"the job's events, oldest first: {types}")
    log("logs and events read back")

    # wait sees the end through the events watch, at once, not at its next poll.
    # And the server holds the watch: a handful of requests, not a busy loop.
    counting = Counting()
    [short] = counting.submit(job("py-wait", ["sh", "-c", "sleep 2; echo waited"]))
    counting.calls = 0
    started = time.monotonic()
    ended = counting.wait(short["id"], timeout=60, poll=30)
    took = time.monotonic() - started
    check(ended["state"] == "succeeded" and 1.0 <= took < 30, f"wait blocked until the end: {ended['state']} {took:.1f} s")
    late_ms = time.time() * 1000 - ended["endTime"]
    check(late_ms < 3000, f"wait returned within moments of the end, not at its poll: {late_ms:.0f} ms later")
    check(counting.calls <= 8, f"wait long-polls the events: {counting.calls} requests in {took:.1f} s")
    log(f"wait: job {short['id']} ended after {took:.1f} s, seen {late_ms:.0f} ms after its end, "
        f"in {counting.calls} requests")

    # Follow a log while the job writes it.
    [slow] = client.submit(job("py-follow", ["sh", "-c", "for i in 1 2 3 4; do echo step $i; sleep 1; done"]))
    chunks = list(client.logs(slow["id"], follow=True, timeout=60))
    check("".join(chunks) == "step 1\nstep 2\nstep 3\nstep 4\n", f"followed log: {chunks}")
    check(len(chunks) >= 2, f"a followed log arrives in pieces as it is written: {chunks}")
    check(client.get(slow["id"])["state"] == "succeeded", "following stops once the job has ended")
    log(f"followed job {slow['id']}'s log in {len(chunks)} chunks")

    # Cancel a running job; a second cancel is a conflict; wait returns the cancelled job.
    [doomed] = client.submit(job("py-cancel", sleeper(300)))
    wait_for_event(client, doomed["id"], "JobRunning", 30)
    reported = client.report_checkpoint(doomed["id"])
    check(abs(reported["lastCheckpointTime"] - time.time() * 1000) < 60_000, f"a checkpoint reported now: {reported}")
    check(client.get(doomed["id"])["lastCheckpointTime"] == reported["lastCheckpointTime"], "the job shows the reported checkpoint")
    cancelled = client.cancel(doomed["id"])
    check(cancelled["state"] == "cancelled", f"cancel answers the cancelled job: {cancelled['state']}")
    expect_error(tessera.Conflict, 409, "has no running run", client.report_checkpoint, doomed["id"])
    check(client.wait(doomed["id"], timeout=10)["state"] == "cancelled", "wait returns a cancelled job")
    expect_error(tessera.Conflict, 409, f"job {doomed['id']} already ended", client.cancel, doomed["id"])

    # wait's timeout.
    [long] = client.submit(job("py-long", sleeper(300)))
    started = time.monotonic()
    try:
        client.wait(long["id"], timeout=1.5)
        raise SystemExit("FAIL: wait(timeout=1.5) on a 300 s job returned")
    except tessera.WaitTimeout as e:
        took = time.monotonic() - started
        check(1.4 <= took < 10, f"wait gave up after its timeout: {took:.1f} s")
        check(e.job["state"] in tessera.ACTIVE_STATES, f"WaitTimeout carries the job: {e.job['state']}")
    client.cancel(long["id"])
    log("cancel, conflict and wait's timeout")

    # An array: one job with its counts; an element cancelled before it starts, one while it runs, then the rest.
    array = job("py-array", sleeper(300))
    array["spec"]["array"] = "0-3%1"
    [arr] = client.submit(array)
    wait_for_event(client, arr["id"] + 1, "JobScheduled", 30)  # element 0 has the first id after its array's
    cancelled = client.cancel(tessera.element(arr["id"], 2))
    check(cancelled["state"] == "cancelled" and cancelled["arrayIndex"] == 2, f"an element is cancelled before it starts: {cancelled}")
    check(client.get(tessera.element(arr["id"], 3))["state"] == "pending", "an element not started is pending")
    client.cancel(f"{arr['id']}[0]")
    wait_for_event(client, arr["id"] + 2, "JobScheduled", 30)  # the limit of 1 lets element 1 start
    counts = client.counts(arr)
    check(counts == {"pending": 1, "running": 1, "succeeded": 0, "failed": 0, "cancelled": 2}, f"the array's counts: {counts}")
    check([e["arrayIndex"] for e in client.elements(arr)] == [0, 1, 2], f"its elements: {client.elements(arr)}")
    check([j["id"] for j in client.list("active")] == [arr["id"]], "an array is one job to list")
    check(client.cancel(arr)["state"] == "cancelled", "cancelling the array ends it")
    check(client.counts(arr)["cancelled"] == 4, f"with every element: {client.counts(arr)}")
    log("arrays: counts, elements, cancel one element (started or not) and the whole array")

    # Errors carry the API's status and message.
    bad = job("py-bad", ["true"])
    bad["spec"]["tasks"][0]["colour"] = "red"
    e = expect_error(tessera.BadRequest, 400, "spec.tasks[0].colour: unknown field 'colour'", client.submit, bad)
    check(str(e).startswith("spec.tasks[0].colour"), f"a dict's error drops positions in JSON the caller never saw: {e}")
    expect_error(tessera.BadRequest, 400, "malformed YAML", client.submit, "apiVersion: tessera/v1\nspec: [\n")
    expect_error(tessera.BadRequest, 400, "spec.tasks[0].command: required",
                 client.submit, {"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "x"},
                                 "spec": {"tasks": [{"name": "main"}]}})
    bad_path = os.path.join(workdir, "bad.yaml")
    with open(bad_path, "w") as f:
        f.write("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  tasks:\n"
                "    - name: main\n      replicas: many\n      command: [true]\n")
    e = expect_error(tessera.BadRequest, 400, "spec.tasks[0].replicas", client.submit, bad_path)
    check(str(e).startswith(bad_path + ":7:"), f"a file's error names the file and line: {e}")
    expect_error(tessera.Infeasible, 422, "GPUs per task, but the largest node has",
                 client.submit, job("py-huge", ["true"], gpus=64))
    expect_error(tessera.NotFound, 404, "no job 999999", client.get, 999999)
    expect_error(tessera.NotFound, 404, "no job 999999", client.cancel, 999999)
    expect_error(tessera.NotFound, 404, "no job 999999", client.logs, 999999)
    expect_error(tessera.BadRequest, 400, "state:", client.list, "sleeping")
    try:
        client.submit(os.path.join(workdir, "missing.yaml"))
        raise SystemExit("FAIL: a missing job file was submitted")
    except FileNotFoundError:
        pass
    log("errors: 400 with the server's messages, 422, 404, a missing file")

    # Nothing left running.
    check(client.list("active") == [], f"no job is left active: {client.list('active')}")
    log("plain: all checks passed")


def tls(url, token_file, ca_file):
    # Explicit arguments.
    client = tessera.Client(server=url, token_file=token_file, ca_file=ca_file)
    [j] = client.submit(job("py-tls", ["sh", "-c", "echo over tls as job $TESSERA_JOB_ID"]))
    check(client.wait(j["id"], timeout=60)["state"] == "succeeded", "the job ran over TLS")
    check(client.logs(j["id"]) == f"over tls as job {j['id']}\n", f"its log: {client.logs(j['id'])!r}")
    # The environment `tessera up` tells people to export.
    from_env = tessera.Client()
    check(from_env.token and from_env.ca_file == os.environ["TESSERA_CA_FILE"], "token and CA from the environment")
    check(j["id"] in [x["id"] for x in from_env.list()], "a client configured by the environment is served")
    log(f"job {j['id']} over TLS with a token file and the CA file")

    # Without the token, without the CA, over plain HTTP.
    anonymous = tessera.Client(server=url, ca_file=ca_file, env={"HOME": "/nonexistent"})
    expect_error(tessera.Unauthorized, 401, "needs a token", anonymous.list)
    untrusting = tessera.Client(server=url, token_file=token_file, env={"HOME": "/nonexistent"})
    try:
        untrusting.list()
        raise SystemExit("FAIL: a client that does not trust the cluster's CA was served")
    except tessera.Unreachable as e:
        check("certificate verify failed" in str(e), f"the handshake's refusal is named: {e}")
    plain_http = tessera.Client(server=url.replace("https://", "http://"), token_file=token_file, env={})
    expect_error(tessera.BadRequest, 400, "this server speaks TLS", plain_http.list)

    # Another user's token: its own view, and 403 with the server's reason.
    alice_token = client.request("POST", "/v1/tokens", body={"user": "alice", "role": "user"})["token"]
    alice = tessera.Client(server=url, token=alice_token, ca_file=ca_file)
    check(alice.list() == [], f"alice sees none of the admin's jobs: {alice.list()}")
    expect_error(tessera.Forbidden, 403, "is not alice's", alice.get, j["id"])
    expect_error(tessera.Forbidden, 403, "alice is not a member of queue", alice.submit, job("x", ["true"]))
    log("tls: 401 without a token, the CA's refusal, 403 for another user's job")

    # The sweep example of docs/python.md, configured by the environment as a user would run it.
    sweep = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python", "sweep.py")
    run = subprocess.run([sys.executable, sweep, "--lr", "1e-4,3e-4", "--batch-size", "16,64", "--limit", "2", "--json",
                          "--timeout", "120", "--name", "py-sweep"], capture_output=True, text=True, timeout=180)
    check(run.returncode == 0, f"the sweep example ran: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    rows = json.loads(run.stdout)
    check(len(rows) == 4, f"one result per combination: {rows}")
    for row in rows:
        check(row["state"] == "succeeded", f"sweep element {row['job']} succeeded: {row}")
        expected = round((math.log10(row["lr"]) + 3.5) ** 2 + 8.0 / row["batch_size"], 6)
        result = row["result"]
        check(result["lr"] == row["lr"] and result["batch_size"] == row["batch_size"] and result["loss"] == expected,
              f"element {row['job']} ran with its own parameters and its result came from its log: {row}")
        check(client.get(row["job"])["name"] == "py-sweep", f"the sweep's elements carry its name: {row}")
    [sweep_job] = client.list(name="py-sweep")  # one job, however many elements
    check(client.counts(sweep_job)["succeeded"] == 4, f"the sweep counts its elements: {sweep_job['array']}")
    log(f"sweep: {len(rows)} elements of one job, results {sorted(r['result']['loss'] for r in rows)}")
    log("tls: all checks passed")


if __name__ == "__main__":
    if sys.argv[1:2] == ["plain"]:
        plain()
    elif sys.argv[1:2] == ["tls"] and len(sys.argv) == 5:
        tls(*sys.argv[2:])
    else:
        raise SystemExit(__doc__)
