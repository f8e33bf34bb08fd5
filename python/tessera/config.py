"""Where the server is and who the caller is, resolved as the CLI resolves
them (src/cli/api_client.cc, docs/cli.md), with the client's arguments
winning over the environment:

* the server: ``server``, else ``$TESSERA_SERVER``, else
  ``http://127.0.0.1:7070``; several replicas comma-separated;
* the token: ``token``, else the first line of ``token_file``, else
  ``$TESSERA_TOKEN``, else the first line of ``$TESSERA_TOKEN_FILE``, else of
  ``~/.config/tessera/token`` when it exists; none otherwise;
* the CA that signed an https server's certificate: ``ca_file``, else
  ``$TESSERA_CA_FILE``, else the system's trusted CAs; a client certificate
  from ``cert_file``/``key_file`` or ``$TESSERA_CERT_FILE``/``$TESSERA_KEY_FILE``;
* the caller sent as ``X-Tessera-User`` (what a server without access
  control goes by): ``user``, else ``$USER``, else the account's name.

Pure functions of their arguments and an environment mapping, so that they
can be tested without a server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Mapping, Optional

from .errors import ConfigError

DEFAULT_SERVER = "http://127.0.0.1:7070"
DEFAULT_TOKEN_FILE = "~/.config/tessera/token"


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        return ("https://" if self.tls else "http://") + f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """One server address as the CLI reads it: ``https://HOST:PORT``,
    ``http://HOST:PORT``, or ``HOST:PORT`` (plain HTTP); trailing slashes ignored."""
    rest = text.strip()
    tls = False
    if rest.startswith("http://"):
        rest = rest[len("http://"):]
    elif rest.startswith("https://"):
        rest = rest[len("https://"):]
        tls = True
    rest = rest.rstrip("/")
    colon = rest.rfind(":")
    if colon <= 0:
        raise ConfigError(f"server '{text}' is not HOST:PORT")
    digits = rest[colon + 1:]
    if not digits.isdigit() or not 0 < int(digits) <= 65535:
        raise ConfigError(f"server '{text}': bad port")
    return Endpoint(rest[:colon], int(digits), tls)


def resolve_servers(server: Optional[str], env: Mapping[str, str]) -> List[Endpoint]:
    """Every replica of the server, in the order given."""
    text = server if server else (env.get("TESSERA_SERVER") or DEFAULT_SERVER)
    return [parse_endpoint(part) for part in text.split(",")]


def read_token_file(path: str) -> str:
    """The first line of a token file, surrounding blanks removed."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            line = f.readline().strip()
    except OSError as e:
        raise ConfigError(f"token file: cannot read a token from {path}: {e.strerror or e}") from e
    if not line:
        raise ConfigError(f"token file: cannot read a token from {path}: its first line is empty")
    return line


def resolve_token(token: Optional[str], token_file: Optional[str], env: Mapping[str, str],
                  home: Optional[str] = None) -> Optional[str]:
    """The API token, or None when there is none (a server without access control)."""
    if token:
        return token.strip()
    if token_file:
        return read_token_file(token_file)
    if env.get("TESSERA_TOKEN"):
        return env["TESSERA_TOKEN"].strip()
    if env.get("TESSERA_TOKEN_FILE"):
        return read_token_file(env["TESSERA_TOKEN_FILE"])
    home = home if home is not None else env.get("HOME")
    if home:
        default = os.path.join(home, ".config", "tessera", "token")
        if os.path.exists(default):
            return read_token_file(default)
    return None


def resolve_user(user: Optional[str], env: Mapping[str, str]) -> str:
    """The caller's name for X-Tessera-User."""
    if user:
        return user
    if env.get("USER"):
        return env["USER"]
    try:
        import pwd  # not on every platform

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        return "anonymous"


def resolve_file(value: Optional[str], env: Mapping[str, str], name: str) -> Optional[str]:
    """An argument, else the environment variable `name`; None when neither is set."""
    if value:
        return os.path.expanduser(value)
    if env.get(name):
        return os.path.expanduser(env[name])
    return None
