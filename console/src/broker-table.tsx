// The Overview's brokers: what runs, since when, on which storage, and
// whether it serves, is recovering from a storage failure (refusing writes
// with STORAGE_UNAVAILABLE while it retries) or could not be asked, and
// whether it is near a limit (BROKER_FULL).
import { formatAge, formatCount, formatDateTime } from "./format.js";
import type { BrokerBudget, BrokerStatus } from "./overview-types.js";

const storageText: Record<string, string> = { memory: "in memory", leveldb: "LevelDB", postgres: "PostgreSQL" };

// What a member that could not be asked leaves blank.
const unknown = <span class="muted">not known</span>;

// A budget past this share of its limit is marked before it refuses work.
const nearFull = 0.8;

/** One row per broker. */
export function BrokerTable({ brokers }: { brokers: readonly BrokerStatus[] }) {
  return (
    <div class="table-scroll">
      <table class="broker-table">
        <caption class="visually-hidden">Brokers</caption>
        <thead>
          <tr>
            <th scope="col">Broker</th>
            <th scope="col">Address</th>
            <th scope="col">Version</th>
            <th scope="col">Up since</th>
            <th scope="col">Storage</th>
            <th scope="col">State</th>
            <th scope="col">Budgets</th>
          </tr>
        </thead>
        <tbody>
          {brokers.map((broker, i) => (
            <tr key={broker.nodeId ?? i} data-testid={`broker-${broker.nodeId ?? "this"}`}>
              <th scope="row">{broker.nodeId ?? "this broker"}</th>
              <td>{broker.address === null ? unknown : <code>{broker.address}</code>}</td>
              <td data-testid="broker-version">{broker.version ?? unknown}</td>
              <td>
                {broker.startedAt === null ? (
                  unknown
                ) : (
                  <>
                    {formatDateTime(broker.startedAt)}{" "}
                    <span class="muted" data-testid="broker-uptime">
                      (up {formatAge(broker.uptimeMs ?? 0)})
                    </span>
                  </>
                )}
              </td>
              <td data-testid="broker-storage">
                {broker.storage === null ? unknown : (storageText[broker.storage] ?? broker.storage)}
              </td>
              <td data-testid="broker-state">
                {broker.state === "serving" ? (
                  "serving"
                ) : (
                  <span class="mark mark-danger">
                    <span aria-hidden="true">⚠ </span>
                    {broker.state}
                  </span>
                )}
              </td>
              <td>
                <Budgets budgets={broker.budgets} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Budgets({ budgets }: { budgets: readonly BrokerBudget[] }) {
  if (budgets.length === 0) return <span class="muted">none set</span>;
  return (
    <ul class="budgets">
      {budgets.map((budget) => {
        const share = budget.limit > 0 ? budget.used / budget.limit : 0;
        return (
          <li key={budget.name}>
            {budget.name}: {formatCount(budget.used)} of {formatCount(budget.limit)} {budget.unit}
            {share >= 1 ? (
              <span class="mark mark-danger">full: BROKER_FULL</span>
            ) : share >= nearFull ? (
              <span class="mark mark-warning">{Math.round(share * 100)} %</span>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
