import { useEffect, useId, useRef, useState, type ReactNode } from "react";

/** Small shared pieces: copy button, dialogs, code editor, status badges, times. */

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  }
}

export function CopyButton({ text, label = "Copy", what }: { text: string; label?: string; what?: string }) {
  const [state, setState] = useState<"idle" | "ok" | "fail">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button type="button" className="btn small" onClick={async () => setState((await copyText(text)) ? "ok" : "fail")} aria-label={what ? `${label} ${what}` : label}>
      <span aria-live="polite">{state === "ok" ? "Copied" : state === "fail" ? "Copy failed" : label}</span>
    </button>
  );
}

/** A read-only value with a copy button (URL, secret, command). */
export function CopyField({ label, value, multiline, mono = true, hidden }: { label: string; value: string; multiline?: boolean; mono?: boolean; hidden?: boolean }) {
  const id = useId();
  return (
    <div className="copy-field">
      <div className="copy-field-head">
        <label htmlFor={id}>{label}</label>
        <CopyButton text={value} what={label.toLowerCase()} />
      </div>
      {multiline ? (
        <pre id={id} className="code wrap" tabIndex={0} aria-label={label}>
          {value}
        </pre>
      ) : (
        <input id={id} className={mono ? "mono" : ""} type={hidden ? "password" : "text"} readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
      )}
    </div>
  );
}

/**
 * A modal dialog on the native <dialog>: the page behind is inert, Escape closes it, focus moves
 * to the first field (or `initialFocus`) and returns to where it was when the dialog closes.
 */
export function Dialog({ title, open, onClose, children, wide }: { title: string; open: boolean; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      const previous = document.activeElement as HTMLElement | null;
      d.showModal();
      const first = d.querySelector<HTMLElement>("[data-autofocus], input:not([readonly]), textarea:not([readonly]), select, button.primary");
      first?.focus();
      return () => {
        if (d.open) d.close();
        previous?.focus?.();
      };
    }
  }, [open]);
  if (!open) return <dialog ref={ref} />;
  return (
    <dialog
      ref={ref}
      className={wide ? "wide" : ""}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

export function ConfirmDialog({
  open,
  title,
  body,
  confirmLabel,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  body: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    if (open) setError(undefined);
  }, [open]);
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <div className="dialog-body">{body}</div>
      <ErrorBox error={error} />
      <div className="actions">
        <button type="button" className="btn" onClick={onClose} data-autofocus>
          Cancel
        </button>
        <button
          type="button"
          className="btn danger"
          disabled={busy}
          onClick={() =>
            run(async () => {
              await onConfirm();
              onClose();
            })
          }
        >
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

export function ErrorBox({ error }: { error?: string | null }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      {error}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <div className="notice" role="status">
      {children}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

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

export function StatusBadge({ status }: { status: string }) {
  const s = status.toLowerCase();
  return <span className={`badge status-${s}`}>{s}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={d.toISOString()}>
      {d.toLocaleString()}
    </time>
  );
}

export const duration = (ms: number | null | undefined) => (ms == null ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);

/**
 * The busy flag and error message around one user action (a button or a form submit): disables
 * the control while it runs and shows the API's words when it fails.
 */
export function useAction(): { busy: boolean; error?: string; setError: (e?: string) => void; run: (action: () => Promise<void>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; loading: boolean; reload: () => Promise<void>; setData: (d: T) => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const reload = async () => {
    const n = ++seq.current;
    try {
      const d = await load();
      if (n === seq.current) {
        setData(d);
        setError(undefined);
      }
    } catch (e) {
      if (n === seq.current) setError((e as Error).message);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  };
  useEffect(() => {
    setLoading(true);
    void reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return { data, error, loading, reload, setData };
}
