export function InactiveBadge({ active }: { active: boolean }) {
  return active ? null : <span className="badge inactive">inactive</span>;
}
