import type { Config } from "../config/config.js";
import { AppError } from "../errors/app-error.js";
import { parseDataUrl } from "./mapping.js";
import { resolveRoute } from "./routing.js";
import type { ChatMessage, ModelOptions } from "./types.js";

/**
 * What each provider accepts, checked before the hold and the upstream call so a request the
 * provider would refuse (or silently ignore) answers 400 naming the field.
 */
const bad = (param: string, message: string) => new AppError("invalid_request_error", message, { param });

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function checkModelOptions(
  config: Config,
  model: string,
  options: ModelOptions,
  messages: ChatMessage[],
  /** The request path of message i's content part j, for `param` (chat: messages[i].content[j]). */
  partParam: (i: number, j: number) => string,
): void {
  // An OpenAI-compatible route takes the OpenAI fields as they are.
  if (resolveRoute(config, model).kind === "openai_compatible") return checkImages(config, messages, partParam, true);
  const provider = model.slice(0, model.indexOf("/"));
  if (provider === "provider_b") {
    if (options.temperature !== undefined && options.temperature > 1) throw bad("temperature", `temperature must be from 0 to 1 for ${model}`);
    for (const [name, v] of [
      ["presence_penalty", options.presencePenalty],
      ["frequency_penalty", options.frequencyPenalty],
    ] as const) {
      if (v !== undefined && v !== 0) throw bad(name, `${name} is not supported by ${model}`);
    }
    if (options.seed !== undefined) throw bad("seed", `seed is not supported by ${model}`);
  }
  if (provider === "provider_a" && options.stop && options.stop.length > 5) throw bad("stop", `at most 5 stop sequences for ${model}`);
  checkImages(config, messages, partParam, provider === "provider_b");
}

function checkImages(config: Config, messages: ChatMessage[], partParam: (i: number, j: number) => string, urlsAllowed: boolean): void {
  messages.forEach((m, i) =>
    m.parts?.forEach((p, j) => {
      if (p.type !== "image") return;
      const param = `${partParam(i, j)}.image_url.url`;
      const data = parseDataUrl(p.url);
      if (!data) {
        if (!/^https?:\/\//i.test(p.url)) throw bad(param, "image_url.url must be a data URL (data:image/png;base64,…) or an http(s) URL");
        if (!urlsAllowed) throw bad(param, "This model takes images as data URLs only (data:image/png;base64,…), not http(s) URLs");
        return;
      }
      if (!IMAGE_TYPES.has(data.mimeType)) throw bad(param, `Unsupported image type ${data.mimeType}: use image/png, image/jpeg, image/gif or image/webp`);
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data.data)) throw bad(param, "The image data URL is not valid base64");
      const bytes = Math.floor((data.data.length * 3) / 4) - (data.data.endsWith("==") ? 2 : data.data.endsWith("=") ? 1 : 0);
      if (bytes > config.providers.maxImageBytes) {
        throw bad(param, `The image is ${bytes} bytes; the limit is ${config.providers.maxImageBytes} bytes (CHAT_MAX_IMAGE_BYTES)`);
      }
    }),
  );
}
