import { useEffect, useRef, useState } from "react";
import type { Page } from "../api";

/**
 * A connection read a page at a time: the first page on mount (and whenever `deps` change),
 * more with `loadMore()` from the last endCursor. `reload()` starts over from the first page.
 */
export function usePaged<T>(
  fetchPage: (after: string | null) => Promise<Page<T>>,
  deps: unknown[],
): { items: T[]; hasMore: boolean; loading: boolean; error?: string; loadMore: () => Promise<void>; reload: () => Promise<void> } {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();
  const seq = useRef(0);

  const load = async (after: string | null, append: boolean) => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const page = await fetchPage(after);
      if (n !== seq.current) return;
      const nodes = page.edges.map((e) => e.node);
      setItems((prev) => (append ? [...prev, ...nodes] : nodes));
      setCursor(page.pageInfo.endCursor);
      setHasMore(page.pageInfo.hasNextPage);
      setError(undefined);
    } catch (e) {
      if (n === seq.current) setError((e as Error).message);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  };
  useEffect(() => {
    void load(null, false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return { items, hasMore, loading, error, loadMore: () => load(cursor, true), reload: () => load(null, false) };
}
