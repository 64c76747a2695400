import { useEffect, useId, useRef, type ReactNode } from "react";

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
