"""Issue 15 (High): the TCP transport is authenticated and serves one client.

The attack: another local user connected to `codeqa-lsp --tcp`, sent `initialize` for a
root-only folder with `{provider: openai, baseUrl: <their endpoint>}`, ran `codeqa.ask` and
got the code plus the server's API key; a second connection got search results without
`initialize` while an editor was connected. Here the attacker is a real second OS user
(created with useradd when the test runs as root), speaking raw JSON-RPC from the system
Python.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.workspace import HASH_OPTIONS, make_workspace

ATTACKER = "codeqa-redteam"
HANG_GUARD = 60.0  # seconds; only stops a hung test, never asserts speed

ATTACK_SCRIPT = r"""
import json, socket, sys
port, root = int(sys.argv[1]), sys.argv[2]
def frame(m):
    b = json.dumps(m).encode(); return b"Content-Length: %d\r\n\r\n" % len(b) + b
def read(s):
    data = b""
    s.settimeout(30)
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk: return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length_line = [l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
    n = int(length_line.split(b":")[1])
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk: break
        body += chunk
    return json.loads(body[:n])
out = {}
# 1. search without initialize
s = socket.create_connection(("127.0.0.1", port))
s.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
                 "params": {"command": "codeqa.search", "arguments": [{"query": "cart"}]}}))
out["no_init"] = read(s)
try:
    out["no_init_closed"] = s.recv(10) == b""
except ConnectionResetError:
    out["no_init_closed"] = True
# 2. initialize with a redirected provider and a guessed token
s = socket.create_connection(("127.0.0.1", port))
s.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "processId": None, "rootUri": "file://" + root, "capabilities": {},
    "initializationOptions": {"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                              "authToken": "guessed-token-0000000000"}}}))
out["bad_token"] = read(s)
# 3. read the token file
try:
    open(sys.argv[3]).read(); out["token_file"] = "readable"
except OSError as e:
    out["token_file"] = type(e).__name__
print(json.dumps(out))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize_frame(root: Path, token: str) -> bytes:
    """The editor's first message: `initialize` for `root` carrying `token`."""
    return _frame(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {**HASH_OPTIONS, "authToken": token},
            },
        }
    )


def _read(sock: socket.socket) -> dict | None:
    sock.settimeout(HANG_GUARD)
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        ).split(b":")[1]
    )
    while len(body) < length:
        body += sock.recv(65536)
    return json.loads(body[:length])


def _read_response(sock: socket.socket, msg_id: int) -> dict:
    """Skip notifications and answer server requests until the response to `msg_id`."""
    while True:
        message = _read(sock)
        assert message is not None, "connection closed"
        if message.get("id") == msg_id and "method" not in message:
            return message
        if "method" in message and "id" in message:
            sock.sendall(_frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))


@contextlib.contextmanager
def _serving(tmp_path: Path, *extra_args: str) -> Iterator[tuple[int, Path, Path]]:
    """A real `codeqa-lsp --tcp` over a fresh workspace, listening when this yields."""
    root = make_workspace(tmp_path / "secret-ws")
    port = _free_port()
    token_file = tmp_path / "lsp.token"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codeqa_lsp",
            "--tcp",
            f"127.0.0.1:{port}",
            "--token-file",
            str(token_file),
            "--log-level",
            "warning",
            *extra_args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    # That probe connection sent nothing and closed: it must not have used up the session.
    try:
        yield port, token_file, root
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def tcp_server(tmp_path: Path) -> Iterator[tuple[int, Path, Path]]:
    with _serving(tmp_path) as served:
        yield served


def test_token_file_is_private_and_a_bad_token_is_refused(
    tcp_server: tuple[int, Path, Path],
) -> None:
    port, token_file, root = tcp_server
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_initialize_frame(root, "x" * 43))
        reply = _read(sock)
        assert reply is not None and reply["error"]["code"] == -32001
        assert _read(sock) is None  # closed


def test_authenticated_client_is_served_and_a_second_one_refused(
    tcp_server: tuple[int, Path, Path],
) -> None:
    port, token_file, root = tcp_server
    token = token_file.read_text().strip()
    with socket.create_connection(("127.0.0.1", port)) as editor:
        editor.sendall(_initialize_frame(root, token))
        assert "capabilities" in _read_response(editor, 1)["result"]
        editor.sendall(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        # A second client, even one that knows the token, cannot take the session over.
        with socket.create_connection(("127.0.0.1", port)) as intruder:
            intruder.sendall(
                _frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "method": "workspace/executeCommand",
                        "params": {"command": "codeqa.search", "arguments": [{"query": "cart"}]},
                    }
                )
            )
            refused = _read(intruder)
            assert refused is not None and "already serves a client" in refused["error"]["message"]
            assert _read(intruder) is None
        editor.sendall(
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "workspace/symbol",
                    "params": {"query": "cart"},
                }
            )
        )
        assert "result" in _read_response(editor, 2)


@pytest.fixture
def second_user() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.skip("creating a second OS user needs root")
    if shutil.which("useradd") is None:
        pytest.skip("useradd is not installed")
    try:
        pwd.getpwnam(ATTACKER)
    except KeyError:
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER], check=True
        )
    yield ATTACKER


def test_another_os_user_gets_nothing(
    second_user: str, tcp_server: tuple[int, Path, Path], tmp_path: Path
) -> None:
    port, token_file, root = tcp_server
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    result = subprocess.run(
        [python, "-c", ATTACK_SCRIPT, str(port), str(root), str(token_file)],
        user=second_user,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["no_init"]["error"]["code"] == -32001
    assert "result" not in out["no_init"]
    assert out["no_init_closed"] is True
    assert out["bad_token"]["error"]["code"] == -32001
    assert out["token_file"] == "PermissionError"


def test_a_connection_that_never_authenticates_is_closed(tmp_path: Path) -> None:
    """A peer that connects and sends nothing (or drips half a header) is disconnected after
    the auth timeout, and the editor can still connect and be served afterwards."""
    with _serving(tmp_path, "--auth-timeout", "0.5") as (port, token_file, root):
        idle = socket.create_connection(("127.0.0.1", port))
        dripper = socket.create_connection(("127.0.0.1", port))
        dripper.sendall(b"Content-Len")  # half a header, then nothing
        for sock in (idle, dripper):
            sock.settimeout(HANG_GUARD)
            assert sock.recv(10) == b"", "the server kept an unauthenticated connection open"
            sock.close()
        token = token_file.read_text().strip()
        with socket.create_connection(("127.0.0.1", port)) as editor:
            editor.sendall(_initialize_frame(root, token))
            assert "capabilities" in _read_response(editor, 1)["result"]
            time.sleep(1.0)  # past the auth timeout: an authenticated session stays open
            editor.sendall(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            editor.sendall(
                _frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "workspace/symbol",
                        "params": {"query": "cart"},
                    }
                )
            )
            assert "result" in _read_response(editor, 2)
