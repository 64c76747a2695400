"""The official `mcp` Python SDK (Client over Streamable HTTP) against an agent's MCP server, in
the mode MCP_MODE names: "auto" (the default: it probes `server/discover` and takes 2026-07-28
when the server serves it) or "legacy" (the initialize handshake). CHAT_URL/CHAT_KEY: a chat
agent; RUN_URL/RUN_KEY (optional): an automation agent; FOREIGN_KEY: a key of another agent;
ADMIN_TOKEN: the account's admin token; ASK_URL/ASK_KEY (optional, 2026-07-28 only): an agent whose
script asks (ctx.ask), answered through the client's elicitation callback. Prints one JSON line."""
import asyncio, json, os

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client


def http(key, statuses=None):
    async def record(response):
        if statuses is not None:
            statuses.append([response.status_code, response.headers.get("www-authenticate")])
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [record]})


MODE = os.environ.get("MCP_MODE")


def connect(url, client, **options):
    # No mode argument at all for "auto": what a client written without one gets.
    return Client(streamable_http_client(url, http_client=client), **({"mode": MODE} if MODE else {}), **options)


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def refused(url, key):
    """What a client sees with a bad key: an error, and the HTTP statuses read in a response hook."""
    statuses = []
    async with http(key, statuses) as client:
        try:
            async with connect(url, client) as c:
                await c.list_tools()
            return {"error": None, "statuses": statuses}
        except Exception as e:  # the 401's JSON-RPC error body, raised as an MCPError with its message
            while isinstance(e, BaseExceptionGroup) and e.exceptions:  # inside the client's task group
                e = e.exceptions[0]
            return {"error": type(e).__name__, "message": str(e), "statuses": statuses}


async def main():
    out = {}
    chat_url, chat_key = os.environ["CHAT_URL"], os.environ["CHAT_KEY"]
    async with http(chat_key) as client, connect(chat_url, client) as c:
        out["protocol"] = c.protocol_version
        out["mode"] = MODE or "default"
        out["server"] = c.server_info.name if c.server_info else None
        tools = await c.list_tools()
        out["chat_tools"] = [t.name for t in tools.tools]
        first = await c.call_tool("chat", {"message": "hello from python"})
        out["answer"] = text(first)
        out["structured"] = first.structured_content
        again = await c.call_tool("chat", {"message": "again from python", "thread_id": first.structured_content["thread_id"]})
        out["same_thread"] = again.structured_content["thread_id"] == first.structured_content["thread_id"]
        bad = await c.call_tool("chat", {"message": "x", "thread_id": "thr_unknown"})
        out["unknown_thread"] = {"is_error": bad.is_error, "text": text(bad)}

    run_url, run_key = os.environ.get("RUN_URL"), os.environ.get("RUN_KEY")
    if run_url:
        async with http(run_key) as client, connect(run_url, client) as c:
            tools = await c.list_tools()
            out["run_tools"] = sorted(t.name for t in tools.tools)
            progress = []

            async def on_progress(value, total, message):
                progress.append([value, total, message])

            done = await c.call_tool("run", {"input": {"n": 3}, "wait_seconds": 60}, progress_callback=on_progress)
            out["run"] = {"is_error": done.is_error, "structured": done.structured_content}
            out["progress"] = progress
            job = await c.call_tool("get_job", {"job_id": done.structured_content["job_id"]})
            out["get_job"] = job.structured_content
            missing = await c.call_tool("get_job", {"job_id": "job_unknown"})
            out["missing_job"] = {"is_error": missing.is_error, "text": text(missing)}

    ask_url, ask_key = os.environ.get("ASK_URL"), os.environ.get("ASK_KEY")
    if ask_url:
        asked = []

        async def answer(context, params):
            asked.append({"message": params.message, "schema": params.requested_schema})
            if params.message.startswith("Approve"):
                return types.ElicitResult(action="accept", content={"ok": True, "note": "from python"})
            return types.ElicitResult(action="accept", content={"answer": json.dumps({"items": ["py"]})})

        async with http(ask_key) as client, connect(ask_url, client, elicitation_callback=answer) as c:
            # The initialize era cannot ask: there run only reports the question's status, soon.
            done = await c.call_tool("run", {"input": {"n": 5}, "wait_seconds": 3 if MODE == "legacy" else 120})
            out["ask"] = {"is_error": done.is_error, "structured": done.structured_content, "asked": asked}

    out["no_key"] = await refused(chat_url, None)
    out["foreign_key"] = await refused(chat_url, os.environ["FOREIGN_KEY"])
    out["admin_token"] = await refused(chat_url, os.environ["ADMIN_TOKEN"])
    out["unknown_key"] = await refused(chat_url, "a2a_unknown")
    print(json.dumps(out))


asyncio.run(main())
