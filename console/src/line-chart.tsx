// A line chart of a history: several series over time on one shared scale.
// Hand-written SVG with a time axis of round, labelled ticks, a legend of
// each series' latest value, lines told apart by dash pattern as well as
// colour, and a readout of the sample nearest the pointer, or chosen with
// the arrow keys once the chart has focus. Every position is an SVG
// attribute: the CSP allows no inline style.
import { useId, useState } from "preact/hooks";
import { nearestIndex, niceMax, timeTicks } from "./chart-scale.js";
import { formatClock, formatDateTime } from "./format.js";

/** One line: its name, values aligned with the chart's times (null where it has none), and its look (a CSS class). */
export interface ChartSeries {
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly look: string;
}

/** The values of a series that it has. */
const known = (values: readonly (number | null)[]) => values.filter((value) => value !== null);

const width = 600;
const height = 180;
// Room on the left for the scale's labels, below for the times, and on top and right for the labels' overhang.
const left = 56;
const right = 24;
const top = 8;
const bottom = 22;
const plotWidth = width - left - right;
const plotHeight = height - top - bottom;

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
  // The chosen sample by its time: a refresh that adds a sample and drops the oldest leaves the readout on it.
  // Its index too, which tells apart two samples at the same time.
  const [chosen, setChosen] = useState<{ readonly time: number; readonly index: number } | null>(null);
  if (times.length < 2) {
    return (
      <figure class="chart">
        <figcaption>{title}</figcaption>
        <p class="muted">{empty}</p>
      </figure>
    );
  }
  const last = times.length - 1;
  const [first, end] = [times[0]!, times[last]!];
  const span = Math.max(1, end - first);
  const peak = Math.max(0, ...series.flatMap((line) => known(line.values)));
  const max = niceMax(peak);
  const x = (t: number) => left + ((t - first) / span) * plotWidth;
  const y = (value: number) => top + plotHeight - (value / max) * plotHeight;
  const { ticks, stepMs } = timeTicks(first, end);
  const written = (value: number | null | undefined) => (value === null || value === undefined ? "–" : format(value));
  const latest = (line: ChartSeries) => written(known(line.values).at(-1));
  const sample = (i: number) =>
    `${formatDateTime(times[i]!)}: ${series.map((line) => `${line.label} ${written(line.values[i])}`).join(", ")}`;
  const shown =
    chosen === null ? null : times[chosen.index] === chosen.time ? chosen.index : nearestIndex(times, chosen.time);
  const choose = (index: number) => setChosen({ time: times[index]!, index });

  const point = (event: PointerEvent) => {
    const box = (event.currentTarget as SVGSVGElement).getBoundingClientRect();
    const svgX = ((event.clientX - box.left) / box.width) * width;
    choose(nearestIndex(times, first + ((svgX - left) / plotWidth) * span));
  };
  const step = (event: KeyboardEvent) => {
    const from = shown ?? last;
    const page = Math.max(1, Math.round(times.length / 10));
    const to: Record<string, number> = {
      ArrowLeft: from - 1,
      ArrowDown: from - 1,
      ArrowRight: from + 1,
      ArrowUp: from + 1,
      PageDown: from - page,
      PageUp: from + page,
      Home: 0,
      End: last,
    };
    const next = to[event.key];
    if (next === undefined) return;
    event.preventDefault();
    choose(Math.max(0, Math.min(last, next)));
  };

  return (
    <figure class="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <p id={`${id}-desc`} class="visually-hidden">
        {`From ${formatDateTime(first)} to ${formatDateTime(end)}, peak ${format(peak)}. Latest: ${series.map((line) => `${line.label} ${latest(line)}`).join(", ")}.`}
      </p>
      {/* The chart is a slider over its samples: the arrow keys choose one, and its value is read out as text. */}
      <div
        class="chart-plot"
        role="slider"
        tabIndex={0}
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-desc`}
        aria-valuemin={0}
        aria-valuemax={last}
        aria-valuenow={shown ?? last}
        aria-valuetext={sample(shown ?? last)}
        onKeyDown={step}
        onFocus={() => setChosen((current) => current ?? { time: end, index: last })}
        onBlur={() => setChosen(null)}
      >
        <svg
          viewBox={`0 0 ${width} ${height}`}
          class="chart-svg"
          aria-hidden="true"
          onPointerMove={point}
          onPointerLeave={() => setChosen(null)}
        >
          {[0, max / 2, max].map((value) => (
            <g key={value}>
              <line
                class={value === 0 ? "axis" : "gridline"}
                x1={left}
                y1={y(value)}
                x2={left + plotWidth}
                y2={y(value)}
              />
              <text class="tick" x={left - 6} y={y(value) + 4} text-anchor="end">
                {format(value)}
              </text>
            </g>
          ))}
          <line class="axis" x1={left} y1={top} x2={left} y2={top + plotHeight} />
          {ticks.map((tick) => (
            <g key={tick}>
              <line class="axis" x1={x(tick)} y1={top + plotHeight} x2={x(tick)} y2={top + plotHeight + 4} />
              <text class="tick" x={x(tick)} y={height - 4} text-anchor="middle">
                {formatClock(tick, stepMs < 60_000)}
              </text>
            </g>
          ))}
          {series.flatMap((line) =>
            runs(line.values).map((run) => (
              <polyline
                key={`${line.label}-${run[0]}`}
                class={`series ${line.look}`}
                points={run.map((i) => `${x(times[i]!).toFixed(1)},${y(line.values[i]!).toFixed(1)}`).join(" ")}
              />
            )),
          )}
          {shown !== null && (
            <g class="chart-cursor">
              <line x1={x(times[shown]!)} y1={top} x2={x(times[shown]!)} y2={top + plotHeight} />
              {series.map((line) => {
                const value = line.values[shown];
                return value === null || value === undefined ? null : (
                  <circle key={line.label} class={`dot ${line.look}`} cx={x(times[shown]!)} cy={y(value)} r={3.5} />
                );
              })}
            </g>
          )}
        </svg>
      </div>
      <p class="chart-readout" aria-hidden="true">
        {shown === null ? (
          <span class="muted">Point at the chart, or focus it and press ← →, to read a sample.</span>
        ) : (
          sample(shown)
        )}
      </p>
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

/** The indexes of a series' unbroken stretches of values, each drawn as one line (a lone point as a dot-sized line). */
function runs(values: readonly (number | null)[]): number[][] {
  const stretches: number[][] = [];
  let current: number[] = [];
  values.forEach((value, i) => {
    if (value === null) {
      if (current.length > 0) stretches.push(current);
      current = [];
    } else current.push(i);
  });
  if (current.length > 0) stretches.push(current);
  return stretches.map((run) => (run.length === 1 ? [run[0]!, run[0]!] : run));
}
