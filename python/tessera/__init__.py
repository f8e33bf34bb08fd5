"""A Python client for Tessera's REST API (docs/python.md), standard library only.

    import tessera
    client = tessera.Client()            # $TESSERA_SERVER, $TESSERA_TOKEN_FILE, $TESSERA_CA_FILE, as the CLI
    [job] = client.submit("train.yaml")
    client.wait(job["id"], timeout=3600)
    print(client.logs(job["id"]))
"""

from .client import ACTIVE_STATES, ENDED_STATES, Client, element
from .errors import (ApiError, BadRequest, ConfigError, Conflict, Forbidden, Gone, Infeasible, NotFound, RateLimited,
                     ServerError, TesseraError, TooLarge, Unauthorized, Unavailable, Unreachable, WaitTimeout,
                     WatchReset)

__version__ = "0.1.0"

__all__ = [
    "Client", "ACTIVE_STATES", "ENDED_STATES", "element",
    "TesseraError", "ConfigError", "Unreachable", "WaitTimeout", "WatchReset",
    "ApiError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Gone", "TooLarge", "Infeasible",
    "RateLimited", "Unavailable", "ServerError",
]
