/**
 * Deepest nesting of arrays and objects accepted in JSON that crosses a boundary (webhook bodies,
 * script inputs and results). Real payloads stay far below it; deeper ones would only exercise
 * recursion limits in storage, the sandbox and serialization.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * True when JSON text nests arrays/objects deeper than `max`. One pass, no recursion (brackets
 * inside strings do not count); it does not validate the text, JSON.parse does that.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * True when a parsed value nests arrays/objects deeper than `max` (the value itself is level 1).
 * Iterative, so a value nested thousands deep (JSON.parse builds those; JSON.stringify then
 * overflows the stack on them) is measured without recursion.
 */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
