"""The OpenAI Agents SDK (openai-agents) against the gateway: an agent with a function tool runs its
loop to a final answer, once through OpenAIChatCompletionsModel and once through
OpenAIResponsesModel (both also streamed). Prints one JSON line."""
import asyncio, json, os
from openai import AsyncOpenAI
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)
client = AsyncOpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["API_KEY"], max_retries=0)
M = os.environ["MODEL"]
seen = []

@function_tool
def get_weather(city: str) -> str:
    """Returns the weather in a city."""
    seen.append(city)
    return f"sunny in {city}"

async def main():
    out = {}
    for kind, model in [("chat", OpenAIChatCompletionsModel(model=M, openai_client=client)),
                        ("responses", OpenAIResponsesModel(model=M, openai_client=client))]:
        agent = Agent(name="Weather", instructions="Use the tool, then answer.", tools=[get_weather], model=model)
        result = await Runner.run(agent, "What is the weather in Paris?")
        out[kind] = result.final_output
        streamed = Runner.run_streamed(agent, "And now?")
        async for _ in streamed.stream_events():
            pass
        out[kind + "_stream"] = streamed.final_output
    out["tool_calls"] = seen
    print(json.dumps(out))

asyncio.run(main())
