"""The official Python `a2a-sdk` client, unmodified, over the HTTP+JSON binding (`<base>/v1`, the
card's HTTP+JSON interface, chosen with `supported_protocol_bindings`): streamed and blocking sends
on one thread, get (historyLength), list, a refused cancel of an ended task, an automation run, and
the authenticated extended card. Prints one JSON line."""
import asyncio, json, os
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import new_data_message, new_text_message
from a2a.types.a2a_pb2 import (CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
                               ListTasksRequest, Role, SendMessageRequest, TaskState)
from google.protobuf.json_format import MessageToDict

REST = ["HTTP+JSON"]
out = {}


async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {os.environ['A2A_KEY_CHAT']}"}, timeout=60)
    chat = await ClientFactory(ClientConfig(httpx_client=http, supported_protocol_bindings=REST)).create_from_url(os.environ["CHAT_URL"])
    out["transport"] = type(chat._transport).__name__
    events = [e async for e in chat.send_message(SendMessageRequest(message=new_text_message("Hello", role=Role.ROLE_USER)))]
    out["stream_last_state"] = TaskState.Name(events[-1].status_update.status.state)
    out["stream_text"] = "".join(p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts)
    first = events[0].task
    blocking = await ClientFactory(ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=REST)).create_from_url(os.environ["CHAT_URL"])
    second = [e async for e in blocking.send_message(SendMessageRequest(message=new_text_message("again", context_id=first.context_id, role=Role.ROLE_USER)))][0].task
    out["blocking_state"] = TaskState.Name(second.status.state)
    out["same_context"] = second.context_id == first.context_id
    got = await chat.get_task(GetTaskRequest(id=second.id, history_length=1))
    out["get_history"] = len(got.history)
    listed = await chat.list_tasks(ListTasksRequest(page_size=10, context_id=first.context_id))
    out["listed"] = {t.id for t in listed.tasks} == {first.id, second.id}
    try:
        await chat.cancel_task(CancelTaskRequest(id=second.id))
        out["cancel_ended"] = "canceled"
    except Exception:
        out["cancel_ended"] = "refused"
    await http.aclose()

    job_http = httpx.AsyncClient(headers={"Authorization": f"Bearer {os.environ['A2A_KEY_JOB']}"}, timeout=60)
    job = await ClientFactory(ClientConfig(httpx_client=job_http, streaming=False, supported_protocol_bindings=REST)).create_from_url(os.environ["JOB_URL"])
    done = [e async for e in job.send_message(SendMessageRequest(message=new_data_message({"n": 2}, role=Role.ROLE_USER)))][0].task
    out["job_result"] = MessageToDict(done.artifacts[0].parts[0].data)
    card = await job.get_extended_agent_card(GetExtendedAgentCardRequest())
    params = MessageToDict(card.capabilities.extensions[0].params)
    out["extended_default_model"] = params["defaultModel"]
    out["extended_rate_limit"] = params["rateLimitPerMinute"]
    await job_http.aclose()
    print(json.dumps(out))


asyncio.run(main())
