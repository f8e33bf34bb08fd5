#!/usr/bin/env bash
# The Python client (python/, docs/python.md) against the real server:
# installed with pip into a throwaway venv, offline; its unit tests; then,
# on a plain server with two fake-GPU agents, submit from a dict and from a
# YAML file, get, list, wait, logs (followed too), events, cancel, and the
# API's errors as exceptions (400 with the server's message, 404, 409, 422);
# then on `tessera up` (TLS from its own CA, access control on) the same
# client with the token file and the CA file, refusals (401, an untrusted
# CA, 403), and the sweep example of docs/python.md.
source "$(dirname "$0")/lib.sh" "$1"
REPO=$(cd "$E2E_DIR/../.." && pwd)
export PYTHONDONTWRITEBYTECODE=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 E2E_MARKER="e2e-$$" TMPDIR=$WORK

# pip install ./python, as docs/python.md says, offline: the build backend
# (setuptools, wheel) comes from Debian's packages through the system site,
# so the interpreter is one that has them (Debian's python3, even when
# another python3 comes first on the PATH).
PYTHON=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import setuptools, wheel, venv, ensurepip' 2>/dev/null; then PYTHON=$candidate; break; fi
done
[ -n "$PYTHON" ] || fail "no python3 with setuptools, wheel and venv (scripts/install-deps.sh installs python3-pip and python3-venv)"
"$PYTHON" -m venv --system-site-packages "$WORK/venv" >"$WORK/venv.log" 2>&1 ||
  fail "$PYTHON -m venv failed (scripts/install-deps.sh installs python3-venv): $(tail -n 3 "$WORK/venv.log")"
cp -r "$REPO/python" "$WORK/python-src"  # pip builds in the source tree: leave the repository's alone
rm -rf "$WORK/python-src/build" "$WORK/python-src"/*.egg-info
"$WORK/venv/bin/python" -m pip install --no-build-isolation "$WORK/python-src" >"$WORK/pip.log" 2>&1 ||
  fail "pip install ./python failed (python3-setuptools and python3-wheel: scripts/install-deps.sh): $(tail -n 5 "$WORK/pip.log")"
PY=$WORK/venv/bin/python
cd "$WORK"  # nothing on the path but the installed package
where=$("$PY" -c 'import tessera; print(tessera.__file__)')
[[ "$where" == "$WORK/venv/"* ]] || fail "the tests import the installed package, not $where"
log "installed tessera-client $("$PY" -c 'import tessera; print(tessera.__version__)') into a venv"

"$PY" -m unittest discover -s "$REPO/python/tests" >"$WORK/unittest.log" 2>&1 ||
  fail "the client's unit tests: $(tail -n 30 "$WORK/unittest.log")"
log "unit tests: $(tail -n 1 "$WORK/unittest.log")"

# A server without access control, plain HTTP: the client configured by $TESSERA_SERVER alone.
start_server
start_agent n1 2
start_agent n2 2
wait_until 20 nodes_ready 2
"$PY" "$REPO/python/tests/e2e_real_server.py" plain || fail "the Python client against a plain server"
kill -9 "${AGENT_PID[n1]}" "${AGENT_PID[n2]}" "$SERVER_PID"

# `tessera up`: TLS from its own CA, access control on, a cluster-admin token file.
start_up 2 2
"$PY" "$REPO/python/tests/e2e_real_server.py" tls "$TESSERA_SERVER" "$TESSERA_TOKEN_FILE" "$TESSERA_CA_FILE" ||
  fail "the Python client against tessera up (TLS, tokens)"
log "the Python client passed against a plain server and tessera up"
