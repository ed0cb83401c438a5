// The Cluster page: which brokers share the queues, which shard each holds
// and since which epoch, and the recent takeovers and hand-overs. Outside
// cluster mode it says so.
import { useState } from "preact/hooks";
import { getCluster } from "./api.js";
import { formatAgo, formatDateTime, formatTime, plural } from "./format.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage } from "./notices.js";
import type { ClusterMember, ClusterStatus } from "./overview-types.js";
import { PageHeading } from "./page-heading.js";
import { ShardEvents } from "./shard-events.js";
import { ShardGrid } from "./shard-grid.js";
import { usePoll } from "./use-poll.js";

// Heartbeats come every few seconds: a slower refresh would show a live member's as stale.
const refreshMs = 5000;

/** The Cluster page. */
export function ClusterPage() {
  const [loaded, setLoaded] = useState<{ status: ClusterStatus; at: number } | null>(null);
  const [error, setError] = useState<string | null>(null);

  usePoll(
    async () => {
      try {
        setLoaded({ status: await getCluster(), at: Date.now() });
        setError(null);
      } catch (caught) {
        setError(messageOf(caught));
      }
    },
    refreshMs,
    [],
  );

  return (
    <>
      <PageHeading title="Cluster">Cluster</PageHeading>
      <p class="muted updated">
        {loaded !== null && `Updated ${formatTime(loaded.at)}; refreshes every ${refreshMs / 1000} s.`}
        {error !== null && loaded !== null && " The last refresh failed; this may be stale."}
      </p>
      <ErrorMessage error={error} />
      {loaded === null ? (
        error === null && <p>Loading…</p>
      ) : loaded.status.clustered === null ? (
        <p data-testid="cluster-denied">Cluster status is not shown: {loaded.status.denied}.</p>
      ) : !loaded.status.clustered ? (
        <p data-testid="not-clustered">
          This broker is not in cluster mode: it serves every queue itself, from its own storage. Cluster mode shares
          the queues among brokers on PostgreSQL (<code>--postgres-url</code>).
        </p>
      ) : (
        <ClusterSections status={loaded.status} now={loaded.at} />
      )}
    </>
  );
}

/** The members, shards and events of a cluster; `now` for the "ago" of their times. */
function ClusterSections({ status, now }: { status: Extract<ClusterStatus, { clustered: true }>; now: number }) {
  const { members, thisNode } = status;
  return (
    <>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <MemberTable members={members} thisNode={thisNode} now={now} />
        {!members.some((member) => member.nodeId === thisNode) && (
          <p data-testid="this-node">
            This console's broker, <strong>{thisNode}</strong>, holds no shards (it routes only, or is starting): it
            forwards every call to the queue's owner.
          </p>
        )}
      </section>
      <section aria-labelledby="shards-heading">
        <h2 id="shards-heading">Shards</h2>
        <ShardGrid shards={status.shards} />
      </section>
      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Recent takeovers and hand-overs</h2>
        <ShardEvents events={status.events} now={now} />
      </section>
    </>
  );
}

function MemberTable(props: { members: readonly ClusterMember[]; thisNode: string; now: number }) {
  const { members, thisNode, now } = props;
  return (
    <div class="table-scroll">
      <table class="member-table">
        <caption class="visually-hidden">Members of the cluster</caption>
        <thead>
          <tr>
            <th scope="col">Broker</th>
            <th scope="col">Address</th>
            <th scope="col">Liveness</th>
            <th scope="col" class="numeric">
              Shards held
            </th>
            <th scope="col">Last heartbeat</th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.nodeId} data-testid={`member-${member.nodeId}`}>
              <th scope="row">
                {member.nodeId}
                {member.nodeId === thisNode && <span class="tag">this broker</span>}
              </th>
              <td>
                <code>{member.address}</code>
              </td>
              {/* GetClusterStatus lists every member: one that stopped renewing keeps its shards until another takes them. */}
              <td data-testid="member-live">
                {member.live ? (
                  <span class="mark mark-ok">
                    <span aria-hidden="true">● </span>live
                  </span>
                ) : (
                  <span class="mark mark-danger">
                    <span aria-hidden="true">⚠ </span>not renewing (still holds its shards)
                  </span>
                )}
              </td>
              <td class="numeric" data-testid="member-shards">
                {member.shards}
              </td>
              <td data-testid="member-heartbeat">
                {formatDateTime(member.lastHeartbeat)}{" "}
                <span class="muted">({formatAgo(member.lastHeartbeat, now)})</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">{plural(members.filter((member) => member.live).length, "live member")}.</p>
    </div>
  );
}
