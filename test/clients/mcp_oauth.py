"""The official `mcp` Python SDK's OAuthClientProvider, unmodified, signing in to an agent's MCP
server: it reads the 401's resource_metadata, the server metadata, registers (or uses the CIMD URL
in CLIENT_METADATA_URL), and runs PKCE with `resource`. The browser part is the test's: this
script prints `AUTHORIZE <url>` and reads the redirect URL it was sent to on stdin. Then it calls
the `chat` tool. MCP_URL, REDIRECT_URI; prints one JSON line at the end."""
import json, os, sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def main():
    url = os.environ["MCP_URL"]
    seen = {}

    async def redirect(authorization_url):
        seen["authorization_url"] = authorization_url
        print("AUTHORIZE " + authorization_url, flush=True)

    async def callback():
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        q = parse_qs(urlparse(line.strip()).query)
        return AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0], iss=q.get("iss", [None])[0])

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(client_name="Python MCP test client", redirect_uris=[os.environ["REDIRECT_URI"]]),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=os.environ.get("CLIENT_METADATA_URL") or None,
    )
    out = {}
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            out["tools"] = [t.name for t in (await c.list_tools()).tools]
            res = await c.call_tool("chat", {"message": "hello over oauth"})
            out["answer"] = "".join(x.text for x in res.content if getattr(x, "type", "") == "text")
            out["is_error"] = bool(res.is_error)
    q = parse_qs(urlparse(seen.get("authorization_url", "")).query)
    out["authorize_params"] = {k: v[0] for k, v in q.items() if k in ("resource", "code_challenge_method", "client_id", "scope")}
    out["client_id"] = storage.client.client_id if storage.client else None
    out["access_token"] = storage.tokens.access_token if storage.tokens else None
    out["refresh_token"] = storage.tokens.refresh_token if storage.tokens else None
    out["expires_in"] = storage.tokens.expires_in if storage.tokens else None
    print(json.dumps(out), flush=True)


anyio.run(main)
