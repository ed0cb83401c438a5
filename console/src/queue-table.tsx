// The queue list's table: counts, oldest age and recent rates of every
// queue, sortable by any column, with marks on queues that need a look. A
// rate column's figure is the average of the samples its sparkline draws,
// and its heading names that window.
import { useState } from "preact/hooks";
import type { QueueRow } from "./api-types.js";
import { fifoTag } from "./fifo-text.js";
import { formatAge, formatCount, formatRate, formatWindow } from "./format.js";
import { queueHref } from "./route.js";
import { Sparkline } from "./sparkline.js";

/** The rate columns; "sent" counts the messages moved in too (dead letters, redrives, moves). */
type RateKey = "sent" | "received" | "deleted";

interface Column {
  readonly key: string;
  readonly label: string;
  readonly numeric: boolean;
  /** The value the column sorts by; null sorts below every number. */
  readonly sortValue: (row: QueueRow) => string | number | null;
}

/** A rate column's samples: a queue's arrivals (moves in) count as sends, so a dead-letter queue filling shows. */
function columnSeries(row: QueueRow, key: RateKey): readonly number[] {
  if (key !== "sent") return row.rates[key];
  return row.rates.sent.map((value, i) => value + (row.rates.arrived[i] ?? 0));
}

/** A rate column's figure: the average over the very samples its sparkline draws. */
function columnAverage(row: QueueRow, key: RateKey): number | null {
  if (row.rates[key].length === 0) return null;
  return key === "sent" ? row.averageRates.sent + row.averageRates.arrived : row.averageRates[key];
}

const columns: readonly Column[] = [
  { key: "name", label: "Queue", numeric: false, sortValue: (row) => row.name },
  { key: "visible", label: "Visible", numeric: true, sortValue: (row) => row.visible },
  { key: "in-flight", label: "In flight", numeric: true, sortValue: (row) => row.inFlight },
  { key: "delayed", label: "Delayed", numeric: true, sortValue: (row) => row.delayed },
  { key: "oldest-age", label: "Oldest message", numeric: true, sortValue: (row) => row.oldestMessageAgeMs },
  { key: "sent", label: "Sent", numeric: true, sortValue: (row) => columnAverage(row, "sent") },
  { key: "received", label: "Received", numeric: true, sortValue: (row) => columnAverage(row, "received") },
  { key: "deleted", label: "Deleted", numeric: true, sortValue: (row) => columnAverage(row, "deleted") },
];

const isRate = (key: string) => key === "sent" || key === "received" || key === "deleted";

interface Sort {
  readonly key: string;
  readonly ascending: boolean;
}

function compare(column: Column, a: QueueRow, b: QueueRow): number {
  const [x, y] = [column.sortValue(a), column.sortValue(b)];
  if (x === y) return a.name.localeCompare(b.name);
  if (x === null) return -1;
  if (y === null) return 1;
  return typeof x === "string" ? x.localeCompare(String(y)) : x - (y as number);
}

/** The queues, sorted as the user chose (by name at first); their rate series cover `rateWindowMs`. */
export function QueueTable({
  queues,
  caption,
  rateWindowMs,
  sampleIntervalMs,
}: {
  queues: readonly QueueRow[];
  caption: string;
  rateWindowMs: number;
  /** Each row's window is labelled in whole sample intervals, as the heading's. */
  sampleIntervalMs: number;
}) {
  const window = formatWindow(rateWindowMs);
  const [sort, setSort] = useState<Sort>({ key: "name", ascending: true });
  const column = columns.find((c) => c.key === sort.key)!;
  const sorted = [...queues].sort((a, b) => (sort.ascending ? 1 : -1) * compare(column, a, b));
  const choose = (key: string, numeric: boolean) =>
    // A numeric column sorts largest first on its first click: the busiest queues are what one looks for.
    setSort(sort.key === key ? { key, ascending: !sort.ascending } : { key, ascending: !numeric });

  return (
    <div class="table-scroll">
      <table class="queue-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.key}
                scope="col"
                class={c.numeric ? "numeric" : undefined}
                aria-sort={sort.key === c.key ? (sort.ascending ? "ascending" : "descending") : "none"}
              >
                <button type="button" class="sort" onClick={() => choose(c.key, c.numeric)}>
                  {c.label}
                  {isRate(c.key) && (
                    <>
                      <span aria-hidden="true">/s</span>
                      <span class="visually-hidden"> per second</span>
                    </>
                  )}
                  <span class="sort-mark" aria-hidden="true">
                    {sort.key === c.key ? (sort.ascending ? "▲" : "▼") : "↕"}
                  </span>
                  {isRate(c.key) && <span class="column-window"> ({window} avg)</span>}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((row) => (
            <QueueTableRow key={row.name} row={row} sampleIntervalMs={sampleIntervalMs} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function QueueTableRow({ row, sampleIntervalMs }: { row: QueueRow; sampleIntervalMs: number }) {
  const { name } = row;
  return (
    <tr class={row.deadLettering || row.oldestAgeGrowing ? "attention" : undefined}>
      <th scope="row">
        <a href={queueHref(name)}>{name}</a>
        {row.fifo !== null && (
          <span class="tag" data-testid={`fifo-${name}`}>
            {fifoTag(row.fifo)}
          </span>
        )}
        {row.deadLetterSourceQueues.length > 0 && <span class="tag">dead-letter queue</span>}
        {row.deadLettering && (
          <span class="mark mark-danger" data-testid={`dead-lettering-${name}`}>
            <span aria-hidden="true">⚠ </span>Dead-lettering
          </span>
        )}
        {row.oldestAgeGrowing && (
          <span class="mark mark-warning" data-testid={`oldest-age-growing-${name}`}>
            <span aria-hidden="true">↗ </span>Oldest age growing
          </span>
        )}
      </th>
      <td class="numeric" data-testid={`visible-${name}`}>
        {formatCount(row.visible)}
      </td>
      <td class="numeric" data-testid={`in-flight-${name}`}>
        {formatCount(row.inFlight)}
      </td>
      <td class="numeric" data-testid={`delayed-${name}`}>
        {formatCount(row.delayed)}
      </td>
      <td class="numeric" data-testid={`oldest-age-${name}`}>
        {row.oldestMessageAgeMs === null ? <span class="muted">empty</span> : formatAge(row.oldestMessageAgeMs)}
      </td>
      {(["sent", "received", "deleted"] as const).map((key) => (
        <RateCell key={key} name={name} kind={key} row={row} sampleIntervalMs={sampleIntervalMs} />
      ))}
    </tr>
  );
}

function RateCell(props: { name: string; kind: RateKey; row: QueueRow; sampleIntervalMs: number }) {
  const { name, kind, row, sampleIntervalMs } = props;
  const average = columnAverage(row, kind);
  return (
    <td class="numeric rate">
      <Sparkline
        values={columnSeries(row, kind)}
        label={kind === "sent" ? "sent or moved in, per second" : `${kind} per second`}
        window={formatWindow(row.rateWindowMs, sampleIntervalMs)}
        average={average ?? 0}
      />
      <span class="rate-now" data-testid={`${kind}-rate-${name}`}>
        {average === null ? "–" : formatRate(average)}
      </span>
    </td>
  );
}
