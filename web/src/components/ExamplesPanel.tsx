import type { Agent } from "../api";
import { useRemembered } from "../hooks/useRemembered";
import { setRemembered } from "../remembered";
import { CodeTabs } from "./CodeTabs";
import { Notice } from "./Notice";

export function ExamplesPanel({ agent }: { agent: Agent }) {
  const remembered = useRemembered(agent.id);
  const base = `${window.location.origin}/api/v1`;
  const key = remembered?.key ?? "a2a_YOUR_KEY";
  const model = agent.defaultModel;
  const examples = {
    curl: `curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Hello!"}]
  }'

# Continue the conversation: send back the "thread_id" from the response
curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "thread_id": "THREAD_ID", "messages": [{"role": "user", "content": "And then?"}]}'

# Tools: the answer's tool_calls (finish_reason "tool_calls"); send back only the results + thread_id
curl ${base}/chat/completions \
  -H "Authorization: Bearer ${key}" \
  -H "Content-Type: application/json" \
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
  }'`,
    python: `# pip install openai
from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="${key}")

first = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(first.choices[0].message.content)
thread_id = first.model_extra["thread_id"]

# Continue the same thread
second = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "And then?"}],
    extra_body={"thread_id": thread_id},
)
print(second.choices[0].message.content)

# Tools: the thread keeps the calls, so send back only the results
import json
tools = [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
ask = client.chat.completions.create(
    model="${model}", tools=tools,
    messages=[{"role": "user", "content": "Weather in Paris?"}],
)
results = [{"role": "tool", "tool_call_id": c.id,
            "content": "sunny in " + json.loads(c.function.arguments)["city"]}
           for c in ask.choices[0].message.tool_calls or []]
answer = client.chat.completions.create(
    model="${model}", tools=tools, messages=results,
    extra_body={"thread_id": ask.model_extra["thread_id"]},
)
print(answer.choices[0].message.content)`,
    node: `// npm install openai
import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${base}", apiKey: "${key}" });

const first = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
});
console.log(first.choices[0].message.content);
const threadId = first.thread_id;

// Continue the same thread (thread_id is a top-level body field)
const second = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "And then?" }],
  // @ts-expect-error thread_id is an Agent Gateway extension
  thread_id: threadId,
});
console.log(second.choices[0].message.content);

// Tools: the thread keeps the calls, so send back only the results
const tools = [{ type: "function", function: { name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const ask = await client.chat.completions.create({
  model: "${model}", tools,
  messages: [{ role: "user", content: "Weather in Paris?" }],
});
const results = (ask.choices[0].message.tool_calls ?? []).map((c) => ({
  role: "tool", tool_call_id: c.id, content: "sunny in " + JSON.parse(c.function.arguments).city,
}));
const answer = await client.chat.completions.create({
  model: "${model}", tools, messages: results,
  // @ts-expect-error thread_id is an Agent Gateway extension
  thread_id: ask.thread_id,
});
console.log(answer.choices[0].message.content);`,
  };
  const labels = { curl: "curl", python: "Python (openai)", node: "Node.js (openai)" } as const;
  return (
    <section className="panel" id="examples" aria-labelledby="examples-h">
      <h2 id="examples-h">Code examples</h2>
      <p className="help">
        Base URL <code>{base}</code>, model <code>{model}</code>
        {agent.allowedModels ? <> (allowed: {agent.allowedModels.join(", ")})</> : null}.
      </p>
      {remembered ? (
        <Notice>
          Using the key “{remembered.name}” ({remembered.prefix}…) remembered in this browser.{" "}
          <button type="button" className="btn small" onClick={() => setRemembered(agent.id, null)}>
            Forget this key
          </button>
        </Notice>
      ) : (
        <p className="help">
          The examples show a placeholder, <code>a2a_YOUR_KEY</code>. Create a key and tick “remember this key in this browser” to fill it in.
        </p>
      )}
      <CodeTabs id="example" examples={examples} labels={labels} ariaLabel="Language" />
    </section>
  );
}
