"""Workspace scanner: ignore rules, default excludes, secrets, hostile files."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from codeqa_lsp.chunking.ignore import WorkspaceFilter
from codeqa_lsp.chunking.scanner import Skip, SourceFile, read_source, scan
from codeqa_lsp.config import Settings

# Fake secrets of every shape the scanner must recognise (built by concatenation so this
# test file itself does not look like it holds keys).
AWS = "AKIA" + "Q3EGRT7YX2LNB5MZ"
OPENAI_PROJECT = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6l"
OPENAI_LEGACY = "sk-" + "T3BlbkFJ9aZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEdCbA9z8"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbAaB1c2D3e4F5g6H7i8J9k0LmNoPqRs"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789abcdefGHIJKLMN"
PRIVATE_KEY = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7q\n-----END RSA PRIVATE KEY-----\n"
)
SECRET_VALUES = [
    AWS,
    OPENAI_PROJECT,
    OPENAI_LEGACY,
    ANTHROPIC,
    GITHUB,
    GITHUB_PAT,
    "MIIEowIBAAKCAQEA7q",
]

SECRET_NAMES = [
    ".env",
    ".env.local",
    "config/prod.env",
    "server.pem",
    "tls/private.key",
    "id_rsa",
    "keys/id_ed25519.pub",
    "cert.p12",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials.json",
]
SECRET_CONTENT = {
    "src/aws_config.py": f'ACCESS_KEY = "{AWS}"\n',
    "src/llm.py": f'client = OpenAI(api_key="{OPENAI_PROJECT}")\n',
    "src/legacy.js": f'const key = "{OPENAI_LEGACY}";\n',
    "src/claude.ts": f'export const KEY = "{ANTHROPIC}";\n',
    "scripts/deploy.sh": f"TOKEN={GITHUB}\n",
    "scripts/ci.rb": f'TOKEN = "{GITHUB_PAT}"\n',
    "docs/key.md": f"# Key\n\n{PRIVATE_KEY}",
}
INDEXED = [
    ".github/workflows/ci.yml",
    "README.md",
    "auth/credentials.py",  # source named like a credentials file: judged by its content
    "coverage/__init__.py",  # a package named like an output directory (coverage.py's)
    "coverage/control.py",
    "internal/build/build.go",
    "auth/CredentialsProvider.java",
    "docs/guide.md",
    "lib/keep.tmp.py",
    "src/app.py",
    "src/lookalikes.py",
    "src/nested/deep.go",
    "src/util.js",
    "src/vanishing.py",
]


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "src/app.py", "def main():\n    return 1\n")
    write(root, "src/util.js", "exports.x = function () {};\n")
    write(root, "src/nested/deep.go", "package nested\n")
    write(root, "src/vanishing.py", "x = 1\n")
    write(root, "coverage/__init__.py", "")
    write(root, "coverage/control.py", "class Coverage:\n    pass\n")
    write(root, "internal/build/build.go", "package build\n")
    write(root, "auth/credentials.py", "class Credentials:\n    token = None\n")
    write(root, "auth/CredentialsProvider.java", "class CredentialsProvider {}\n")
    write(root, "README.md", "# Readme\n")
    write(root, "docs/guide.md", "# Guide\n")
    write(root, ".github/workflows/ci.yml", "on: push\n")
    # Look-alikes that must stay indexed: documented placeholders and word salad.
    write(
        root,
        "src/lookalikes.py",
        'EXAMPLE = "AKIAIOSFODNN7EXAMPLE"\nSLUG = "sk-this-is-not-a-real-key-just-words-here"\n'
        'BEGIN = "-----BEGIN PUBLIC KEY-----"\n',
    )
    # Ignore files at several levels, negation in a deeper file.
    write(root, ".gitignore", "*.log\n*.tmp.py\nignored_dir/\n")
    write(root, "lib/.gitignore", "!keep.tmp.py\n")
    write(root, "lib/keep.tmp.py", "kept = True\n")
    write(root, "lib/drop.tmp.py", "dropped = True\n")
    write(root, "src/.gitignore", "local_only.py\n")
    write(root, "src/local_only.py", "x = 1\n")
    write(root, "ignored_dir/a.py", "x = 1\n")
    write(root, ".git/info/exclude", "git_excluded.py\n")
    write(root, ".git/config", "[core]\n")
    write(root, "git_excluded.py", "x = 1\n")
    write(root, ".codeqaignore", "scratch/\n")
    write(root, "scratch/notes.md", "# Notes\n")
    write(root, "src/skipme.py", "x = 1\n")  # settings.exclude
    # Default excludes.
    for rel in (
        "node_modules/pkg/index.js",
        ".venv/lib/site.py",
        "build/out.js",
        "dist/app.js",
        "src/__pycache__/app.py",
        "target/debug/main.rs",
        "vendor/lib.go",
        "static/app.min.js",
        "package-lock.json",
        "poetry.lock",
        "api_pb2.py",
    ):
        write(root, rel, "x = 1\n")
    write(root, "myenv/pyvenv.cfg", "home = /usr\n")
    write(root, "myenv/lib/mod.py", "x = 1\n")
    # Hostile files.
    write(root, "src/data.py", b"x = 1\n\x00\x01\x02")
    write(root, "src/huge.py", "x = 1\n" * 5000)
    write(root, "src/image.png", b"\x89PNG\r\n")
    write(root, "gen/api.go", "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n")
    for rel in SECRET_NAMES:
        write(root, rel, "PASSWORD=hunter2\n")
    for rel, content in SECRET_CONTENT.items():
        write(root, rel, content)
    # Symlinks: a directory loop, a file loop, a dangling link, a link out of the workspace.
    os.symlink("..", root / "src" / "loop")
    os.symlink("self_link.py", root / "self_link.py")
    os.symlink("missing.py", root / "dangling.py")
    write(tmp_path, "outside/secret_plans.py", "x = 1\n")
    os.symlink(tmp_path / "outside", root / "outside_link")
    return root


SETTINGS = Settings(max_file_bytes=10_000, exclude=("**/skipme.py",))


def read_all(root: Path, rels: list[str]) -> tuple[list[str], Counter[str]]:
    indexed, skipped = [], Counter[str]()
    for rel in rels:
        result = read_source(root, rel, SETTINGS)
        if isinstance(result, Skip):
            skipped[result.reason] += 1
        else:
            indexed.append(result.rel_path)
    return indexed, skipped


def test_scan_and_read_index_exactly_the_right_files(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    result = scan(workspace, SETTINGS)
    listed = [f.rel_path for f in result.files]
    assert listed == sorted([*INDEXED, "gen/api.go", "src/data.py", *SECRET_CONTENT])
    assert result.skipped == Counter(
        {
            "default-excluded": 13,
            "ignored": 5,
            "excluded": 1,
            "secret-name": len(SECRET_NAMES),
            "too-large": 1,
            "unsupported": 5,
            "symlink-loop": 2,
            "vanished": 1,
            "outside-root": 1,
        }
    )
    (workspace / "src/vanishing.py").unlink()  # deleted between scan and read
    indexed, skipped = read_all(workspace, listed)
    assert indexed == sorted(set(INDEXED) - {"src/vanishing.py"})
    assert skipped == Counter(
        {
            "secret-content": len(SECRET_CONTENT),
            "binary": 1,
            "generated": 1,
            "vanished": 1,
        }
    )
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "secret-content" in logged and "secret-name" in logged
    for value in [*SECRET_VALUES, "hunter2"]:
        assert value not in logged


def test_every_secret_shape_is_caught_in_any_file(tmp_path: Path) -> None:
    for index, value in enumerate(SECRET_VALUES[:-1]):
        write(tmp_path, f"m{index}.py", f"value = {value!r}\n")
        result = read_source(tmp_path, f"m{index}.py", Settings())
        assert isinstance(result, Skip) and result.reason == "secret-content", value


def test_source_file_fields_and_invalid_utf8(tmp_path: Path) -> None:
    raw = b"def f():\r\n    return '\xff\xfe'\n"
    path = write(tmp_path, "bad.py", raw)
    result = read_source(tmp_path, "bad.py", Settings())
    assert isinstance(result, SourceFile)
    assert result.text == raw.decode("utf-8", "replace") and "\ufffd" in result.text
    assert result.size == len(raw) and result.mtime == path.stat().st_mtime
    import hashlib

    assert result.sha256 == hashlib.sha256(raw).hexdigest()


def test_filter_single_file_decisions_match_the_walk(workspace: Path) -> None:
    flt = WorkspaceFilter(workspace, SETTINGS)
    assert flt.skip_reason("src/app.py") is None
    assert flt.skip_reason("lib/keep.tmp.py") is None
    assert flt.skip_reason("lib/drop.tmp.py") == "ignored"
    assert flt.skip_reason("ignored_dir/new_file.py") == "ignored"
    assert flt.skip_reason("node_modules/x/y/z.js") == "default-excluded"
    # Generated sites: immer's Jekyll `_site/` held its rendered README.
    assert flt.skip_reason("_site/readme/index.html") == "default-excluded"
    assert flt.skip_reason("docs/_build/html/api.html") == "default-excluded"
    assert flt.skip_reason("myenv/lib/mod.py") == "default-excluded"
    assert flt.skip_reason("src/local_only.py") == "ignored"
    assert flt.skip_reason("other/local_only.py") is None  # nested .gitignore is scoped
    assert flt.skip_reason(".env.production") == "secret-name"
    assert flt.skip_reason("src/skipme.py") == "excluded"
    assert flt.skip_reason("picture.png") == "unsupported"
    only_src = WorkspaceFilter(workspace, Settings(include=("src/**",)))
    assert only_src.skip_reason("src/app.py") is None
    assert only_src.skip_reason("README.md") == "excluded"
    write(workspace, "src/.gitignore", "local_only.py\napp.py\n")
    flt.invalidate()
    assert flt.skip_reason("src/app.py") == "ignored"


def test_deep_directory_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    deep = tmp_path
    for _ in range(120):
        deep = deep / "d"
    write(deep, "leaf.py", "x = 1\n")
    result = scan(tmp_path, Settings())
    assert [f.rel_path for f in result.files] == ["d/" * 120 + "leaf.py"]


def test_missing_root_counts_as_unreadable(tmp_path: Path) -> None:
    result = scan(tmp_path / "nope", Settings())
    assert result.files == [] and result.skipped == Counter({"unreadable": 1})


_UNPRIVILEGED_PROBE = """
import json, sys
from pathlib import Path
from codeqa_lsp.chunking.scanner import Skip, read_source, scan
from codeqa_lsp.config import Settings
root = Path(sys.argv[1])
result = scan(root, Settings())
listed = [f.rel_path for f in result.files]
reads = {rel: (r.reason if isinstance(r, Skip) else "ok")
         for rel in listed for r in [read_source(root, rel, Settings())]}
print(json.dumps({"listed": listed, "skipped": dict(result.skipped), "reads": reads}))
"""


def test_unreadable_files_and_directories_are_counted(tmp_path: Path) -> None:
    """Permission bits only bind a process without CAP_DAC_OVERRIDE: as root, the probe runs
    with those capabilities dropped (util-linux `setpriv`)."""
    root = tmp_path / "perm"
    write(root, "ok.py", "x = 1\n")
    write(root, "locked.py", "x = 1\n").chmod(0o000)
    write(root, "closed/inner.py", "x = 1\n")
    (root / "closed").chmod(0o000)
    command = [sys.executable, "-c", _UNPRIVILEGED_PROBE, str(root)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permissions cannot be enforced")
        command = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]
    try:
        out = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            cwd=Path(__file__).resolve().parents[2],
        )
    finally:
        (root / "closed").chmod(0o755)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["listed"] == ["locked.py", "ok.py"]
    assert report["skipped"] == {"unreadable": 1}
    assert report["reads"] == {"locked.py": "unreadable", "ok.py": "ok"}


def test_buffer_text_gets_the_same_content_rules(workspace: Path) -> None:
    from codeqa_lsp.chunking.scanner import content_skip_reason

    for rel, content in SECRET_CONTENT.items():
        assert content_skip_reason(content, SETTINGS) == "secret-content", rel
    assert content_skip_reason("x = 1\n\x00", SETTINGS) == "binary"
    assert content_skip_reason("x = 1\n" * 5000, SETTINGS) == "too-large"
    assert content_skip_reason("// Code generated by x. DO NOT EDIT.\n", SETTINGS) == "generated"
    assert content_skip_reason((workspace / "src/lookalikes.py").read_text(), SETTINGS) is None


def test_generated_markers_count_only_in_comments() -> None:
    """A hand-written file that names the markers in code (our own scanner does) is indexed."""
    from codeqa_lsp.chunking.scanner import content_skip_reason

    mentions = '_MARK = re.compile(r"Code generated .* DO NOT EDIT|@generated")\n'
    assert content_skip_reason(mentions, SETTINGS) is None
    assert content_skip_reason('"""Skips files marked @generated."""\n', SETTINGS) is None
    assert content_skip_reason("/**\n * @generated\n */\nexport {}\n", SETTINGS) == "generated"
    assert content_skip_reason("# @generated by a tool\nx = 1\n", SETTINGS) == "generated"
