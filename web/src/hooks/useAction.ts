import { useState } from "react";

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
