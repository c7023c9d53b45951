"""Settings come from `REDSTRING_*` variables; constructor values win."""

from __future__ import annotations

import importlib.util
import re
import socket
import sys
import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError

from redstring.adapters.embeddings import HashingEmbeddingProvider
from redstring.adapters.embeddings.static import StaticEmbeddingProvider
from redstring.api import server
from redstring.api.api_keys import KeyFileContent, write_key_file
from redstring.api.cli import main
from redstring.api.settings import AuthMode, Backend, EmbeddingsKind, Settings
from redstring.api.startup import check_settings
from redstring.composition.client import embeddings_from_settings
from redstring.composition.embedding_choice import LOCAL_LIBRARY


def test_defaults_serve_memory_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BACKEND", "HOST", "PORT", "DEMO"):
        monkeypatch.delenv(f"REDSTRING_{name}", raising=False)
    settings = Settings()
    assert (settings.backend, settings.host, settings.port) == (Backend.MEMORY, "127.0.0.1", 8000)
    assert settings.demo is False


def test_the_default_embeddings_are_the_static_provider_at_its_own_dimension() -> None:
    settings = Settings()
    assert settings.embeddings is EmbeddingsKind.STATIC
    assert settings.embedding_dimension is None
    provider = embeddings_from_settings(settings)
    assert isinstance(provider, StaticEmbeddingProvider)
    assert provider.dimension == 384
    hashing = embeddings_from_settings(Settings(embeddings="hashing"))
    assert isinstance(hashing, HashingEmbeddingProvider)
    assert hashing.dimension == 384


def test_environment_sets_limits_and_arguments_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDSTRING_MAX_K", "7")
    monkeypatch.setenv("REDSTRING_PORT", "9001")
    monkeypatch.setenv("REDSTRING_DEMO", "true")
    settings = Settings(port=9002)
    assert settings.limits().max_k == 7
    assert settings.port == 9002
    assert settings.demo is True


def test_neo4j_needs_a_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "neo4j")
    monkeypatch.delenv("REDSTRING_NEO4J_PASSWORD", raising=False)
    with pytest.raises(ValidationError, match="REDSTRING_NEO4J_PASSWORD"):
        Settings()


def test_bad_settings_are_reported_by_the_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "cassandra")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "backend" in err
    assert "errors.pydantic.dev" not in err


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"REDSTRING_PORT": "abc"},
            "bad settings: port (REDSTRING_PORT): Input should be a valid integer, unable to "
            "parse string as an integer",
        ),
        (
            {"REDSTRING_HOST": ""},
            "bad settings: host (REDSTRING_HOST): must not be empty (empty listens on every "
            "interface): give 127.0.0.1, or 0.0.0.0 to listen on all",
        ),
        (
            {"REDSTRING_AUTH": "jwt"},
            "bad settings: REDSTRING_AUTH=jwt needs exactly one of REDSTRING_JWT_SECRET (HS256) "
            "and REDSTRING_JWT_JWKS (RS256: a JWKS file or an http(s) URL)",
        ),
    ],
)
def test_bad_settings_are_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    message: str,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    assert _serve_refused(monkeypatch, capsys, variables) == message + "\n"


HINT = "{} names no setting; did you mean {}?"


@pytest.mark.parametrize(
    ("variables", "reason"),
    [
        # Refused by the settings' own validation: the port's value went to a misspelled
        # variable, and the refusal is of another one.
        (
            {"REDSTRING_PROT": "8123", "REDSTRING_PORT": "abc"},
            "port (REDSTRING_PORT): Input should be a valid integer, unable to parse string "
            "as an integer; " + HINT.format("REDSTRING_PROT", "REDSTRING_PORT"),
        ),
        # Refused by the checks after them: the secret, misspelled, is missing.
        (
            {"REDSTRING_AUTH": "jwt", "REDSTRING_JWT_SECRT": "s" * 32},
            "REDSTRING_AUTH=jwt needs exactly one of REDSTRING_JWT_SECRET (HS256) and "
            "REDSTRING_JWT_JWKS (RS256: a JWKS file or an http(s) URL); "
            + HINT.format("REDSTRING_JWT_SECRT", "REDSTRING_JWT_SECRET"),
        ),
    ],
)
def test_a_refusal_names_the_misspelled_variables_that_may_be_its_cause(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    reason: str,
) -> None:
    """The warning of a variable that names no setting comes once the settings are
    taken: a refusal, which a misspelling often causes, must say it itself."""
    monkeypatch.setenv("COLUMNS", "40")
    assert _serve_refused(monkeypatch, capsys, variables) == f"bad settings: {reason}\n"


def _serve_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    *arguments: str,
    status: int = 2,
) -> str:
    """What `redstring serve *arguments` says on stderr with `variables` set, having
    refused to start with `status` (the server never started)."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(server, "serve", lambda settings: pytest.fail("the server was started"))
    assert main(["serve", *arguments]) == status
    return capsys.readouterr().err


SECONDS_SETTINGS = [
    "neo4j_outage_retry",
    "neo4j_transaction_timeout",
    "embedding_timeout",
    "readiness_timeout",
    "request_timeout",
    "header_timeout",
    "keep_alive_timeout",
]
COMMANDS = pytest.mark.parametrize(
    "command",
    [("serve",), ("load", "-", "--tenant", str(uuid.uuid4())), ("rekey", "--all-tenants")],
    ids=["serve", "load", "rekey"],
)


def test_the_seconds_settings_are_all_checked() -> None:
    """Every setting of seconds is among those `test_seconds_that_cannot_be_used...` runs."""
    floats = [name for name, field in Settings.model_fields.items() if field.annotation is float]
    assert sorted(floats) == sorted(SECONDS_SETTINGS)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("inf", "Input should be a finite number"),
        ("nan", "Input should be a finite number"),
        ("1e20", "Input should be less than or equal to 1000000000"),
    ],
)
@pytest.mark.parametrize("setting", SECONDS_SETTINGS)
@COMMANDS
def test_seconds_that_cannot_be_used_are_bad_settings_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
    setting: str,
    value: str,
    reason: str,
) -> None:
    """`REDSTRING_NEO4J_TRANSACTION_TIMEOUT=1e20` was taken, and failed in the driver,
    `OverflowError: Python int too large to convert to C long` (a traceback from
    `serve`); `inf` failed `serve`'s start later, naming no variable (status 1)."""
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(server, "serve", lambda settings: pytest.fail("the server was started"))
    variables = {
        "REDSTRING_BACKEND": "neo4j",
        "REDSTRING_NEO4J_PASSWORD": "x",
        "REDSTRING_NEO4J_URI": "bolt://127.0.0.1:9",  # never reached
        f"REDSTRING_{setting.upper()}": value,
    }
    for name, given in variables.items():
        monkeypatch.setenv(name, given)
    assert main(list(command)) == 2
    variable = f"REDSTRING_{setting.upper()}"
    assert " ".join(capsys.readouterr().err.split()) == (
        f"bad settings: {setting} ({variable}): {reason}"
    )


def test_the_longest_seconds_a_setting_takes_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    for setting in SECONDS_SETTINGS:
        monkeypatch.setenv(f"REDSTRING_{setting.upper()}", "1e9")
    settings = Settings()
    assert {getattr(settings, setting) for setting in SECONDS_SETTINGS} == {1e9}


NO_NEO4J_URI = (
    "bad settings: neo4j_uri (REDSTRING_NEO4J_URI): not a Neo4j URI such as "
    "bolt://HOST:7687: {why}\n"
)
SCHEMES = "bolt, bolt+s, bolt+ssc, neo4j, neo4j+s, neo4j+ssc"
# A path was ignored, the default database served in place of the one it named.
PATH_REFUSED = (
    "it takes no path: a database is named apart, by REDSTRING_NEO4J_DATABASE "
    "(Redstring.neo4j's database)"
)


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("foo://x", f"its scheme 'foo' is none of {SCHEMES}"),
        ("http://127.0.0.1:7474", f"its scheme 'http' is none of {SCHEMES}"),
        ("127.0.0.1:7687", f"it has no scheme, one of {SCHEMES}"),
        ("bolt://127.0.0.1:notaport", "its port is no number from 1 to 65535"),
        ("bolt://127.0.0.1:0", "its port is no number from 1 to 65535"),
        ("neo4j://127.0.0.1:70000", "its port is no number from 1 to 65535"),
        ("bolt://:7687", "it names no host"),
        ("bolt://neo4j:secret@127.0.0.1", "a user or password is given apart, not in it"),
        ("bolt://127.0.0.1?policy=eu", "a bolt URI takes no query (a neo4j one's routing context)"),
        ("bolt://127.0.0.1:7687/nosuchdb", PATH_REFUSED),
        ("neo4j://127.0.0.1/neo4j/", PATH_REFUSED),
        ("bolt://127.0.0.1:7687#frag", "it takes no fragment (#...)"),
        ("neo4j://127.0.0.1:7687?policy=eu#", "it takes no fragment (#...)"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [("serve",), ("load", "-", "--tenant", str(uuid.uuid4())), ("rekey", "--all-tenants")],
    ids=["serve", "load", "rekey"],
)
def test_a_uri_neo4j_cannot_take_is_refused_as_bad_settings(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
    uri: str,
    why: str,
) -> None:
    """The driver refused it at start: a traceback of its `ConfigurationError` (a scheme),
    or a `ValueError` raised while resolving the address (a port)."""
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(server, "serve", lambda settings: pytest.fail("the server was started"))
    variables = {
        "REDSTRING_BACKEND": "neo4j",
        "REDSTRING_NEO4J_PASSWORD": "x",
        "REDSTRING_NEO4J_URI": uri,
    }
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main(list(command)) == 2
    assert capsys.readouterr().err == NO_NEO4J_URI.format(why=why)


@pytest.mark.parametrize(
    ("base_url", "why"),
    [
        (
            "http://user:s3cretpw@127.0.0.1:9/v1",
            "a user or password is given apart, not in it: put the API key in the environment "
            "variable REDSTRING_EMBEDDING_API_KEY_ENV names (OPENAI_API_KEY by default); it is "
            "sent as Authorization: Bearer",
        ),
        (
            "http://127.0.0.1:9/v1?api_key=s3cretpw",
            "it takes no query or fragment (/embeddings is appended to its path)",
        ),
    ],
)
@pytest.mark.parametrize(
    "command",
    [("serve",), ("load", "-", "--tenant", str(uuid.uuid4())), ("rekey", "--all-tenants")],
    ids=["serve", "load", "rekey"],
)
def test_an_embedding_base_url_holding_a_secret_is_refused_as_bad_settings(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
    base_url: str,
    why: str,
) -> None:
    """A password in it was sent, and written to the log with every embedding request and
    in the provider's refusals, as a Neo4j URI's would be: it is refused as that one is,
    without repeating it."""
    monkeypatch.setattr(server, "serve", lambda settings: pytest.fail("the server was started"))
    variables = {
        "REDSTRING_EMBEDDINGS": "openai",
        "REDSTRING_EMBEDDING_BASE_URL": base_url,
        "REDSTRING_EMBEDDING_MODEL": "m",
        "REDSTRING_EMBEDDING_DIMENSION": "8",
    }
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main(list(command)) == 2
    err = capsys.readouterr().err
    assert " ".join(err.split()) == (
        "bad settings: embedding_base_url (REDSTRING_EMBEDDING_BASE_URL): not a base URL "
        f"such as http://127.0.0.1:11434/v1: {why}"
    )
    assert "s3cretpw" not in err


@pytest.mark.parametrize(
    "uri",
    [
        "bolt://127.0.0.1:7687",
        "bolt://127.0.0.1",
        "BOLT://127.0.0.1:7687",
        "bolt+s://db.example.com:7687",
        "bolt+ssc://db.example.com",
        "neo4j://[::1]:7687",
        "neo4j+s://abcd1234.databases.neo4j.io",
        "neo4j+ssc://db.example.com:7687?policy=europe",
        "bolt://127.0.0.1:7687/",
    ],
)
def test_every_uri_the_driver_takes_is_a_setting(uri: str) -> None:
    assert Settings(neo4j_uri=uri).neo4j_uri == uri


def test_a_port_in_use_is_said_before_the_server_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        arguments = ("--host", "127.0.0.1", "--port", str(port))
        err = _serve_refused(monkeypatch, capsys, {}, *arguments, status=1)
    assert err.startswith(f"error: cannot listen on 127.0.0.1 port {port}: Address already in use")
    assert "--port or REDSTRING_PORT" in err


def test_sentence_transformers_without_the_local_extra_is_refused_before_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found only in a worker's start-up, it stopped `--workers 2` with status 0."""
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == LOCAL_LIBRARY else found(name, *args),
    )
    monkeypatch.delitem(sys.modules, LOCAL_LIBRARY, raising=False)
    variables = {
        "REDSTRING_EMBEDDINGS": "sentence-transformers",
        "REDSTRING_EMBEDDING_MODEL": "all-MiniLM-L6-v2",
    }
    assert _serve_refused(monkeypatch, capsys, variables, "--workers", "2") == (
        "bad settings: the 'sentence-transformers' embedding provider needs the local extra: "
        "pip install 'redstring[local]'\n"
    )


def test_the_neo4j_backend_without_its_extra_is_refused_before_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found only in the app's start-up, it was a traceback ending in
    `ModuleNotFoundError: No module named 'neo4j'` (uvicorn's status 3)."""
    monkeypatch.setitem(sys.modules, "neo4j", None)  # as the import system blocks a module
    variables = {"REDSTRING_BACKEND": "neo4j", "REDSTRING_NEO4J_PASSWORD": "x"}
    assert _serve_refused(monkeypatch, capsys, variables, "--workers", "2") == (
        "bad settings: the neo4j backend needs the neo4j extra: pip install 'redstring[neo4j]'\n"
    )


def test_a_metrics_folder_that_is_none_is_refused_before_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """prometheus-client failed in each worker's start-up, and uvicorn started it again."""
    missing = tmp_path / "metrics"
    variables = {"PROMETHEUS_MULTIPROC_DIR": str(missing)}
    assert _serve_refused(monkeypatch, capsys, variables, "--workers", "2") == (
        f"bad settings: PROMETHEUS_MULTIPROC_DIR must name a folder the server may write, "
        f"got {str(missing)!r}\n"
    )


def test_a_host_that_cannot_be_bound_is_said_without_the_port_in_use_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ("--host", "no-such-host.invalid", "--port", "8000")
    err = _serve_refused(monkeypatch, capsys, {"REDSTRING_AUTH": "none"}, *arguments, status=1)
    assert err.startswith("error: cannot listen on no-such-host.invalid port 8000: ")
    assert "another server" not in err


def test_log_levels_are_taken_in_any_case() -> None:
    assert Settings(log_level="DEBUG").log_level == "debug"  # type: ignore[arg-type]


def test_every_setting_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        assert f"`REDSTRING_{name.upper()}`" in docs, name


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"REDSTRING_EMBEDDINGS": "openai"}, "needs a model"),
        (
            {"REDSTRING_EMBEDDINGS": "openai", "REDSTRING_EMBEDDING_MODEL": "m"},
            "needs a base_url",
        ),
        ({"REDSTRING_EMBEDDING_QUERY_PROMPT": "query: "}, "sentence-transformers only"),
        ({"REDSTRING_EMBEDDING_DIMENSION": "256"}, "have 384 dimensions"),
        (
            {
                "REDSTRING_EMBEDDINGS": "openai",
                "REDSTRING_EMBEDDING_MODEL": "m",
                "REDSTRING_EMBEDDING_BASE_URL": "http://127.0.0.1:9/v1",
            },
            "needs a dimension",
        ),
    ],
)
def test_an_incomplete_provider_is_refused_before_the_server_starts(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    message: str,
) -> None:
    err = _serve_refused(monkeypatch, capsys, variables)
    assert message in err
    assert "Traceback" not in err


def test_the_json_nesting_cap_stays_below_the_parsers_recursion() -> None:
    assert Settings(max_json_depth=256).limits().max_json_depth == 256
    with pytest.raises(ValidationError, match="max_json_depth"):
        Settings(max_json_depth=257)


@pytest.mark.parametrize(
    ("variables", "arguments", "message"),
    [
        (
            {},
            ("--host", "0.0.0.0"),
            "bad settings: host 0.0.0.0 is reachable from other machines, and REDSTRING_AUTH is "
            "not set (none, the default, lets every caller read and write every tenant): set "
            "REDSTRING_AUTH=apikey or jwt (docs/security.md), or REDSTRING_AUTH=none to serve "
            "them all without authentication\n",
        ),
        (
            {"REDSTRING_HOST": "192.0.2.7"},
            (),
            "bad settings: host 192.0.2.7 is reachable",
        ),
        (
            {"REDSTRING_API_KEYS_FILE": "keys.json"},
            (),
            "bad settings: REDSTRING_API_KEYS_FILE is set, but REDSTRING_AUTH is none, so it "
            "would be ignored and every caller let in: set REDSTRING_AUTH=apikey\n",
        ),
        (
            {"REDSTRING_AUTH": "none", "REDSTRING_JWT_SECRET": "s" * 40},
            (),
            "bad settings: REDSTRING_JWT_SECRET is set, but REDSTRING_AUTH is none",
        ),
    ],
)
def test_a_server_that_would_let_every_caller_in_by_mistake_is_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    arguments: tuple[str, ...],
    message: str,
) -> None:
    """No authentication is the default for a demo on a loopback address; on an address
    others can reach it has to be asked for, and a credential setting means it was not."""
    assert _serve_refused(monkeypatch, capsys, variables, *arguments).startswith(message)


JWT_SECRET = "j" * 40


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"REDSTRING_AUTH": "apikey", "REDSTRING_JWT_SECRET": JWT_SECRET},
            "bad settings: REDSTRING_JWT_SECRET is set, but REDSTRING_AUTH is apikey, so it "
            "would be ignored and a caller sending a JWT refused: unset it, or set "
            "REDSTRING_AUTH=jwt\n",
        ),
        (
            {"REDSTRING_AUTH": "apikey", "REDSTRING_JWT_JWKS": "http://127.0.0.1:9/jwks.json"},
            "bad settings: REDSTRING_JWT_JWKS is set, but REDSTRING_AUTH is apikey, so it "
            "would be ignored and a caller sending a JWT refused: unset it, or set "
            "REDSTRING_AUTH=jwt\n",
        ),
        (
            {"REDSTRING_AUTH": "jwt", "REDSTRING_JWT_SECRET": JWT_SECRET},
            "bad settings: REDSTRING_API_KEYS_FILE is set, but REDSTRING_AUTH is jwt, so it "
            "would be ignored and a caller sending an API key refused: unset it, or set "
            "REDSTRING_AUTH=apikey\n",
        ),
    ],
    ids=["apikey-with-jwt-secret", "apikey-with-jwt-jwks", "jwt-with-api-keys-file"],
)
def test_a_credential_setting_of_the_other_mode_is_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    variables: dict[str, str],
    message: str,
) -> None:
    """A key file that can be read is given in every case, and a secret long enough in
    jwt mode: only the setting of the mode not in force is wrong. Ignored, it went
    unsaid, and a client still sending the credential of the mode switched from got
    401s with nothing in the log."""
    keys = tmp_path / "keys.json"
    write_key_file(keys, KeyFileContent())
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("REDSTRING_API_KEYS_FILE", str(keys))
    assert _serve_refused(monkeypatch, capsys, variables) == message


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_no_authentication_is_the_default_on_a_loopback_address(host: str) -> None:
    check_settings(Settings(host=host))


def test_no_authentication_said_outright_is_taken_on_any_address() -> None:
    check_settings(Settings(host="0.0.0.0", auth=AuthMode.NONE))


@pytest.mark.parametrize(
    ("command", "option", "default"),
    [
        ("serve", "--host", "REDSTRING_HOST, else 127.0.0.1"),
        ("serve", "--port", "REDSTRING_PORT, else 8000"),
        ("serve", "--workers", "REDSTRING_WORKERS, else 1"),
        ("serve", "--demo", "REDSTRING_DEMO, else off"),
        ("schema", "--federation", "REDSTRING_FEDERATION, else off"),
    ],
)
def test_an_options_help_names_the_setting_it_falls_back_to(
    command: str,
    option: str,
    default: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A setting applies when its option is left out: a bare `(default 8000)` is
    wrong wherever `REDSTRING_PORT` is set."""
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    entries = re.split(r"\n(?=  -)", capsys.readouterr().out)  # an option's lines each
    [entry] = [entry for entry in entries if entry.lstrip().startswith(option)]
    assert " ".join(entry.split()).endswith(f"(default: {default})")
