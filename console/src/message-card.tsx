// One message in full, below its row: every time with its date, the dead
// letter's kept history, the FIFO facts, attributes and body.
import type { PeekedMessage } from "./api-types.js";
import { formatBytes } from "./format.js";
import { MessageBody } from "./message-body.js";
import { MessageTime } from "./message-time.js";
import { queueHref } from "./route.js";

/** The details of a message of the browser, labelled by its row's id. */
export function MessageCard({ message }: { message: PeekedMessage }) {
  const id = message.messageId;
  const history = message.deadLetter;
  const attributes = [
    ...Object.entries(message.attributes).map(([key, value]) => ({ key, type: "String", value })),
    ...Object.entries(message.typedAttributes).map(([key, typed]) => ({
      key,
      type: typed.dataType,
      value: typed.stringValue ?? (typed.binaryValue === undefined ? "" : `base64 ${typed.binaryValue}`),
    })),
  ];
  return (
    <div class="message-details">
      <dl class="message-facts">
        <div class="wide-fact">
          <dt>Message id</dt>
          <dd>
            <code>{id}</code>
          </dd>
        </div>
        <div>
          <dt>Sent</dt>
          <dd>
            <MessageTime epochMs={message.sendTime} />
          </dd>
        </div>
        {history === null && (
          <div>
            <dt>First received</dt>
            <dd data-testid={`first-receive-${id}`}>
              <MessageTime epochMs={message.firstReceiveTime} />
            </dd>
          </div>
        )}
        {message.leaseDeadline !== null && (
          <div>
            <dt>Lease deadline</dt>
            <dd>
              <MessageTime epochMs={message.leaseDeadline} />
            </dd>
          </div>
        )}
        {message.visibleTime !== null && message.state === "delayed" && (
          <div>
            <dt>Visible at</dt>
            <dd>
              <MessageTime epochMs={message.visibleTime} />
            </dd>
          </div>
        )}
        <div>
          <dt>Checkpoint</dt>
          <dd data-testid={`checkpoint-size-${id}`}>
            {message.checkpointSize === 0 ? "none" : formatBytes(message.checkpointSize)}
          </dd>
        </div>
        {message.deduplicationId !== null && (
          <div class="wide-fact">
            <dt>Deduplication id</dt>
            <dd>
              <code data-testid={`deduplication-id-${id}`}>{message.deduplicationId}</code>
            </dd>
          </div>
        )}
        {message.traceHeader !== null && (
          <div class="wide-fact">
            <dt>Trace header</dt>
            <dd>
              <code data-testid={`trace-header-${id}`}>{message.traceHeader}</code>
            </dd>
          </div>
        )}
      </dl>
      {history !== null && (
        <section class="dead-letter-history" aria-label="Dead-letter history">
          <h3>Dead-letter history</h3>
          <dl class="message-facts">
            <div>
              <dt>Dead-lettered from</dt>
              <dd>
                <a href={queueHref(history.sourceQueue)}>{history.sourceQueue}</a>
              </dd>
            </div>
            <div>
              <dt>Reason</dt>
              <dd data-testid={`dead-letter-reason-${id}`}>{history.reason}</dd>
            </div>
            <div>
              <dt>Dead-lettered at</dt>
              <dd data-testid={`dead-lettered-at-${id}`}>
                <MessageTime epochMs={history.deadLetteredAt} never="not kept" />
              </dd>
            </div>
            <div>
              <dt>Receive count, kept across the move</dt>
              <dd data-testid={`kept-receive-count-${id}`}>{history.receiveCount}</dd>
            </div>
            <div>
              <dt>First received</dt>
              <dd data-testid={`kept-first-receive-${id}`}>
                <MessageTime epochMs={history.firstReceiveTime} />
              </dd>
            </div>
          </dl>
        </section>
      )}
      {attributes.length > 0 && (
        <table class="attributes">
          <caption>Attributes</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {attributes.map((attribute) => (
              <tr key={attribute.key}>
                <th scope="row">{attribute.key}</th>
                <td>{attribute.type}</td>
                <td>{attribute.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <MessageBody body={message.body} bodyText={message.bodyText} />
    </div>
  );
}
