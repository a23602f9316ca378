"""Issue 15 (Medium): one table of secret shapes, applied to every outgoing payload and log.

Unit level: every shape the issue lists is blanked by the shared `redact` (prompts,
embedding inputs) and by the log filter, and ordinary code is left alone. End to end: the
real server over stdio, a remote embedder and an OpenAI provider both on the loopback
server through the real `openai` SDK, a workspace whose `settings.py` holds each shape, and
a grep of every request body and of the debug log for every secret value.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from codeqa_lsp.chunking.secret_rules import secret_content_rule
from codeqa_lsp.config import Settings
from codeqa_lsp.secret_shapes import REDACTED, SHAPES, redact, shapes_found
from codeqa_lsp.server.__main__ import RedactingFilter
from codeqa_lsp.server.__main__ import redact as redact_log
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.reliability.harness import served
from tests.server.workspace import make_workspace

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
DB_PASSWORD = "Zq8-rT3vPw9xLm2"
SLACK = "xoxb-2384729384-2384729384729-Qa8Zr3Tb7Yc1Ud5We9Xf"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
GCP = "AIzaSyD9f8G7h6J5k4L3z2X1c0V9b8N7m6Q5w4E"
AZURE = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
AWS_SESSION = "ASIAQ4X7Z2M9N5B3V8C1"
PRIVATE_BODY = "MIIEpAIBAAKCAQEA3vN8QkYh2cP5rWmZ0aLxTq7Ueb9Jf4Kd1sGh6Vn3Yc8Ro2Mt"
ASSIGNED = "kP9#vL2$wQ7!"

SAMPLES = {
    "jwt": f'SESSION_TOKEN_EXAMPLE_HEADER = "Bearer " + "{JWT}"',
    "url-credentials": f'DATABASE_URL = "postgres://app:{DB_PASSWORD}@db.internal:5432/shop"',
    "slack-token": f'SLACK = "{SLACK}"',
    "stripe-key": f'stripe.api = "{STRIPE}"',
    "gcp-api-key": f'MAPS = "{GCP}"',
    "azure-storage-key": (
        f'CONN = "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={AZURE};"'
    ),
    "github-token": f"token: {GITHUB_PAT}",
    "aws-access-key": f"key = {AWS_SESSION}",
    "private-key": (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_BODY}\n-----END RSA PRIVATE KEY-----"
    ),
    "assigned-secret": f'smtp_password = "{ASSIGNED}"',
}
SECRETS = {
    "jwt": JWT,
    "url-credentials": DB_PASSWORD,
    "slack-token": SLACK,
    "stripe-key": STRIPE,
    "gcp-api-key": GCP,
    "azure-storage-key": AZURE,
    "github-token": GITHUB_PAT,
    "aws-access-key": AWS_SESSION,
    "private-key": PRIVATE_BODY,
    "assigned-secret": ASSIGNED,
}

ORDINARY_CODE = [
    'password = request.form["password"]',
    "token = get_token(user)",
    'commit = "3f786850e387550fdab836ed7e6dc881de23001b"',
    'ID = "123e4567-e89b-12d3-a456-426614174000"',
    'if password == "":',
    "secret_key = settings.SECRET_KEY",
    'url = "https://example.com/api/v1/items"',
    "PASSWORD_MIN_LENGTH = 12",
    'api_key = "changeme"',
]


@pytest.mark.parametrize("shape", sorted(SAMPLES))
def test_each_shape_is_redacted_for_payloads_and_logs(shape: str) -> None:
    text = SAMPLES[shape]
    assert shape in shapes_found(text)
    assert SECRETS[shape] not in redact(text) and REDACTED in redact(text)
    assert SECRETS[shape] not in redact_log(text)


def test_the_table_is_the_only_list() -> None:
    """The scanner, redactor and log filter read the same shapes (the log filter used to miss
    github_pat_, ASIA keys and private-key blocks)."""
    for shape in ("github-token", "aws-access-key", "private-key"):
        assert secret_content_rule(SAMPLES[shape]) == shape
        assert SECRETS[shape] not in redact_log(SAMPLES[shape])
    names = {s.name for s in SHAPES}
    assert set(SAMPLES) <= names


def test_redaction_keeps_context() -> None:
    assert (
        redact(SAMPLES["url-credentials"])
        == 'DATABASE_URL = "postgres://app:[REDACTED]@db.internal:5432/shop"'
    )


@pytest.mark.parametrize("line", ORDINARY_CODE)
def test_ordinary_code_is_left_alone(line: str) -> None:
    assert redact(line) == line
    assert secret_content_rule(line) is None


def test_lower_confidence_shapes_do_not_drop_files() -> None:
    """A JWT in a test fixture must not take the file out of the index: it is redacted instead."""
    for shape in ("jwt", "url-credentials", "slack-token", "assigned-secret"):
        assert secret_content_rule(SAMPLES[shape]) is None


def test_api_key_of_the_wrong_type_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    key = "cq-live-9d1e-WRONGTYPE-77ab"
    _settings, problems = Settings.from_wire(
        {"apiKey": [key], "baseUrl": f"https://user:{key}@gw.example/v1"}
    )
    assert problems and key not in " ".join(problems)
    record = logging.LogRecord(
        "httpx",
        logging.INFO,
        __file__,
        1,
        'HTTP Request: POST %s "HTTP/1.1 200 OK"',
        (f"https://{key}@gw.example/v1/chat/completions",),
        None,
    )
    RedactingFilter().filter(record)
    assert key not in record.getMessage()


# These keep a whole file out of the index (tests/reliability/test_secrets_e2e.py); here they
# travel in the question instead, which only the prompt redactor can stop.
HIGH_CONFIDENCE = ("github-token", "aws-access-key", "private-key")
SETTINGS_PY = "\n".join(
    [
        '"""Runtime settings for the shop service."""',
        "",
        *[line for shape, line in SAMPLES.items() if shape not in HIGH_CONFIDENCE],
        "",
        "",
        "def database_url():",
        '    """Where the shop database lives (used by load_settings)."""',
        "    return DATABASE_URL",
        "",
    ]
)


async def test_no_secret_shape_leaves_the_machine(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    root = make_workspace(tmp_path / "ws")
    (root / "app" / "shop_settings.py").write_text(SETTINGS_PY)
    fake_llm.default_reply = Reply("The database URL is DATABASE_URL [1].")
    options = {
        "embedder": "openai",
        "embeddingBaseUrl": fake_llm.openai_url,
        "embeddingDimensions": 64,
        "provider": "openai",
        "model": "gpt-test",
        "baseUrl": fake_llm.openai_url,
        "apiKey": "cq-test-key-00000000001",
        "minScore": -1.0,
    }
    async with served(tmp_path, root, options, log_level="debug", log_to_file=True) as server:
        status = await server.settled()
        assert "secret-content" not in status["skipped"]  # indexed, and redacted on the way out
        answers = [
            await server.command("codeqa.ask", {"question": q})
            for q in (
                "where is the database url and password configured?",
                "what is the slack token used for?",
                "is " + " or ".join(SAMPLES[s] for s in HIGH_CONFIDENCE) + " still valid?",
            )
        ]
        answers.append(
            await server.command(
                "codeqa.explain",
                {
                    "uri": (root / "app" / "shop_settings.py").as_uri(),
                    "position": {
                        "line": SETTINGS_PY.splitlines().index("def database_url():"),
                        "character": 6,
                    },
                },
            )
        )
        log = server.log()
    embeddings, chats = fake_llm.requests_to("embeddings"), fake_llm.requests_to("chat")
    assert embeddings and chats
    bodies = fake_llm.all_bodies_text()
    assert "database_url" in bodies and "DATABASE_URL" in bodies  # the probe sees real text
    for shape, secret in SECRETS.items():
        assert secret not in bodies, shape
        assert secret not in log, shape
        assert secret not in str(answers), shape


def test_key_in_base_url_userinfo_is_not_in_the_logged_endpoint() -> None:
    from codeqa_lsp.answering.providers.openai_provider import OpenAIProvider

    key = "cq-userinfo-key-5521-abcdef"
    provider = OpenAIProvider(
        Settings(provider="openai", base_url=f"https://user:{key}@gw.example/v1")
    )
    assert key not in provider.endpoint and provider.endpoint.endswith(
        "@gw.example/v1/chat/completions"
    )
