import { useEffect, useState } from "react";
import { getRemembered, type Remembered } from "../remembered";

export function useRemembered(agentId: string): Remembered | null {
  const [r, setR] = useState(() => getRemembered(agentId));
  useEffect(() => {
    const on = () => setR(getRemembered(agentId));
    window.addEventListener("agw-remembered", on);
    window.addEventListener("storage", on);
    return () => {
      window.removeEventListener("agw-remembered", on);
      window.removeEventListener("storage", on);
    };
  }, [agentId]);
  return r;
}
