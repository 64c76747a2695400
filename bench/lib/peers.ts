import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../src/dev/free-port.js";
import { say, startProcess, waitForHttp, type Proc } from "./harness.js";
import { nodePeerDir } from "./node-peers.js";

/**
 * The peers measured beside this gateway, each started by its own documented entry point and
 * routed to the same mock upstream.
 *
 * Portkey (`@portkey-ai/gateway`, installed on first use into .tools/bench-node by
 * bench/install-node-peers.sh): `node build/start-server.js --headless`, routed
 * per request by its headers (`x-portkey-provider`, `x-portkey-custom-host`). Its Node build
 * breaks every streamed response with `TypeError: immutable` (HTTP 500) when npm resolves its
 * `@hono/node-server ^1.3.3` to 1.14 or later (Portkey-AI/gateway#1389: from 1.14 the lightweight
 * Response hands out the upstream fetch Response's immutable Headers, which Portkey then appends
 * to). bench/install-node-peers.sh pins Portkey's copy to 1.13.8 with an npm `overrides` entry, the workaround
 * named in that issue; non-streamed requests behave the same with either version.
 *
 * LiteLLM proxy (PyPI `litellm[proxy]`, installed by bench/install-litellm.sh into
 * .tools/litellm-venv): `litellm --config config.yaml`, its documented proxy setup, one worker,
 * no master key and no database (so it does no per-request key or spend bookkeeping).
 */

export interface Peer {
  name: string;
  url: string;
  proc: Proc;
}

export function portkeyVersion(): string {
  return JSON.parse(readFileSync(join(nodePeerDir("@portkey-ai/gateway"), "package.json"), "utf8")).version;
}

export async function startPortkey(): Promise<Peer> {
  const port = await freePort();
  const proc = startProcess("portkey", process.execPath, [join(nodePeerDir("@portkey-ai/gateway"), "build/start-server.js"), `--port=${port}`, "--headless"], {
    env: { NODE_ENV: "production" },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`, { proc });
  return { name: `portkey ${portkeyVersion()}`, url, proc };
}

export const LITELLM_VENV = ".tools/litellm-venv";

export function ensureLiteLlm(): string {
  execFileSync("bash", ["bench/install-litellm.sh"], { stdio: "inherit" });
  return execFileSync(join(LITELLM_VENV, "bin/python"), ["-c", "import importlib.metadata as m; print(m.version('litellm'))"], { encoding: "utf8" }).trim();
}

/**
 * LiteLLM's proxy with two models: `bench-anthropic` (its Anthropic provider: OpenAI request in,
 * Messages API out, like our provider_b path) and `bench-openai` (its OpenAI provider).
 */
export async function startLiteLlm(dir: string, mockOrigin: string, version: string): Promise<Peer> {
  const port = await freePort();
  const config = join(dir, "litellm-config.yaml");
  writeFileSync(
    config,
    `model_list:
  - model_name: bench-anthropic
    litellm_params:
      model: anthropic/mock-claude
      api_base: ${mockOrigin}
      api_key: sk-mock
  - model_name: bench-openai
    litellm_params:
      model: openai/mock
      api_base: ${mockOrigin}/v1
      api_key: sk-mock
litellm_settings:
  telemetry: false
  drop_params: true
`,
  );
  const bin = join(LITELLM_VENV, "bin/litellm");
  if (!existsSync(bin)) throw new Error(`${bin} is missing (bench/install-litellm.sh installs it)`);
  const proc = startProcess("litellm", bin, ["--config", config, "--host", "127.0.0.1", "--port", String(port), "--num_workers", "1"], {
    env: {
      // No network here: use the cost map shipped in the package instead of fetching it.
      LITELLM_LOCAL_MODEL_COST_MAP: "True",
      LITELLM_TELEMETRY: "False",
      LITELLM_LOG: "ERROR",
    },
  });
  const url = `http://127.0.0.1:${port}`;
  say("waiting for the LiteLLM proxy (it takes a while to import)");
  await waitForHttp(`${url}/health/liveliness`, { proc, timeoutMs: 180_000 });
  return { name: `litellm ${version}`, url, proc };
}
