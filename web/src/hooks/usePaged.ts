import { useEffect, useState } from "react";
import type { Page } from "../api";
import { useAsync } from "./useAsync";

/**
 * A connection read a page at a time: the first page on mount (and whenever `deps` change),
 * more with `loadMore()` from the last endCursor. `reload()` starts over from the first page.
 */
export function usePaged<T>(
  fetchPage: (after: string | null) => Promise<Page<T>>,
  deps: unknown[],
): { items: T[]; hasMore: boolean; loading: boolean; error?: string; loadMore: () => Promise<void>; reload: () => Promise<void> } {
  const first = useAsync(() => fetchPage(null), deps);
  const [more, setMore] = useState<Page<T>[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  // A new first page (new deps, reload) drops the pages that followed the old one.
  useEffect(() => setMore([]), [first.data]);
  const pages = first.data ? [first.data, ...more] : [];
  const last = pages.at(-1);
  const loadMore = async () => {
    if (!last?.pageInfo.hasNextPage || busy) return;
    setBusy(true);
    try {
      const page = await fetchPage(last.pageInfo.endCursor);
      setMore((m) => [...m, page]);
      setError(undefined);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return {
    items: pages.flatMap((p) => p.edges.map((e) => e.node)),
    hasMore: !!last?.pageInfo.hasNextPage,
    loading: first.loading || busy,
    error: first.error ?? error,
    loadMore,
    reload: first.reload,
  };
}
