"""The official Python `a2a-sdk` client, unmodified, against a chat agent and an automation agent:
card resolution, streaming and blocking sends, get (historyLength), list, non-blocking send +
subscribe, cancel, a refused message to an ended task, and what it shows for a wrong key. VERSION=1.0 resolves the v1.0 card;
VERSION=0.3 resolves agent.json (a v0.3 card), so the client speaks v0.3. Prints one JSON line."""
import asyncio, json, os
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.helpers.proto_helpers import new_data_message, new_text_message
from a2a.types.a2a_pb2 import (CancelTaskRequest, GetTaskRequest, ListTasksRequest, Role,
                               SendMessageRequest, SubscribeToTaskRequest, TaskState)
from google.protobuf.json_format import MessageToDict

KEY, VERSION = os.environ["A2A_KEY_CHAT"], os.environ["VERSION"]
CARD = ".well-known/agent.json" if VERSION == "0.3" else None
out = {}


class Keys(CredentialService):
    """The agent's key for the card's `bearer` scheme (the interceptor reads the card's requirements)."""
    def __init__(self, key):
        self.key = key

    async def get_credentials(self, scheme, context):
        return self.key if scheme == "bearer" else None


def text(task):
    return "".join(p.text for a in task.artifacts for p in a.parts)


async def main():
    # Chat agent: the key as a header of the client's own httpx client (docs/guides/a2a.md's example).
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    chat = await ClientFactory(ClientConfig(httpx_client=http)).create_from_url(os.environ["CHAT_URL"], relative_card_path=CARD)
    events = [e async for e in chat.send_message(SendMessageRequest(message=new_text_message("Hello", role=Role.ROLE_USER)))]
    out["transport"] = type(chat._transport).__name__
    out["stream_first"] = events[0].WhichOneof("payload")
    out["stream_last_state"] = TaskState.Name(events[-1].status_update.status.state)
    out["stream_text"] = "".join(p.text for e in events if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts)
    task_id = events[0].task.id
    context_id = events[0].task.context_id
    out["context_is_thread"] = context_id.startswith("thr_")
    blocking = await ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create_from_url(os.environ["CHAT_URL"], relative_card_path=CARD)
    second = [e async for e in blocking.send_message(SendMessageRequest(message=new_text_message("again", context_id=context_id, role=Role.ROLE_USER)))][0].task
    out["blocking_state"] = TaskState.Name(second.status.state)
    out["same_context"] = second.context_id == context_id
    got = await chat.get_task(GetTaskRequest(id=task_id, history_length=1))
    out["get_history"] = len(got.history)
    out["get_text"] = text(got)
    if VERSION == "1.0":
        listed = await chat.list_tasks(ListTasksRequest(page_size=10))
        # Both tasks of this run, newest first (the docs example's test may have left one more).
        ids = [t.id for t in listed.tasks]
        out["listed"] = second.id in ids and task_id in ids and ids.index(second.id) < ids.index(task_id)

    # Automation agent: the key through the SDK's AuthInterceptor and the card's security requirements.
    auth = [AuthInterceptor(Keys(os.environ["A2A_KEY_JOB"]))]
    job = await ClientFactory(ClientConfig(streaming=False, polling=True)).create_from_url(os.environ["JOB_URL"], interceptors=auth, relative_card_path=CARD)
    watcher = await ClientFactory(ClientConfig()).create_from_url(os.environ["JOB_URL"], interceptors=auth, relative_card_path=CARD)
    msg = new_data_message({"text": "#slow", "rounds": 4}, role=Role.ROLE_USER)
    started = [e async for e in job.send_message(SendMessageRequest(message=msg))][0].task
    out["job_started"] = TaskState.Name(started.status.state)
    sub = [e async for e in watcher.subscribe(SubscribeToTaskRequest(id=started.id))]
    out["sub_first"] = sub[0].WhichOneof("payload")
    out["sub_last_state"] = TaskState.Name(sub[-1].status_update.status.state)
    done = await job.get_task(GetTaskRequest(id=started.id))
    out["job_result"] = MessageToDict(done.artifacts[0].parts[0].data)
    again = [e async for e in job.send_message(SendMessageRequest(message=msg))][0].task
    out["same_job_for_same_message"] = again.id == started.id
    hanging = [e async for e in job.send_message(SendMessageRequest(message=new_text_message("#hang", role=Role.ROLE_USER)))][0].task
    canceled = await job.cancel_task(CancelTaskRequest(id=hanging.id))
    out["canceled"] = TaskState.Name(canceled.status.state)
    try:
        [e async for e in job.send_message(SendMessageRequest(message=new_text_message("more", task_id=hanging.id, role=Role.ROLE_USER)))]
        out["ended_task_refused"] = False
    except Exception as e:  # the SDK raises its typed error for -32004
        out["ended_task_refused"] = type(e).__name__
    await http.aclose()

    # What the client shows for a wrong key: another agent's, an admin token, an unknown string.
    out["refused"] = {}
    for name, key in (("foreign", os.environ["A2A_KEY_JOB"]), ("admin", os.environ["ADMIN_TOKEN"]), ("unknown", "a2a_unknown")):
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as bad:
            client = await ClientFactory(ClientConfig(httpx_client=bad, streaming=False)).create_from_url(os.environ["CHAT_URL"], relative_card_path=CARD)
            try:
                [e async for e in client.send_message(SendMessageRequest(message=new_text_message("hi", role=Role.ROLE_USER)))]
                out["refused"][name] = None
            except Exception as e:  # v0.3's transport prints the status only; the response is on its cause
                cause = getattr(e.__cause__, "response", None)
                out["refused"][name] = {"shown": f"{type(e).__name__}: {e}", "challenge": cause.headers.get("www-authenticate") if cause else None}
    print(json.dumps(out))


asyncio.run(main())
