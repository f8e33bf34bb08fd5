#!/usr/bin/env python3
"""Drives a command on a pseudo-terminal, as a user at a keyboard would.

usage: pty_session.py SECONDS STEP... -- COMMAND...
Steps, in order: "expect:TEXT" waits until TEXT has appeared in the output
(since the last expect); "send:TEXT" types TEXT (\\n is Enter, \\x04 is ^D);
"hangup" kills the command (the user's laptop closed). Exits with the
command's exit code, or 99 with what it saw when a step timed out.
"""
import os
import pty
import select
import signal
import sys
import time


def main():
    seconds = float(sys.argv[1])
    split = sys.argv.index("--")
    steps, command = sys.argv[2:split], sys.argv[split + 1:]
    deadline = time.monotonic() + seconds
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    seen = b""
    cursor = 0

    def read_some(timeout):
        nonlocal seen
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(fd, 4096)
        except OSError:
            return False
        seen += data
        return bool(data)

    def give_up(why):
        sys.stderr.write("pty_session: %s\n--- output so far ---\n%s\n" % (why, seen.decode(errors="replace")))
        os.kill(pid, signal.SIGKILL)
        sys.exit(99)

    for step in steps:
        kind, _, text = step.partition(":")
        text = text.encode().decode("unicode_escape").encode()
        if kind == "expect":
            while seen.find(text, cursor) < 0:
                if time.monotonic() > deadline:
                    give_up("timed out waiting for %r" % text)
                if not read_some(0.1) and seen.find(text, cursor) < 0:
                    give_up("the command ended before %r" % text)
            cursor = seen.find(text, cursor) + len(text)
        elif kind == "send":
            os.write(fd, text)
        elif kind == "hangup":
            os.kill(pid, signal.SIGKILL)
        else:
            give_up("unknown step %r" % step)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            give_up("timed out waiting for the command to exit")
        read_some(0.1)
    while read_some(0):
        pass
    sys.stdout.write(seen.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
