import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The code samples of a Markdown file, as the docs tests run them. The convention the docs follow:
 * a fenced block runs when its language is `sh`, `bash`, `python`, `ts` or `js`; its info string
 * may add `no-run` (e.g. a block that only shows a production command) and then it does not. Blocks
 * in any other language (`text`, `json`, `graphql`, `yaml`…) are shown, never run.
 */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface CodeBlock {
  lang: string;
  info: string;
  code: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
  /** The nearest heading above the block. */
  heading: string;
  runs: boolean;
}

const RUNNABLE = new Set(["sh", "bash", "python", "ts", "js"]);

export function codeBlocks(relativePath: string): CodeBlock[] {
  const lines = readFileSync(join(repoRoot, relativePath), "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (h) heading = h[1]!.trim();
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/.exec(line);
    if (!open) continue;
    const [, indent, fence, infoRaw] = open;
    const info = infoRaw!.trim();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++) body.push(lines[j]!.slice(indent!.length));
    const lang = info.split(/\s+/)[0] ?? "";
    blocks.push({ lang, info, code: body.join("\n"), line: i + 1, heading, runs: RUNNABLE.has(lang) && !/\bno-run\b/.test(info) });
    i = j;
  }
  return blocks;
}

/** The docs speak of `npm start`'s default address; a test's `npm start` listens elsewhere. */
export function localize(code: string, port: number): string {
  return code.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`).replaceAll("localhost:3000", `localhost:${port}`);
}

export interface SessionResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A block as a piece of one bash script: shell as is, Python and TypeScript/JavaScript as heredocs. */
function asShell(b: CodeBlock, port: number, python: string): string {
  const code = localize(b.code, port);
  const tag = `AGW_DOC_SAMPLE_${b.line}`;
  const head = `# --- line ${b.line} (${b.heading})`;
  if (b.lang === "sh" || b.lang === "bash") return `${head}\n${code}`;
  if (b.lang === "python") return `${head}\n"${python}" - <<'${tag}'\n${code}\n${tag}`;
  const type = b.lang === "ts" ? "module-typescript" : "module";
  return `${head}\nnode --input-type=${type} <<'${tag}'\n${code}\n${tag}`;
}

/**
 * The runnable blocks of a file, run in order as one terminal session: shell blocks as typed
 * (variables one sets are seen by the next, and by the programs: export what they read), Python
 * blocks with `python` (default `python3`), TypeScript and JavaScript with this Node (as modules
 * run from the repository, so its node_modules resolve). `set -euo pipefail`: the first failing
 * command fails the session.
 */
export function runShellSession(blocks: CodeBlock[], options: { port: number; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; python?: string }): Promise<SessionResult> {
  const python = options.python ?? "python3";
  const script = ["set -euo pipefail", ...blocks.filter((b) => b.runs).map((b) => asShell(b, options.port, python))].join("\n");
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd: options.cwd ?? repoRoot, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
