import { useId } from "react";
import { CopyButton } from "./CopyButton";

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
