// A line chart of a queue's history: several series over time on one shared
// scale. Hand-written SVG with a text legend of each series' latest value,
// and lines told apart by dash pattern as well as colour.
import { useId } from "preact/hooks";
import { formatTime } from "./format.js";
import { linePoints } from "./sparkline.js";

/** One line: its name, values aligned with the chart's times, and its look (a CSS class). */
export interface ChartSeries {
  readonly label: string;
  readonly values: readonly number[];
  readonly look: string;
}

const width = 600;
const height = 160;
// Room on the left for the scale's labels and below for the times.
const left = 56;
const bottom = 20;

/** A line chart titled `title`; `format` writes a value ("12", "3.2/s"). */
export function LineChart(props: {
  title: string;
  times: readonly number[];
  series: readonly ChartSeries[];
  format: (value: number) => string;
  /** What to say when there are too few samples to draw. */
  empty: string;
}) {
  const { title, times, series, format, empty } = props;
  const id = useId();
  if (times.length < 2) {
    return (
      <figure class="chart">
        <figcaption>{title}</figcaption>
        <p class="muted">{empty}</p>
      </figure>
    );
  }
  const max = Math.max(0, ...series.flatMap((line) => line.values));
  const latest = (line: ChartSeries) => format(line.values[line.values.length - 1] ?? 0);
  const span = `${formatTime(times[0]!)} to ${formatTime(times[times.length - 1]!)}`;
  const plotWidth = width - left;
  const plotHeight = height - bottom;
  return (
    <figure class="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      {/* biome-ignore lint/a11y/noSvgWithoutTitle: named by its figcaption and <desc> through aria-labelledby */}
      <svg role="img" aria-labelledby={`${id}-title ${id}-desc`} viewBox={`0 0 ${width} ${height}`} class="chart-svg">
        <desc id={`${id}-desc`}>
          {`From ${span}, peak ${format(max)}. Latest: ${series.map((line) => `${line.label} ${latest(line)}`).join(", ")}.`}
        </desc>
        <line class="axis" x1={left} y1={0} x2={left} y2={plotHeight} />
        <line class="axis" x1={left} y1={plotHeight} x2={width} y2={plotHeight} />
        <line class="gridline" x1={left} y1={0.5} x2={width} y2={0.5} />
        <text class="tick" x={left - 6} y={10} text-anchor="end">
          {format(max)}
        </text>
        <text class="tick" x={left - 6} y={plotHeight} text-anchor="end">
          0
        </text>
        <text class="tick" x={left} y={height - 4}>
          {formatTime(times[0]!)}
        </text>
        <text class="tick" x={width} y={height - 4} text-anchor="end">
          {formatTime(times[times.length - 1]!)}
        </text>
        <g transform={`translate(${left} 0)`}>
          {series.map((line) => (
            <polyline
              key={line.label}
              class={`series ${line.look}`}
              points={linePoints(line.values, plotWidth, plotHeight - 1, max)}
            />
          ))}
        </g>
      </svg>
      <ul class="legend">
        {series.map((line) => (
          <li key={line.label}>
            <svg class="swatch" viewBox="0 0 24 8" width={24} height={8} aria-hidden="true">
              <line class={`series ${line.look}`} x1={0} y1={4} x2={24} y2={4} />
            </svg>
            {line.label} <strong>{latest(line)}</strong>
          </li>
        ))}
      </ul>
    </figure>
  );
}
