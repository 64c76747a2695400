import { BarElement, CategoryScale, Chart as ChartJS, Legend, LinearScale, Tooltip } from "chart.js";
import { Bar } from "react-chartjs-2";
import type { UsageRow } from "../api";

ChartJS.register(CategoryScale, LinearScale, BarElement, Tooltip, Legend);

const COLORS = ["#2557d6", "#1e7b34", "#b3261e", "#8a5a00", "#6b3fa0", "#0f7b8a", "#c2185b", "#5b6470"];

/** Cost per day, one stacked bar segment per agent (Chart.js through react-chartjs-2). */
export function CostChart({ rows, days, agentName }: { rows: UsageRow[]; days: string[]; agentName: (id: string) => string }) {
  const agents = [...new Set(rows.map((r) => r.agentId ?? ""))];
  const datasets = agents.map((agent, i) => ({
    label: agent ? agentName(agent) : "unknown agent",
    data: days.map((d) => Number(rows.find((r) => r.day === d && (r.agentId ?? "") === agent)?.cost ?? 0)),
    backgroundColor: COLORS[i % COLORS.length],
  }));
  return (
    <div className="chart" role="img" aria-label={`Cost per day by agent, ${days[0]} to ${days.at(-1)}`} data-testid="cost-chart">
      <Bar
        data={{ labels: days, datasets }}
        options={{
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          plugins: { legend: { position: "bottom" }, tooltip: { callbacks: { label: (c) => `${c.dataset.label}: $${Number(c.raw).toFixed(6)}` } } },
          scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: "USD" } } },
        }}
      />
    </div>
  );
}
