"""Secrets, end to end: seeded credentials never reach the index, the provider or a log.

One session of the real server (debug logging to a file, stderr kept) over a workspace
seeded with credential files and with vendor-shaped keys inside ordinary source files,
answering through the loopback OpenAI-compatible server. Then every place a secret could
end up is searched for every seeded value: the index database (queried directly), every
file under the index directory, `codeqa.search`, every request body the provider
received, every answer, the log file and stderr.
"""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.reliability.harness import (
    files_containing,
    index_sqlite_rows_containing,
    served,
)
from tests.server.workspace import FIXTURE_FILES, make_workspace

# Not shaped like any vendor's key: only our own redaction can keep it out of logs.
API_KEY = "cq-live-7f3a9e21-UNIQUE-KEY-41c0d8"

AWS_KEY = "AKIAQ4X7Z2M9N5B3V8C1"
AWS_SECRET = "wJalrXUtnFEMIq7K7MDENGbPxRfiCYq4Z8sLx2Vd"
OPENAI_KEY = "sk-proj-Qm7Tx2Lp9Vb4Nc8Rz1Kd6Hs3Wf5Gj0Ya2Ue8Io4Pk7"
ANTHROPIC_KEY = "sk-ant-api03-Hq4Lm8Pz2Xc6Vb0Nt5Rw9Ks3Jd7Gf1Ya-Ue4Io8Pk2Ml6Qn0Zx"
GITHUB_TOKEN = "ghp_R7t2Y9u4I1o6P3a8S5d0F2g7H4j9K1l6Z3x8"
DB_PASSWORD = "Tr0ub4dor-horse-battery-9931"
PRIVATE_KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz"
PEM_BODY = "MIIEpAIBAAKCAQEA3vN8QkYh2cP5rWmZ0aLxTq7Ueb9Jf4Kd1sGh6Vn3Yc8Ro2Mt"

# Values that look like keys: the server's log redaction recognises these shapes, so they
# may be typed into `codeqa.search` (a debug log records every request it receives).
KEY_SHAPED = (AWS_KEY, OPENAI_KEY, ANTHROPIC_KEY, GITHUB_TOKEN)
ALL_SECRETS = (*KEY_SHAPED, AWS_SECRET, DB_PASSWORD, PRIVATE_KEY_BODY, PEM_BODY)

SECRET_NAMED_FILES = {
    ".env": f"OPENAI_API_KEY={OPENAI_KEY}\nDATABASE_PASSWORD={DB_PASSWORD}\n",
    ".env.local": f"AWS_ACCESS_KEY_ID={AWS_KEY}\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\n",
    "deploy/id_rsa": (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END OPENSSH PRIVATE "
        "KEY-----\n"
    ),
    "deploy/server.pem": (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"
    ),
    "creds/credentials.json": (
        f'{{"aws_access_key_id": "{AWS_KEY}", "aws_secret_access_key": "{AWS_SECRET}"}}\n'
    ),
}
# Ordinary source files that happen to hold a key: skipped whole, by content.
KEYS_IN_SOURCE = {
    "app/storage.py": (
        '"""Uploads invoices to object storage."""\n\n'
        f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"\n\n\n'
        "def upload_invoice_pdf(invoice_id):\n"
        '    """Upload one invoice PDF to the storage bucket."""\n'
        '    return f"s3://invoices/{invoice_id}.pdf"\n'
    ),
    "app/llm_client.py": (
        '"""Talks to the completion API for the summariser."""\n\n'
        f'OPENAI_KEY = "{OPENAI_KEY}"\n'
        f'ANTHROPIC_KEY = "{ANTHROPIC_KEY}"\n\n\n'
        "def summarise_ticket(text):\n"
        '    """Summarise a support ticket with the language model."""\n'
        "    return text[:200]\n"
    ),
    "scripts/release.ts": (
        "// Publishes release notes to GitHub.\n"
        f'const GITHUB_TOKEN = "{GITHUB_TOKEN}";\n\n'
        "export function publishReleaseNotes(tag: string): string {\n"
        "  return `notes for ${tag}`;\n"
        "}\n"
    ),
}
# A clean module next to the secrets: proves the search and SQL probes do find indexed text.
CLEAN_MODULE = (
    "app/billing.py",
    '"""Invoice totals."""\n\n\n'
    "def compute_invoice_total_with_vat(lines, vat_rate):\n"
    '    """Sum invoice line amounts and add value-added tax at vat_rate."""\n'
    "    subtotal = sum(line.amount for line in lines)\n"
    "    return round(subtotal * (1 + vat_rate), 2)\n",
)
QUESTIONS = (
    "how are settings loaded from the config file?",
    "how is the invoice total with vat computed?",
    "which AWS access key is used to upload invoices to storage?",
    "what is the OpenAI key used to summarise tickets?",
    "what GitHub token publishes the release notes?",
    "what is the database password in the env file?",
)


def seed(root: Path) -> Path:
    make_workspace(root)
    for rel, text in {
        **SECRET_NAMED_FILES,
        **KEYS_IN_SOURCE,
        CLEAN_MODULE[0]: CLEAN_MODULE[1],
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    on_disk = "".join(p.read_text() for p in root.rglob("*") if p.is_file())
    assert all(secret in on_disk for secret in ALL_SECRETS)  # the probes below can fail
    return root.resolve()


async def test_seeded_secrets_stay_out_of_index_provider_and_logs(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    root = seed(tmp_path / "ws")
    fake_llm.default_reply = Reply("The code shown answers this [1].")
    options = {
        "embedder": "hash",
        "provider": "openai",
        "model": "gpt-test",
        "baseUrl": fake_llm.openai_url,
        "apiKey": API_KEY,
    }
    answers: list[dict[str, object]] = []
    async with served(tmp_path, root, options, log_level="debug", log_to_file=True) as server:
        status = await server.settled()
        skipped = status["skipped"]
        assert skipped.get("secret-name") == len(SECRET_NAMED_FILES), skipped
        assert skipped.get("secret-content") == len(KEYS_IN_SOURCE), skipped
        assert status["files"] == len(FIXTURE_FILES) + 1  # the fixture and the clean module

        # The index, queried directly: no secret; the clean module proves the probe works.
        assert index_sqlite_rows_containing(server.index_dir, "compute_invoice_total_with_vat")
        for secret in ALL_SECRETS:
            assert index_sqlite_rows_containing(server.index_dir, secret) == [], secret

        # Search: the values themselves, and the names around the values that are not key-shaped.
        clean = await server.command("codeqa.search", {"query": "compute_invoice_total_with_vat"})
        assert clean and clean[0]["path"] == CLEAN_MODULE[0]
        probes = (
            *KEY_SHAPED,
            "DATABASE_PASSWORD",
            "AWS_SECRET_ACCESS_KEY aws_secret_access_key",
            "OPENSSH PRIVATE KEY",
            "RSA PRIVATE KEY",
            "upload_invoice_pdf",
            "publishReleaseNotes",
        )
        secret_paths = set(SECRET_NAMED_FILES) | set(KEYS_IN_SOURCE)
        for query in probes:
            hits = await server.command("codeqa.search", {"query": query, "topK": 50})
            assert not secret_paths & {h["path"] for h in hits}, (query, hits)
            assert not any(s in str(hits) for s in ALL_SECRETS), query

        # Asks and explains through the provider.
        for number, question in enumerate(QUESTIONS):
            answers.append(
                await server.command(
                    "codeqa.ask", {"question": question, "requestId": f"q{number}"}
                )
            )
        for rel, line in (("app/config.py", 8), (CLEAN_MODULE[0], 5), ("app/session.py", 14)):
            answers.append(
                await server.command(
                    "codeqa.explain",
                    {"uri": (root / rel).as_uri(), "position": {"line": line, "character": 4}},
                )
            )
        asked = len(fake_llm.requests_to("chat"))
        assert asked >= 3, "too few questions reached the provider for this test to mean anything"

        # Explaining a file that holds a key (from disk, and an unsaved buffer) sends nothing.
        storage = root / "app" / "storage.py"
        refused = await server.command(
            "codeqa.explain", {"uri": storage.as_uri(), "position": {"line": 5, "character": 4}}
        )
        assert "looks like it holds secrets" in refused["answer"]
        billing = root / CLEAN_MODULE[0]
        server.client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": billing.as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": CLEAN_MODULE[1],
                }
            },
        )
        with_key = CLEAN_MODULE[1] + f'\n\nGITHUB_TOKEN = "{GITHUB_TOKEN}"\n'
        server.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": billing.as_uri(), "version": 2},
                "contentChanges": [{"text": with_key}],
            },
        )
        refused_buffer = await server.command(
            "codeqa.explain", {"uri": billing.as_uri(), "position": {"line": 4, "character": 4}}
        )
        assert "looks like it holds secrets" in refused_buffer["answer"]
        assert len(fake_llm.requests_to("chat")) == asked
        answers += [refused, refused_buffer]

        # A key saved into an indexed file takes the whole file out of the index.
        billing.write_text(with_key)
        server.client.notify("textDocument/didSave", {"textDocument": {"uri": billing.as_uri()}})
        status = await server.settled()
        assert status["files"] == len(FIXTURE_FILES)
        assert (
            index_sqlite_rows_containing(server.index_dir, "compute_invoice_total_with_vat") == []
        )
        assert index_sqlite_rows_containing(server.index_dir, GITHUB_TOKEN) == []

    # After shutdown: every file the server left under the index dir, every provider request.
    assert files_containing(server.index_dir, ALL_SECRETS) == {}
    bodies = fake_llm.all_bodies_text()
    assert "load_settings" in bodies  # the probe sees real prompt text
    for secret in (*ALL_SECRETS, API_KEY):
        assert secret not in bodies, secret
        assert secret not in str(answers), secret
    # The key was in use, in the Authorization header only.
    assert all(
        r.headers.get("authorization") == f"Bearer {API_KEY}" for r in fake_llm.requests_to("chat")
    )

    log, stderr = server.log(), server.stderr()
    # Debug logging really captured the traffic: the init params (key masked), and the
    # responses sent, search results and answers included.
    assert "'apiKey': '***'" in log and "Sending data" in log
    assert "compute_invoice_total_with_vat" in log and "The code shown answers this" in log
    assert "secret-name" in log and "secret-content" in log  # skips are logged by rule, not value
    for secret in (*ALL_SECRETS, API_KEY):
        assert secret not in log, secret
        assert secret not in stderr, secret
