export function StatusBadge({ status }: { status: string }) {
  const s = status.toLowerCase();
  return <span className={`badge status-${s}`}>{s}</span>;
}
