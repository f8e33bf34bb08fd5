"""Where the client finds the server, its token, its CA and the caller: as the CLI does."""

import os
import tempfile
import unittest

from tessera import Client, ConfigError
from tessera import config


class EndpointTest(unittest.TestCase):
    def test_forms_the_cli_reads(self):
        self.assertEqual(config.parse_endpoint("https://10.0.0.5:7070"), config.Endpoint("10.0.0.5", 7070, True))
        self.assertEqual(config.parse_endpoint("http://127.0.0.1:7070/"), config.Endpoint("127.0.0.1", 7070, False))
        self.assertEqual(config.parse_endpoint("localhost:7070"), config.Endpoint("localhost", 7070, False))
        self.assertEqual(config.parse_endpoint("https://gpu-head:443").url, "https://gpu-head:443")

    def test_malformed(self):
        for bad, why in [("gpu-head", "is not HOST:PORT"), (":7070", "is not HOST:PORT"), ("h:0", "bad port"),
                         ("h:70000", "bad port"), ("h:x", "bad port"), ("https://h:", "bad port")]:
            with self.assertRaises(ConfigError) as caught:
                config.parse_endpoint(bad)
            self.assertIn(why, str(caught.exception), bad)

    def test_servers(self):
        self.assertEqual(config.resolve_servers(None, {}), [config.Endpoint("127.0.0.1", 7070, False)])
        env = {"TESSERA_SERVER": "https://a:1,https://b:2"}
        self.assertEqual([e.url for e in config.resolve_servers(None, env)], ["https://a:1", "https://b:2"])
        self.assertEqual([e.url for e in config.resolve_servers("c:3", env)], ["http://c:3"])  # the argument wins
        self.assertEqual(config.resolve_servers(None, {"TESSERA_SERVER": ""})[0].port, 7070)  # empty: the default


class TokenTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_precedence(self):
        arg_file = self.write("arg.token", "tsr_arg\n")
        env_file = self.write("env.token", "tsr_envfile\nsecond line\n")
        home = self.dir.name
        self.write(".config/tessera/token", "tsr_home\n")
        env = {"TESSERA_TOKEN": "tsr_env", "TESSERA_TOKEN_FILE": env_file}
        self.assertEqual(config.resolve_token("tsr_x", arg_file, env, home), "tsr_x")
        self.assertEqual(config.resolve_token(None, arg_file, env, home), "tsr_arg")
        self.assertEqual(config.resolve_token(None, None, env, home), "tsr_env")  # $TESSERA_TOKEN wins, as in the CLI
        self.assertEqual(config.resolve_token(None, None, {"TESSERA_TOKEN_FILE": env_file}, home), "tsr_envfile")
        self.assertEqual(config.resolve_token(None, None, {}, home), "tsr_home")
        self.assertIsNone(config.resolve_token(None, None, {}, os.path.join(home, "nobody")))

    def test_unreadable_file_is_an_error(self):
        with self.assertRaises(ConfigError) as caught:
            config.resolve_token(None, os.path.join(self.dir.name, "missing"), {})
        self.assertIn("cannot read a token from", str(caught.exception))
        empty = self.write("empty", "\n")
        with self.assertRaises(ConfigError):
            config.resolve_token(None, empty, {})

    def test_crlf_and_blanks_are_not_part_of_the_token(self):
        self.assertEqual(config.resolve_token(None, self.write("t", "  tsr_abc\r\n"), {}), "tsr_abc")


class ClientConfigTest(unittest.TestCase):
    def test_client_from_the_environment(self):
        with tempfile.NamedTemporaryFile("w", suffix=".token") as token:
            token.write("tsr_fromfile\n")
            token.flush()
            env = {"TESSERA_SERVER": "http://10.1.2.3:7000", "TESSERA_TOKEN_FILE": token.name, "USER": "alice",
                   "TESSERA_CA_FILE": "/nonexistent/ca.crt"}
            client = Client(env=env)
            self.assertEqual(client.server, "http://10.1.2.3:7000")
            self.assertEqual(client.token, "tsr_fromfile")
            self.assertEqual(client.user, "alice")
            self.assertEqual(client.ca_file, "/nonexistent/ca.crt")  # only read for an https server
            self.assertNotIn("tsr_fromfile", repr(client))

    def test_user(self):
        self.assertEqual(config.resolve_user("bob", {"USER": "alice"}), "bob")
        self.assertEqual(config.resolve_user(None, {"USER": "alice"}), "alice")
        self.assertTrue(config.resolve_user(None, {}))  # the account's name

    def test_https_with_a_missing_ca_file_is_named(self):
        with self.assertRaises(ConfigError) as caught:
            Client("https://127.0.0.1:7070", ca_file="/nonexistent/ca.crt", env={})
        self.assertIn("TLS files", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
