"""`tessera.Client`: the REST API (docs/api.md) from Python, standard library only."""

from __future__ import annotations

import codecs
import json
import os
import random
import re
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import config
from .errors import (ApiError, ConfigError, NotFound, Unreachable, WaitTimeout, WatchReset, error_for,
                     parse_retry_after)

ENDED_STATES = frozenset({"succeeded", "failed", "cancelled"})
ACTIVE_STATES = frozenset({"pending", "starting", "running"})
_END_EVENTS = frozenset({"JobSucceeded", "JobFailed", "JobCancelled"})

Spec = Union[Mapping[str, Any], str, bytes, "os.PathLike[str]", Sequence[Mapping[str, Any]]]
# A job: its id, "12[3]" for an element of array 12 (`element`), or a job as the API returns it.
JobRef = Union[int, str, Mapping[str, Any]]


class _Answer:
    """One HTTP answer: status, headers (names in lower case) and body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Dict[str, str], body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else {}


class _KeepEveryAnswer(urllib.request.HTTPErrorProcessor):
    """Hands every answer back as it is: errors are the client's to read, and
    a redirect (a follower replica's 307) is followed by the client itself,
    with the same method and body, as the CLI does (urllib would refuse to
    redirect a POST)."""

    def http_response(self, request, response):
        return response

    https_response = http_response


class Client:
    """A client of one Tessera server (or of its replicas).

    Arguments left out come from the environment the CLI reads
    (`tessera.config`): ``$TESSERA_SERVER`` (default
    ``http://127.0.0.1:7070``), ``$TESSERA_TOKEN`` or ``$TESSERA_TOKEN_FILE``
    (default ``~/.config/tessera/token``), ``$TESSERA_CA_FILE``, ``$USER``.

    ``timeout``: seconds one request may take (a watch's long poll gets its
    wait on top). ``retry_for``: how long a call keeps retrying a 503 (no
    leader yet, a recovering replica) or a 429 (over a rate or a queue limit)
    as their ``Retry-After`` says, and hopping between replicas; 0 turns
    retries off.

    It keeps no connection open (each call opens its own), so one client
    may serve several threads.
    """

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None, token_file: Optional[str] = None,
                 ca_file: Optional[str] = None, user: Optional[str] = None, *, cert_file: Optional[str] = None,
                 key_file: Optional[str] = None, timeout: float = 30.0, retry_for: float = 30.0,
                 env: Optional[Mapping[str, str]] = None):
        env = os.environ if env is None else env
        self.endpoints: List[config.Endpoint] = config.resolve_servers(server, env)
        self.token = config.resolve_token(token, token_file, env)
        self.user = config.resolve_user(user, env)
        self.ca_file = config.resolve_file(ca_file, env, "TESSERA_CA_FILE")
        self.cert_file = config.resolve_file(cert_file, env, "TESSERA_CERT_FILE")
        self.key_file = config.resolve_file(key_file, env, "TESSERA_KEY_FILE")
        self.timeout = timeout
        self.retry_for = retry_for
        self._current = 0
        handlers: List[Any] = [urllib.request.ProxyHandler({}), _KeepEveryAnswer()]  # direct, as the CLI connects
        if any(e.tls for e in self.endpoints):
            handlers.append(urllib.request.HTTPSHandler(context=self._tls_context()))
        self._opener = urllib.request.build_opener(*handlers)

    def _tls_context(self) -> ssl.SSLContext:
        try:
            context = ssl.create_default_context(cafile=self.ca_file)
            if self.cert_file:
                context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"TLS files: {e}") from e
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        return context

    @property
    def server(self) -> str:
        """The URL of the replica in use (the leader, once one redirected here)."""
        return self.endpoints[self._current].url

    def __repr__(self) -> str:
        return f"tessera.Client(server={self.server!r}, user={self.user!r}, token={'set' if self.token else None})"

    # ------------------------------------------------------------------ jobs

    def submit(self, spec: Spec, *, workdir: Optional[str] = None) -> List[Dict[str, Any]]:
        """Submits one or more jobs, all or none; returns ``[{"id": 7, "name": "train"}, ...]`` in document order.

        ``spec`` is a Job document as a dict, a list of them, YAML or JSON
        text (several YAML documents separated by ``---``), or the path of a
        YAML or JSON file (a ``str`` without a line break, or a
        ``pathlib.Path``). YAML is sent as it is: the server reads it.
        ``workdir`` is where tasks without ``workingDir`` start (default: the
        current directory, as the CLI sends it).
        """
        body, content_type, source = _submission(spec)
        headers = {"X-Tessera-Workdir": workdir or _cwd()}
        answer = self.request("POST", "/v1/jobs", body=body, content_type=content_type, headers=headers,
                              source=source)
        return list(answer.get("jobs", []))

    def get(self, job_id: JobRef) -> Dict[str, Any]:
        """One job, with its ``spec`` (the document as stored) and ``events``.

        Wherever a job is named, an array's element may be too: ``"12[3]"``
        or ``tessera.element(12, 3)``. An element that has not started yet is
        answered as ``pending``."""
        return self.request("GET", _job_path(job_id))

    def list(self, state: Optional[str] = None, *, queue: Optional[str] = None, user: Optional[str] = None,
             name: Optional[str] = None, ended_after: Optional[int] = None, limit: Optional[int] = None,
             order: Optional[str] = None, expand: Optional[bool] = None) -> List[Dict[str, Any]]:
        """Jobs in id order, filtered as ``GET /v1/jobs`` filters: ``state`` (one
        state, ``active`` or ``ended``), ``queue`` (and the queues below it),
        ``user``, ``name`` (exact), ``ended_after`` (Unix ms), ``limit`` and
        ``order`` (``oldest`` or ``newest``: which end ``limit`` keeps). An
        array is one job (with its ``array`` counts); ``expand=True`` lists
        its started elements after it."""
        return list(self.list_with_revision(state, queue=queue, user=user, name=name, ended_after=ended_after,
                                            limit=limit, order=order, expand=expand)["jobs"])

    def elements(self, array_id: JobRef, state: Optional[str] = None) -> List[Dict[str, Any]]:
        """The elements of an array job that started (or were cancelled), in
        index order: each a job of its own, with ``arrayJobId`` and
        ``arrayIndex`` (and a sweep's ``parameters``)."""
        return list(self.request("GET", "/v1/jobs", query={"array": _job_ref(array_id), "state": state})["jobs"])

    def counts(self, array_id: JobRef) -> Dict[str, int]:
        """An array job's elements by state: ``{"pending": 87, "running": 10,
        "succeeded": 3, "failed": 0, "cancelled": 0}`` (they add up to its
        size). `ValueError` for a job that is not an array."""
        job = self.get(array_id)
        if "array" not in job:
            raise ValueError(f"job {_job_ref(array_id)} is not an array")
        return dict(job["array"]["counts"])

    def list_with_revision(self, state: Optional[str] = None, **filters: Any) -> Dict[str, Any]:
        """As `list`, but the whole answer: ``{"jobs": [...], "revision": N}``, to watch `events` from N."""
        names = {"queue": "queue", "user": "user", "name": "name", "ended_after": "endedAfter", "limit": "limit",
                 "order": "order", "expand": "expand"}
        unknown = set(filters) - set(names)
        if unknown:
            raise TypeError(f"unknown filter(s): {', '.join(sorted(unknown))}")
        query = {"state": state}
        query.update({names[k]: v for k, v in filters.items()})
        return self.request("GET", "/v1/jobs", query=query)

    def cancel(self, job_id: JobRef) -> Dict[str, Any]:
        """Cancels a job; returns it, now ``cancelled``. `Conflict` (409) if it
        already ended. An array is cancelled with every element it has not
        finished; ``"12[3]"`` (`element`) cancels one element, started or not."""
        return self.request("DELETE", _job_path(job_id))

    def report_checkpoint(self, job_id: JobRef) -> Dict[str, Any]:
        """Says the job's current run wrote a checkpoint now, as touching
        ``TESSERA_CHECKPOINT_FILE`` does from inside it: preemption and
        drains then count only the work since. Returns ``{"id": ...,
        "lastCheckpointTime": ms}``; `Conflict` (409) unless the job runs."""
        return self.request("POST", _job_path(job_id) + "/checkpoint")

    def logs(self, job_id: JobRef, *, task: Optional[str] = None, stream: str = "stdout", attempt: Optional[int] = None,
             offset: int = 0, follow: bool = False, poll: float = 0.5,
             timeout: Optional[float] = None) -> Union[str, Iterator[str]]:
        """A task's log: the first task group's replica 0 unless ``task``
        (e.g. ``"worker-1"``), ``stdout`` unless ``stream="stderr"``, the
        current run unless ``attempt``.

        Without ``follow``: everything written so far, as one string. With
        ``follow=True``: an iterator of chunks as they arrive, which waits
        for a job that has not started and ends once the job has ended and
        its last chunks are in; when the job restarts it goes on with the
        new run's log from its start (unless ``attempt`` pinned one).
        ``timeout`` bounds the following (`WaitTimeout`). Bytes that are not
        UTF-8 are replaced.
        """
        if follow:
            return self._follow_logs(job_id, task, stream, attempt, offset, poll, timeout)
        data = bytearray()
        while True:
            answer = self._log_chunk(job_id, task, stream, attempt, offset + len(data))
            if not answer.body:
                return data.decode("utf-8", errors="replace")
            data += answer.body

    def wait(self, job_id: JobRef, timeout: Optional[float] = None, *, poll: float = 30.0) -> Dict[str, Any]:
        """Blocks until the job has ended (succeeded, failed or cancelled) and
        returns it (as `get`). Watches the job's events with the API's long
        poll, so the end is seen within moments, without polling the job.
        `WaitTimeout` after ``timeout`` seconds (None: no limit), carrying
        the job as last read."""
        deadline = None if timeout is None else time.monotonic() + timeout
        job_id = _job_ref(job_id)
        while True:
            # The revision first, then the state: an end after that revision
            # is an event the watch below receives.
            since = self._revision()
            job = self.get(job_id)
            if job["state"] in ENDED_STATES:
                return job
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimeout(f"job {job_id} is still {job['state']} after {timeout:g} s", job)
            try:
                # Events name a job by its own id (an element's too).
                for event in self.events(since=since, job=int(job["id"]), wait=poll, timeout=remaining):
                    if event.get("type") in _END_EVENTS:
                        return self.get(job_id)
            except WatchReset:
                continue  # events were lost: read the state again
            if deadline is not None and time.monotonic() >= deadline:
                job = self.get(job_id)
                if job["state"] in ENDED_STATES:
                    return job
                raise WaitTimeout(f"job {job_id} is still {job['state']} after {timeout:g} s", job)

    # ---------------------------------------------------------------- events

    def events(self, since: Optional[int] = None, *, job: Optional[int] = None, node: Optional[str] = None,
               kind: Optional[str] = None, wait: float = 30.0, timeout: Optional[float] = None) -> Iterator[Dict[str, Any]]:
        """The event stream (``GET /v1/events`` long polls), oldest first:
        ``{"revision", "time", "type", "job"?, "node"?, "message"}``.

        ``since``: the revision to continue after; None starts from now (the
        latest revision), 0 from everything the server still holds. Filters:
        ``job``, ``node``, ``kind`` (``"job"`` or ``"node"``). Each poll waits
        up to ``wait`` seconds (at most 60). The iteration ends after
        ``timeout`` seconds (None: never). Raises `WatchReset` when events
        after the revision reached are gone (list again, then watch).
        """
        if since is None:
            since = self._revision()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            hold = min(max(wait, 0.0), 60.0)
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                hold = min(hold, remaining)
            query = {"since": since, "job": job, "node": node, "kind": kind, "wait": f"{hold:.3f}"}
            try:
                answer = self.request("GET", "/v1/events", query=query, timeout=self.timeout + hold)
            except ApiError as e:
                if e.status == 410:
                    raise WatchReset(e.message, since) from e
                raise
            events = answer.get("events", [])
            revision = int(answer.get("revision", since))
            if not events and revision < since:
                raise WatchReset(f"the server's latest revision is {revision}, below {since}: it restarted; "
                                 "list again, then watch", since, revision)
            for event in events:
                since = int(event["revision"])
                yield event
            if not events:
                since = max(since, revision)

    # ----------------------------------------------------------------- HTTP

    def request(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None,
                body: Union[bytes, str, Mapping[str, Any], None] = None, content_type: str = "application/json",
                headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                source: Optional[str] = None) -> Any:
        """Any route of the API (docs/api.md): the answer's JSON, or the
        `ApiError` for its status. A dict body is sent as JSON."""
        answer = self._send(method, path, query=query, body=body, content_type=content_type, headers=headers,
                            timeout=timeout)
        if answer.status >= 300:  # a redirect not followed (past retry_for) is an error too
            raise _error_of(method, path, answer, source)
        try:
            return answer.json()
        except ValueError:
            return answer.body.decode("utf-8", errors="replace")

    def _send(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None,
              body: Union[bytes, str, Mapping[str, Any], None] = None, content_type: str = "application/json",
              headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None) -> _Answer:
        """One call, whatever its status, after the retries the class describes.

        Nothing is sent twice unless it never reached a server or was refused
        before it was handled: a refused connection to one replica of
        several, a follower's redirect or 503, a 429."""
        if isinstance(body, Mapping):
            body = json.dumps(body).encode("utf-8")
        elif isinstance(body, str):
            body = body.encode("utf-8")
        target = path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                target += "?" + urllib.parse.urlencode(pairs)
        send_headers = {"User-Agent": "tessera-python", "Accept": "application/json", "X-Tessera-User": self.user}
        if self.token:
            send_headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            send_headers["Content-Type"] = content_type
        send_headers.update(headers or {})
        timeout = self.timeout if timeout is None else timeout

        give_up = time.monotonic() + self.retry_for
        hops = 0

        def pause(seconds: float) -> bool:
            # Waits when the retry budget allows it.
            if time.monotonic() + seconds > give_up:
                return False
            time.sleep(seconds)
            return True

        def hop() -> bool:
            # From replica to replica; after trying them all, a pause, so
            # that a dead leader's lease can expire.
            nonlocal hops
            hops += 1
            return hops % (len(self.endpoints) + 1) != 0 or pause(0.1)

        while True:
            endpoint = self.endpoints[self._current]
            request = urllib.request.Request(endpoint.url + target, data=body, method=method, headers=send_headers)
            try:
                with self._opener.open(request, timeout=timeout) as response:
                    answer = _Answer(response.status, {k.lower(): v for k, v in response.headers.items()},
                                     response.read())
            except (urllib.error.URLError, OSError) as e:
                reason = e.reason if isinstance(e, urllib.error.URLError) else e
                if isinstance(reason, ConnectionRefusedError) and len(self.endpoints) > 1 and hop():
                    self._current = (self._current + 1) % len(self.endpoints)
                    continue
                raise _unreachable(endpoint, reason, timeout) from e

            if answer.status in (307, 308):
                leader = _endpoint_of(answer.headers.get("location", ""))
                if leader is not None and hop():
                    if leader not in self.endpoints:
                        self.endpoints.append(leader)
                    self._current = self.endpoints.index(leader)
                    continue
            elif answer.status == 503:
                if "x-tessera-replica" in answer.headers and len(self.endpoints) > 1:
                    if pause(0.1):  # another replica may lead
                        self._current = (self._current + 1) % len(self.endpoints)
                        continue
                elif pause(_retry_delay(answer, 1.0)):
                    continue
            elif answer.status == 429:
                if pause(_retry_delay(answer, 1.0)):
                    continue
            return answer

    def _revision(self) -> int:
        """The latest event revision, to watch from."""
        return int(self.list_with_revision(limit=0)["revision"])

    def _log_chunk(self, job_id: JobRef, task: Optional[str], stream: str, attempt: Optional[int],
                   offset: int) -> _Answer:
        path = _job_path(job_id) + "/logs"
        query = {"task": task, "stream": stream, "offset": offset, "attempt": attempt}
        answer = self._send("GET", path, query=query)
        if answer.status >= 300:
            raise _error_of("GET", path, answer, None)
        return answer

    def _follow_logs(self, job_id: JobRef, task: Optional[str], stream: str, attempt: Optional[int], offset: int,
                     poll: float, timeout: Optional[float]) -> Iterator[str]:
        deadline = None if timeout is None else time.monotonic() + timeout
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        reading: Optional[int] = attempt  # the run being read
        empty_reads_after_end = 0  # the last chunks may arrive just after the job ends

        def sleep() -> None:
            if deadline is not None and time.monotonic() + poll > deadline:
                raise WaitTimeout(f"job {job_id}'s log was still open after {timeout:g} s")
            time.sleep(poll)

        while True:
            try:
                answer = self._log_chunk(job_id, task, stream, attempt, offset)
            except NotFound as e:
                if "has not started yet" not in e.message:
                    raise
                if self.get(job_id)["state"] in ENDED_STATES:
                    return  # it ended without ever running: there is no log
                sleep()
                continue
            run = int(answer.headers.get("x-tessera-attempt", reading or 0))
            if reading is None:
                reading = run
            if run != reading:
                # The job restarted (the answer is the new run's, from our
                # offset): the rest of the old run's log, then the new one's
                # from its start.
                while True:
                    rest = self._log_chunk(job_id, task, stream, reading, offset)
                    if not rest.body:
                        break
                    offset += len(rest.body)
                    text = decoder.decode(rest.body)
                    if text:
                        yield text
                tail = decoder.decode(b"", final=True)
                if tail:
                    yield tail
                decoder.reset()
                reading, offset, empty_reads_after_end = run, 0, 0
                continue
            if answer.body:
                offset = int(answer.headers.get("x-tessera-next-offset", offset + len(answer.body)))
                text = decoder.decode(answer.body)
                if text:
                    yield text
                continue
            if answer.headers.get("x-tessera-job-state", "") not in ACTIVE_STATES:
                empty_reads_after_end += 1
                if empty_reads_after_end > 3:
                    tail = decoder.decode(b"", final=True)
                    if tail:
                        yield tail
                    return
            sleep()


# --------------------------------------------------------------------- helpers


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return "/"


def element(array_id: JobRef, index: int) -> str:
    """How the API names an element of an array job: ``element(12, 3)`` is ``"12[3]"``."""
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"{index!r} is not an array index")
    array = _job_ref(array_id)
    if "[" in array:
        raise ValueError(f"{array} is an element, not an array")
    return f"{array}[{index}]"


_JOB_REF = re.compile(r"[0-9]+(\[[0-9]+\])?")


def _job_ref(job_id: Any) -> str:
    """A job as the API's paths name it: ``"12"``, or an array element's ``"12[3]"``."""
    if isinstance(job_id, Mapping):  # a job or a submit() entry
        job_id = job_id["id"]
    if isinstance(job_id, bool) or not isinstance(job_id, (int, str)):
        raise TypeError(f"a job id is an int or a str such as '12[3]', not {type(job_id).__name__}")
    text = str(job_id)
    if not _JOB_REF.fullmatch(text):
        if isinstance(job_id, int):
            raise ValueError(f"{job_id} is not a job id")
        raise TypeError(f"'{job_id}' is not a job id (12) or an array element (12[3])")
    return text


def _job_path(job_id: Any) -> str:
    return "/v1/jobs/" + urllib.parse.quote(_job_ref(job_id), safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _retry_delay(answer: _Answer, default: float) -> float:
    """Retry-After, and up to half again at random: the clients an overload
    turned away do not all come back in the same instant (docs/security.md)."""
    delay = parse_retry_after(answer.headers.get("retry-after"))
    delay = max(default if delay is None else delay, 0.2)
    return delay * random.uniform(1.0, 1.5)


def _endpoint_of(location: str) -> Optional[config.Endpoint]:
    """The replica a redirect names (its scheme, host and port)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    try:
        return config.parse_endpoint(f"{parts.scheme}://{parts.netloc}")
    except ConfigError:
        return None


def _error_of(method: str, path: str, answer: _Answer, source: Optional[str]) -> ApiError:
    text = answer.body.decode("utf-8", errors="replace")
    message = text.strip() or f"HTTP {answer.status}"
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            message = parsed["error"]
    except ValueError:
        pass
    return error_for(answer.status, message, method=method, path=path, headers=answer.headers, source=source)


def _unreachable(endpoint: config.Endpoint, reason: Any, timeout: float) -> Unreachable:
    if isinstance(reason, (socket.timeout, TimeoutError)):
        why = f"timed out after {timeout:g} s"
    else:
        why = getattr(reason, "reason", None) or getattr(reason, "strerror", None) or str(reason)
        if isinstance(reason, ssl.SSLCertVerificationError):
            why = f"TLS handshake failed: certificate verify failed: {reason.verify_message}"
        elif isinstance(reason, ssl.SSLError):
            why = f"TLS handshake failed: {reason.reason or reason}"
    hint = (" (does ca_file or $TESSERA_CA_FILE name the CA that signed the server's certificate?)"
            if isinstance(reason, ssl.SSLError) else " (is `tessera server` or `tessera up` running?)")
    return Unreachable(f"cannot reach the Tessera server at {endpoint}: {why}{hint}")


def _submission(spec: Spec) -> "tuple[bytes, str, Optional[str]]":
    """The body, its Content-Type and its source for error positions (`ApiError.source`)."""
    if isinstance(spec, Mapping):
        return json.dumps(spec, ensure_ascii=False).encode("utf-8"), "application/json", ""
    if isinstance(spec, (list, tuple)):
        if not spec or not all(isinstance(d, Mapping) for d in spec):
            raise TypeError("a list to submit holds Job documents as dicts")
        if len(spec) == 1:
            return _submission(spec[0])
        # JSON is YAML: several documents in one YAML stream, accepted together or not at all.
        text = "\n---\n".join(json.dumps(d, ensure_ascii=False) for d in spec) + "\n"
        return text.encode("utf-8"), "application/yaml", ""
    if isinstance(spec, bytes):
        spec = spec.decode("utf-8")
    if isinstance(spec, str) and ("\n" in spec or spec.lstrip().startswith("{")):
        return spec.encode("utf-8"), _content_type(spec), None
    if isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise FileNotFoundError(e.errno, f"cannot read the job file {path}: {e.strerror}", path) from e
        return data, ("application/json" if path.endswith(".json") else "application/yaml"), path
    raise TypeError(f"cannot submit a {type(spec).__name__}: give a dict, YAML or JSON text, or a file path")


def _content_type(text: str) -> str:
    # A JSON object gets the server's JSON syntax check (precise messages); the rest is read as YAML.
    return "application/json" if text.lstrip().startswith("{") else "application/yaml"
