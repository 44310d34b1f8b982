/**
 * One group's spending as two bar charts (Chart.js through react-chartjs-2, drawn on canvas: no
 * inline style attributes, no eval, so the page's CSP holds): by month and by category, amounts
 * in the group currency. Each canvas has a text alternative listing the same numbers.
 */
import { useQuery } from '@tanstack/react-query';
import { BarElement, CategoryScale, Chart as ChartJS, LinearScale, Tooltip, type ChartOptions } from 'chart.js';
import { Bar } from 'react-chartjs-2';
import { useTRPC } from '../trpc.ts';
import { ErrorNote, Loading } from '../ui.tsx';

ChartJS.register(CategoryScale, LinearScale, BarElement, Tooltip);

type Row = { key: string; total_minor: number };

function formatter(currency: string, exponent: number) {
  const f = new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency,
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  });
  return (minor: number) => f.format(minor / 10 ** exponent);
}

function BarChart(props: { title: string; rows: Row[]; horizontal: boolean; format: (minor: number) => string; exponent: number }) {
  const { rows, format, exponent } = props;
  const options: ChartOptions<'bar'> = {
    indexAxis: props.horizontal ? 'y' : 'x',
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    plugins: { tooltip: { callbacks: { label: (c) => format(rows[c.dataIndex]!.total_minor) } } },
    scales: {
      [props.horizontal ? 'x' : 'y']: { ticks: { callback: (v: string | number) => format(Number(v) * 10 ** exponent), maxTicksLimit: 5 } },
    },
  };
  const data = {
    labels: rows.map((r) => r.key),
    datasets: [{ label: props.title, data: rows.map((r) => r.total_minor / 10 ** exponent), backgroundColor: '#1d4ed8' }],
  };
  const summary = `${props.title}: ${rows.map((r) => `${r.key} ${format(r.total_minor)}`).join(', ')}`;
  return (
    <figure className="chart">
      <figcaption>{props.title}</figcaption>
      <div className={props.horizontal ? 'chart-box tall' : 'chart-box'}>
        <Bar options={options} data={data} role="img" aria-label={summary} />
      </div>
    </figure>
  );
}

export function SpendingCharts({ agentId, groupId, name }: { agentId: string; groupId: string; name: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.groupStats.queryOptions({ agent_id: agentId, group_id: groupId }));
  if (q.error) return <ErrorNote error={q.error} />;
  if (q.isPending) return <Loading label={`Loading the spending of ${name}`} lines={2} />;
  const s = q.data;
  if (s.by_month.length === 0) return <p className="muted">No expenses in {name} yet.</p>;
  const format = formatter(s.currency, s.minor_unit_exponent);
  return (
    <section className="charts" aria-label={`Spending in ${name}`}>
      <h3>
        Spending in {name} <span className="muted">· {format(s.total_minor)}</span>
      </h3>
      <BarChart title="By month" rows={s.by_month} horizontal={false} format={format} exponent={s.minor_unit_exponent} />
      <BarChart title="By category" rows={s.by_category} horizontal format={format} exponent={s.minor_unit_exponent} />
    </section>
  );
}
