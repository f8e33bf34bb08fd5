"""The client's HTTP behaviour against stub servers on loopback: what it
sends, errors, retries on 503 and 429 as Retry-After says, a follower's
redirect followed with the same method and body, replicas, the events watch
and following logs across a restart. The real server is tests/e2e/python_client.sh."""

import json
import os
import socket
import tempfile
import threading
import time
import unittest
from unittest import mock
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tessera


class Stub:
    """A server on a free loopback port; `answer(method, path, query, headers, body)`
    returns (status, headers, body). Every request is recorded."""

    def __init__(self, answer):
        self.answer = answer
        self.requests = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                stub.requests.append((self.command, parts.path, query, dict(self.headers), body))
                status, headers, out = stub.answer(self.command, parts.path, query, self.headers, body)
                if isinstance(out, (dict, list)):
                    out = json.dumps(out)
                out = out.encode() if isinstance(out, str) else out
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_DELETE = do_PUT = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def error(status, message, **headers):
    return status, {"Content-Type": "application/json", **headers}, {"error": message, "code": status}


def ok(body, status=200, **headers):
    return status, {"Content-Type": "application/json", **headers}, body


JOB = {"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "t"},
       "spec": {"tasks": [{"name": "main", "command": ["true"]}]}}


class HttpTest(unittest.TestCase):
    def stub(self, answer):
        s = Stub(answer)
        self.addCleanup(s.close)
        return s

    def client(self, server, **kwargs):
        kwargs.setdefault("env", {"USER": "alice"})
        return tessera.Client(server, **kwargs)

    def test_what_is_sent(self):
        s = self.stub(lambda *a: ok({"jobs": [{"id": 3, "name": "t"}]}, 201))
        c = self.client(s.url, token="tsr_a_b")
        self.assertEqual(c.submit(JOB, workdir="/data/run"), [{"id": 3, "name": "t"}])
        method, path, _, headers, body = s.requests[-1]
        self.assertEqual((method, path), ("POST", "/v1/jobs"))
        self.assertEqual(headers["Authorization"], "Bearer tsr_a_b")
        self.assertEqual(headers["X-Tessera-User"], "alice")
        self.assertEqual(headers["X-Tessera-Workdir"], "/data/run")
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertEqual(json.loads(body), JOB)

        yaml_text = "apiVersion: tessera/v1\nkind: Job\n---\napiVersion: tessera/v1\nkind: Job\n"
        c.submit(yaml_text)
        self.assertEqual(s.requests[-1][3]["Content-Type"], "application/yaml")
        self.assertEqual(s.requests[-1][4], yaml_text.encode())  # as it is: the server reads YAML
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "job.yaml")
            with open(path, "w") as f:
                f.write(yaml_text)
            c.submit(path)
            self.assertEqual((s.requests[-1][3]["Content-Type"], s.requests[-1][4]), ("application/yaml", yaml_text.encode()))
            with self.assertRaises(FileNotFoundError):
                c.submit(os.path.join(d, "missing.yaml"))
        c.submit([JOB, JOB])  # several dicts: one multi-document body, all or none
        body = s.requests[-1][4].decode()
        self.assertEqual([json.loads(d) for d in body.split("\n---\n")], [JOB, JOB])

        c.list("active", queue="research", user="bob", ended_after=5, limit=2, order="newest")
        self.assertEqual(s.requests[-1][2], {"state": "active", "queue": "research", "user": "bob", "endedAfter": "5",
                                             "limit": "2", "order": "newest"})
        c.cancel(7)
        self.assertEqual(s.requests[-1][:2], ("DELETE", "/v1/jobs/7"))
        with self.assertRaises(TypeError):
            c.list(colour="red")

    def test_array_elements_are_named_id_and_index(self):
        def answer(method, path, query, *_):
            if path == "/v1/jobs":
                return 200, {}, {"jobs": [{"id": 13, "arrayJobId": 12, "arrayIndex": 0}], "revision": 1}
            if path.endswith("/logs"):
                return 200, {"Content-Type": "text/plain"}, ""
            return 200, {}, {"id": 12, "state": "running", "array": {"counts": {"pending": 1, "running": 1}}}

        s = self.stub(answer)
        c = self.client(s.url)
        self.assertEqual(tessera.element(12, 3), "12[3]")
        c.cancel(tessera.element(12, 3))
        self.assertEqual(s.requests[-1][:2], ("DELETE", "/v1/jobs/12%5B3%5D"))  # percent-encoded: the server decodes
        c.get("12[3]")
        self.assertEqual(s.requests[-1][:2], ("GET", "/v1/jobs/12%5B3%5D"))
        c.logs("12[3]")
        self.assertEqual(s.requests[-1][1], "/v1/jobs/12%5B3%5D/logs")
        self.assertEqual(c.counts(12), {"pending": 1, "running": 1})
        self.assertEqual(c.elements(12)[0]["arrayIndex"], 0)
        self.assertEqual(s.requests[-1][2], {"array": "12"})
        c.list(expand=True)
        self.assertEqual(s.requests[-1][2], {"expand": "true"})
        for bad in ("12[x]", "12[3", "[3]"):
            with self.assertRaises(TypeError):
                c.get(bad)
        with self.assertRaises(ValueError):
            tessera.element("12[3]", 1)
        with self.assertRaises(ValueError):
            tessera.element(12, -1)

    def test_errors_carry_status_and_message(self):
        def answer(method, path, *_):
            if path == "/v1/jobs/77":
                return error(404, "no job 77")
            if method == "POST":
                return error(400, "body:3:7: spec.tasks[0].colour: unknown field 'colour'")
            return 500, {"Content-Type": "text/plain"}, "boom"

        c = self.client(self.stub(answer).url)
        with self.assertRaises(tessera.NotFound) as caught:
            c.get(77)
        self.assertEqual((caught.exception.status, caught.exception.message), (404, "no job 77"))
        self.assertIsInstance(caught.exception, tessera.ApiError)
        with self.assertRaises(tessera.BadRequest) as caught:
            c.submit("apiVersion: tessera/v1\n")
        self.assertEqual(str(caught.exception), "body:3:7: spec.tasks[0].colour: unknown field 'colour'")
        with self.assertRaises(tessera.BadRequest) as caught:
            c.submit(JOB)  # positions in JSON the client wrote mean nothing to the caller
        self.assertEqual(str(caught.exception), "spec.tasks[0].colour: unknown field 'colour'")
        self.assertEqual(caught.exception.message, "body:3:7: spec.tasks[0].colour: unknown field 'colour'")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write("x: 1\n")
            f.flush()
            with self.assertRaises(tessera.BadRequest) as caught:
                c.submit(f.name)
            self.assertEqual(str(caught.exception), f.name + ":3:7: spec.tasks[0].colour: unknown field 'colour'")
        with self.assertRaises(tessera.ServerError) as caught:
            c.list()
        self.assertEqual((caught.exception.status, caught.exception.message), (500, "boom"))

    def test_503_is_retried_after_retry_after(self):
        answers = [error(503, "recovering", **{"Retry-After": "1"}), ok({"jobs": [], "revision": 4})]
        s = self.stub(lambda *a: answers.pop(0))
        started = time.monotonic()
        self.assertEqual(self.client(s.url).list(), [])
        self.assertGreaterEqual(time.monotonic() - started, 0.9)
        self.assertEqual(len(s.requests), 2)

    def test_503_for_longer_than_retry_for(self):
        s = self.stub(lambda *a: error(503, "no leader is elected yet", **{"Retry-After": "1"}))
        started = time.monotonic()
        # The jitter at its largest, so that the count of tries is known:
        # Retry-After and half again, 1.5 s apart.
        with mock.patch("tessera.client.random.uniform", lambda low, high: high), \
                self.assertRaises(tessera.Unavailable) as caught:
            self.client(s.url, retry_for=3.2).list()
        self.assertGreaterEqual(time.monotonic() - started, 3)
        self.assertLess(time.monotonic() - started, 4)
        self.assertEqual((caught.exception.status, caught.exception.retry_after), (503, 1.0))
        self.assertEqual(len(s.requests), 3)  # at 0, 1.5 and 3 s; the next would be past 3.2 s
        with self.assertRaises(tessera.Unavailable):
            self.client(s.url, retry_for=0).list()  # retries off

    def test_429_is_retried_then_given_up(self):
        answers = [error(429, "over 20 requests per second; retry in 1s", **{"Retry-After": "1"}),
                   ok({"jobs": [{"id": 1, "name": "t"}]}, 201)]
        s = self.stub(lambda *a: answers.pop(0))
        self.assertEqual(self.client(s.url).submit(JOB)[0]["id"], 1)
        self.assertEqual(s.requests[0][4], s.requests[1][4])  # the same body again

        s = self.stub(lambda *a: error(429, "dave has 2 jobs waiting; at most 2 may wait per user",
                                       **{"Retry-After": "10"}))
        started = time.monotonic()
        with self.assertRaises(tessera.RateLimited) as caught:
            self.client(s.url, retry_for=3).submit(JOB)
        self.assertLess(time.monotonic() - started, 1)  # a wait past the budget is not started
        self.assertEqual(caught.exception.retry_after, 10.0)
        self.assertIn("at most 2 may wait", caught.exception.message)

    def test_follower_redirect_keeps_method_and_body(self):
        leader = self.stub(lambda *a: ok({"jobs": [{"id": 9, "name": "t"}]}, 201))
        follower = self.stub(lambda m, p, q, *a: (307, {"Location": leader.url + p + "?x=1"}, ""))
        c = self.client(follower.url, token="tsr_t")
        self.assertEqual(c.submit(JOB)[0]["id"], 9)
        method, path, _, headers, body = leader.requests[0]
        self.assertEqual((method, path, json.loads(body)), ("POST", "/v1/jobs", JOB))
        self.assertEqual(headers["Authorization"], "Bearer tsr_t")
        self.assertEqual(c.server, leader.url)  # later calls go to the leader directly
        c.get(1)
        self.assertEqual(len(follower.requests), 1)

    def test_replicas(self):
        leader = self.stub(lambda *a: ok({"jobs": [], "revision": 1}))
        follower = self.stub(lambda *a: error(503, "no leader yet", **{"Retry-After": "1", "X-Tessera-Replica": "follower"}))
        c = self.client(f"{follower.url},{leader.url}")
        self.assertEqual(c.list(), [])
        self.assertEqual(c.server, leader.url)
        # A replica that refuses connections: the next one.
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
        self.assertEqual(self.client(f"{dead},{leader.url}").list(), [])
        with self.assertRaises(tessera.Unreachable) as caught:
            self.client(dead).list()
        self.assertIn("is `tessera server` or `tessera up` running?", str(caught.exception))

    def test_events_and_resets(self):
        def answer(method, path, query, *_):
            if path == "/v1/jobs":
                return ok({"jobs": [], "revision": 10})
            since = int(query["since"])
            if since == 10:
                return ok({"events": [{"revision": 11, "type": "JobRunning", "job": 1},
                                      {"revision": 12, "type": "JobSucceeded", "job": 1}], "revision": 12})
            if since == 12:
                return ok({"events": [], "revision": 12})
            if since == 1:
                return error(410, "revision 1 is older than the event window (oldest 5): list again, then watch")
            return ok({"events": [], "revision": 3})  # a restarted server

        s = self.stub(answer)
        c = self.client(s.url)
        self.assertEqual([e["revision"] for e in c.events(job=1, wait=0.1, timeout=0.5)], [11, 12])
        self.assertEqual(s.requests[1][2]["job"], "1")
        with self.assertRaises(tessera.WatchReset) as caught:
            next(c.events(since=1))
        self.assertIsInstance(caught.exception.__cause__, tessera.Gone)
        with self.assertRaises(tessera.WatchReset) as caught:
            next(c.events(since=50))
        self.assertEqual((caught.exception.since, caught.exception.revision), (50, 3))

    def test_follow_goes_on_with_a_restarted_run(self):
        logs = {1: b"run one\n", 2: b"run two: \xc3"}  # a character split across two reads
        state = {"attempt": 1, "reads": 0}

        def answer(method, path, query, *_):
            if path == "/v1/jobs/5":
                return ok({"id": 5, "state": "succeeded", "attempt": state["attempt"]})
            state["reads"] += 1
            if state["reads"] == 3:
                state["attempt"] = 2  # the job restarted after the first read past the end
            if state["reads"] == 8:
                logs[2] += b"\xa9 done\n"
            attempt = int(query.get("attempt", state["attempt"]))
            offset = int(query["offset"])
            data = logs[attempt][offset:]
            job_state = "running" if state["reads"] < 9 else "succeeded"
            return 200, {"X-Tessera-Next-Offset": str(offset + len(data)), "X-Tessera-Job-State": job_state,
                         "X-Tessera-Attempt": str(attempt), "Content-Type": "text/plain"}, data

        c = self.client(self.stub(answer).url)
        chunks = list(c.logs(5, follow=True, poll=0.01, timeout=10))
        self.assertEqual("".join(chunks), "run one\nrun two: \u00e9 done\n")

    def test_wait_timeout_names_the_state(self):
        def answer(method, path, query, *_):
            if path == "/v1/jobs":
                return ok({"jobs": [], "revision": 1})
            if path == "/v1/jobs/2":
                return ok({"id": 2, "state": "running"})
            time.sleep(float(query["wait"]))
            return ok({"events": [], "revision": 1})

        started = time.monotonic()
        with self.assertRaises(tessera.WaitTimeout) as caught:
            self.client(self.stub(answer).url).wait(2, timeout=0.5)
        self.assertLess(time.monotonic() - started, 3)
        self.assertEqual(caught.exception.job["state"], "running")
        self.assertIn("still running", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
