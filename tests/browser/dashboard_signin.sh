#!/usr/bin/env bash
# The dashboard on a server with access control (docs/security.md), in
# headless Chromium: it asks for a token, says why a bad one is refused,
# shows a user only that user's jobs, a viewer every job, and signs out.
#   dashboard_signin.sh TESSERA_BINARY SCREENSHOT_DIR
source "$(dirname "$0")/../e2e/lib.sh" "$1"
SHOTS=$(realpath -m "${2:-$WORK}")
mkdir -p "$SHOTS"
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "python3-selenium is missing: scripts/install-deps.sh installs it"

start_server --auth --admin-token-file "$WORK/admin.token"
export TESSERA_TOKEN_FILE=$WORK/admin.token
"$TESSERA" queues set team-a --guaranteed 1 --members alice >/dev/null
"$TESSERA" queues set team-b --guaranteed 1 --members bob >/dev/null
alice=$("$TESSERA" tokens create --user alice --role user 2>/dev/null)
bob=$("$TESSERA" tokens create --user bob --role user 2>/dev/null)
carol=$("$TESSERA" tokens create --user carol --role viewer 2>/dev/null)
TESSERA_TOKEN=$alice "$TESSERA" submit --name alice-train --queue team-a --gpus 1 -- sleep 600 >/dev/null
TESSERA_TOKEN=$bob "$TESSERA" submit --name bob-eval --queue team-b --gpus 1 -- sleep 600 >/dev/null

/usr/bin/python3 "$(dirname "$0")/dashboard_signin_test.py" --server "$SERVER_URL" --screenshots "$SHOTS" \
  --alice "$alice" --carol "$carol"
