import { useEffect, useState } from "react";
import { currentRoute } from "../router";

/** The current hash route as path segments, updated on every navigation. */
export function useHashRoute(): string[] {
  const [parts, setParts] = useState(currentRoute);
  useEffect(() => {
    const on = () => setParts(currentRoute());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return parts;
}
