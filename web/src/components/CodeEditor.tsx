import { useId, useRef } from "react";

/** A textarea with a line-number gutter; `errorLine` is highlighted and announced. */
export function CodeEditor({
  id,
  value,
  onChange,
  errorLine,
  rows = 14,
  describedBy,
  invalid,
  placeholder,
}: {
  id: string;
  value: string;
  onChange: (v: string) => void;
  errorLine?: number | null;
  rows?: number;
  describedBy?: string;
  invalid?: boolean;
  placeholder?: string;
}) {
  const gutter = useRef<HTMLDivElement>(null);
  const hintId = useId();
  const lines = Math.max(value.split("\n").length, rows);
  return (
    <div className={`code-editor${invalid ? " invalid" : ""}`}>
      <div className="gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => (
          <div key={i} className={errorLine === i + 1 ? "error-line" : undefined}>
            {i + 1}
          </div>
        ))}
      </div>
      <span id={hintId} className="sr-only">
        Tab inserts two spaces; press Escape, then Tab, to leave the editor.
      </span>
      <textarea
        id={id}
        value={value}
        rows={rows}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        wrap="off"
        placeholder={placeholder}
        aria-invalid={invalid || undefined}
        aria-describedby={[describedBy, hintId].filter(Boolean).join(" ")}
        onChange={(e) => onChange(e.target.value)}
        onScroll={(e) => {
          if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
        }}
        onKeyDown={(e) => {
          // Tab indents; Escape then Tab leaves the editor (keyboard users are never trapped).
          if (e.key === "Tab" && !e.shiftKey && !(e.currentTarget.dataset.escaped === "1")) {
            e.preventDefault();
            const t = e.currentTarget;
            const { selectionStart: s, selectionEnd: end } = t;
            const next = t.value.slice(0, s) + "  " + t.value.slice(end);
            onChange(next);
            requestAnimationFrame(() => t.setSelectionRange(s + 2, s + 2));
          } else if (e.key === "Escape") {
            e.currentTarget.dataset.escaped = "1";
          } else {
            delete e.currentTarget.dataset.escaped;
          }
        }}
      />
    </div>
  );
}
