// A tiny line of recent rates for the queue table; hand-written SVG, as a
// charting library would outweigh the whole console. Too small for an axis:
// its tooltip and name say the window, average, peak and latest value, and
// the figure beside it is the same average.
import { formatRate } from "./format.js";

const width = 64;
const height = 18;

/** The polyline points of `values` scaled into a width × height box, 0 at the bottom. */
function linePoints(values: readonly number[], boxWidth: number, boxHeight: number, max: number): string {
  const step = values.length > 1 ? boxWidth / (values.length - 1) : 0;
  const top = max > 0 ? max : 1;
  return values
    .map((value, i) => `${(i * step).toFixed(1)},${(boxHeight - (value / top) * boxHeight).toFixed(1)}`)
    .join(" ");
}

/**
 * Recent rates as a line, for one series of one queue over `window` ("5
 * min"), whose `average` the figure beside it shows too. The SVG is an
 * image named by what it shows.
 */
export function Sparkline(props: { values: readonly number[]; label: string; window: string; average: number }) {
  const { values, label, window, average } = props;
  if (values.length < 2) return <span class="sparkline-empty">no history</span>;
  const max = Math.max(...values);
  const summary = `${label} over the last ${window}: average ${formatRate(average)}, peak ${formatRate(max)}, latest ${formatRate(values[values.length - 1]!)}`;
  return (
    <svg
      class="sparkline"
      role="img"
      aria-label={summary}
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
    >
      <title>{summary}</title>
      <polyline points={linePoints(values, width, height - 2, max)} transform="translate(0 1)" />
    </svg>
  );
}
