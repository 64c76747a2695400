"""The official `openai` Python SDK against the gateway: tools (non-stream, stream with parallel
calls), a tool round continued by thread_id alone, json_schema (parse helper), an image part,
responses.create with previous_response_id, and responses streaming. Prints one JSON line."""
import json, os
from openai import OpenAI
from pydantic import BaseModel

M = os.environ["MODEL"]
c = OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["API_KEY"], max_retries=0)
tools = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time",
     "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}},
]
out = {}

r = c.chat.completions.create(model=M, messages=[{"role": "user", "content": "weather and time?"}], tools=tools)
calls = r.choices[0].message.tool_calls
out["calls"] = [[t.function.name, json.loads(t.function.arguments)] for t in calls]
out["finish"] = r.choices[0].finish_reason
r2 = c.chat.completions.create(model=M, tools=tools,
    messages=[{"role": "tool", "tool_call_id": t.id, "content": f"result {i}"} for i, t in enumerate(calls)],
    extra_body={"thread_id": r.model_extra["thread_id"]})
out["continued"] = r2.choices[0].message.content
out["same_thread"] = r2.model_extra["thread_id"] == r.model_extra["thread_id"]

acc, finish = {}, None
for chunk in c.chat.completions.create(model=M, messages=[{"role": "user", "content": "both"}], tools=tools, stream=True):
    if not chunk.choices:
        continue
    for d in chunk.choices[0].delta.tool_calls or []:
        e = acc.setdefault(d.index, {"name": None, "args": ""})
        if d.function and d.function.name:
            e["name"] = d.function.name
        if d.function and d.function.arguments:
            e["args"] += d.function.arguments
    finish = chunk.choices[0].finish_reason or finish
out["stream_calls"] = [[acc[i]["name"], json.loads(acc[i]["args"])] for i in sorted(acc)]
out["stream_finish"] = finish

class Weather(BaseModel):
    city: str
    temp: float

p = c.chat.completions.parse(model=M, messages=[{"role": "user", "content": "as json"}], response_format=Weather)
out["parsed"] = p.choices[0].message.parsed.model_dump()

png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
img = c.chat.completions.create(model=M, messages=[{"role": "user", "content": [
    {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": png}}]}])
out["image"] = img.choices[0].message.content

rtools = [{"type": "function", "name": "get_weather", "parameters": tools[0]["function"]["parameters"], "strict": False}]
a = c.responses.create(model=M, input="weather?", tools=rtools)
fc = [o for o in a.output if o.type == "function_call"]
out["response_call"] = fc[0].name
b = c.responses.create(model=M, previous_response_id=a.id, tools=rtools,
    input=[{"type": "function_call_output", "call_id": fc[0].call_id, "output": "sunny"}])
out["response_text"] = b.output_text
out["response_thread"] = b.model_extra["thread_id"] == a.model_extra["thread_id"]
types = []
with c.responses.stream(model=M, input="stream please", previous_response_id=b.id) as s:
    for ev in s:
        types.append(ev.type)
    final = s.get_final_response()
out["stream_types"] = types
out["stream_text"] = final.output_text
out["retrieved"] = c.responses.retrieve(final.id).output_text
print(json.dumps(out))
