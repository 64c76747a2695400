import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/doc-samples.js";

/**
 * Every relative link in the repository's Markdown points at something that exists: the file or
 * folder, and for `#anchor` the heading (GitHub's anchors: lower case, punctuation dropped, spaces
 * as hyphens, `-1`, `-2`… for repeats). A small checker rather than markdown-link-check, which
 * checks an anchor only within its own file; links out of the repository (http, https, mailto)
 * are not this test's business, except that none may climb out of it (`../` past the root).
 */
const SKIP_DIRS = new Set(["node_modules", ".tools", "dist", ".git", ".data", "test-artifacts"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : markdownFiles(join(dir, e.name));
    return e.isFile() && e.name.endsWith(".md") ? [join(dir, e.name)] : [];
  });
}

/** The file's text without fenced blocks and inline code, where brackets are code, not links. */
function prose(text: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && line.trim().startsWith(fence)) fence = null;
      lines.push("");
    } else if (open) {
      fence = open[1]!;
      lines.push("");
    } else lines.push(line.replace(/(`+)[\s\S]*?\1/g, ""));
  }
  return lines;
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const slug = h[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Headings are read from the raw text (inline code in a heading still names it). */
function headingAnchors(file: string): Set<string> {
  const raw = readFileSync(file, "utf8").replace(/`/g, "");
  return anchors(raw);
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function links(file: string): Link[] {
  const lines = prose(readFileSync(file, "utf8"));
  const text = lines.join("\n");
  const lineOf = (offset: number) => text.slice(0, offset).split("\n").length;
  const found: Link[] = [];
  // Inline links, whose text may wrap onto the next lines.
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ file, line: lineOf(m.index), target: m[1]! });
  // Reference definitions: [name]: target
  lines.forEach((line, i) => {
    const ref = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (ref) found.push({ file, line: i + 1, target: ref[1]! });
  });
  return found;
}

/** Why a link is broken, or null. */
function broken(link: Link): string | null {
  const { file, target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:, … : not relative
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
  const path = pathPart === "" ? file : join(dirname(file), decodeURIComponent(pathPart));
  if (relative(repoRoot, path).startsWith("..")) return "points outside the repository";
  if (!existsSync(path)) return "no such file";
  if (anchor === undefined || anchor === "") return null;
  if (statSync(path).isDirectory() || !path.endsWith(".md")) return "an anchor into something that is not a Markdown file";
  return headingAnchors(path).has(decodeURIComponent(anchor).toLowerCase()) ? null : `no heading #${anchor}`;
}

describe("relative links in the repository's Markdown", () => {
  const files = markdownFiles(repoRoot);

  it("finds the docs (README.md, ARCHITECTURE.md, docs/)", () => {
    const names = files.map((f) => relative(repoRoot, f));
    expect(names).toEqual(expect.arrayContaining(["README.md", "ARCHITECTURE.md", "docs/README.md"]));
  });

  it("every relative link and #anchor points at something that exists", () => {
    const problems = files.flatMap(links).flatMap((l) => {
      const why = broken(l);
      return why ? [`${relative(repoRoot, l.file)}:${l.line}: ${l.target}: ${why}`] : [];
    });
    expect(problems, `${problems.length} broken:\n${problems.join("\n")}`).toEqual([]);
  });

  it("README.md, ARCHITECTURE.md and docs/ name nothing outside the repository", () => {
    const docs = files.map((f) => relative(repoRoot, f)).filter((f) => f === "README.md" || f === "ARCHITECTURE.md" || f.startsWith("docs/"));
    const outside = docs.flatMap((f) =>
      readFileSync(join(repoRoot, f), "utf8")
        .split("\n")
        .flatMap((line, i) => (/\.\.\/shared\/|\bDESIGN(\.md|\s§)/.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outside, outside.join("\n")).toEqual([]);
  });

  it("the anchors are GitHub's", () => {
    expect([...anchors("## A wrong key: what the answer says, and what each client shows\n## Add an agent to ChatGPT / Claude as a connector\n## Twice\n## Twice")]).toEqual([
      "a-wrong-key-what-the-answer-says-and-what-each-client-shows",
      "add-an-agent-to-chatgpt--claude-as-a-connector",
      "twice",
      "twice-1",
    ]);
  });
});
