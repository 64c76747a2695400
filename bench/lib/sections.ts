/**
 * How a bench run lands in BENCHMARKS.md and bench/history/, as text in, text out (the harness
 * does the file I/O; test/bench-sections.test.ts checks these).
 *
 * BENCHMARKS.md holds each benchmark's latest run, one "## …" section per benchmark (and per
 * label: BENCH_SECTION names a variant such as a target set). A run replaces its section, and the
 * section it replaced moves to the end of the benchmark's history file. A comparison of two
 * builds (bench/compare.sh) is not a build's latest figures: it goes to the history file only.
 */

/** Everything before the first "## " line of a document, and its "## " sections in order. */
function splitSections(doc: string): { head: string; sections: string[] } {
  const parts = doc.split(/^(?=## )/m);
  const head = parts[0]!.startsWith("## ") ? "" : parts.shift()!;
  return { head, sections: parts };
}

const headingOf = (section: string) => section.split("\n", 1)[0]!;
const normal = (section: string) => `${section.trim()}\n`;

/** The heading of a run's section: the benchmark's title, and its label (a variant or a comparison) in parentheses. */
export function sectionHeading(title: string, label?: string): string {
  return `## ${title}${label ? ` (${label})` : ""}`;
}

/**
 * BENCHMARKS.md with `section` in place of the section of the same heading (or appended), under
 * `preamble` (the guide, which the document keeps as it is when it has one); and the section it
 * replaced, if any.
 */
export function replaceSection(doc: string, preamble: string, section: string): { doc: string; replaced?: string } {
  const { head, sections } = splitSections(doc);
  const heading = headingOf(section);
  const i = sections.findIndex((s) => headingOf(s) === heading);
  const replaced = i >= 0 ? normal(sections[i]!) : undefined;
  if (i >= 0) sections[i] = normal(section);
  else sections.push(normal(section));
  const top = head.trim() ? head : preamble;
  return { doc: [top.trim(), ...sections.map((s) => s.trim())].join("\n\n") + "\n", replaced };
}

/** A history file with `section` added at its end (in the order runs were written); `title` heads a new file. */
export function appendToHistory(doc: string | undefined, title: string, section: string): string {
  const top = doc?.trim() ? doc.trim() : `# ${title}: earlier runs\n\nOlder runs and two-build comparisons of this benchmark, in the order they were written, as their runs wrote them (bench/history/README.md).`;
  return `${top}\n\n${section.trim()}\n`;
}
