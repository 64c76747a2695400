/** The end of a paged list: a button for the next page while there is one. */
export function LoadMore({ hasMore, loading, onMore, what }: { hasMore: boolean; loading: boolean; onMore: () => void; what: string }) {
  if (!hasMore) return null;
  return (
    <div className="load-more">
      <button type="button" className="btn" onClick={onMore} disabled={loading}>
        {loading ? "Loading…" : `Load more ${what}`}
      </button>
    </div>
  );
}
