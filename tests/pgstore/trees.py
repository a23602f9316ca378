"""A small repository both stores index: code in three languages, a secret file name, a
file whose content matches a secret rule, and a class with methods."""

from __future__ import annotations

AUTH_PY = '''"""Authentication helpers."""


def parse_bearer_token(header):
    """Extract the token from an Authorization header."""
    scheme, _, token = header.partition(" ")
    return token if scheme.lower() == "bearer" else None


class SessionStore:
    """Keeps live sessions in memory."""

    def refresh_session(self, session_id):
        """Extend a session's lifetime."""
        return self.sessions.get(session_id)
'''

ROUTER_JS = """// Request routing.
function matchRoute(routes, url) {
  for (const route of routes) {
    if (route.pattern.test(url)) return route.handler;
  }
  return null;
}

module.exports = { matchRoute };
"""

RETRY_GO = """package netutil

// RetryWithBackoff calls fn until it succeeds, doubling the delay each time.
func RetryWithBackoff(fn func() error, attempts int) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
	}
	return err
}
"""

TREE = {
    "app/auth.py": AUTH_PY,
    "web/router.js": ROUTER_JS,
    "net/retry.go": RETRY_GO,
    "docs/guide.md": "# Guide\n\nHow to deploy the service with the blue green strategy.\n",
    ".env": "DATABASE_PASSWORD=hunter2-very-secret\n",
    "config/deploy_key.py": (
        'KEY = """-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n'
        '-----END RSA PRIVATE KEY-----\n"""\n'
    ),
}
