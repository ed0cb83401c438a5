// One peeked message: where it stands, its history, attributes and body,
// and on a FIFO queue its group, sequence number and deduplication id.
import type { MessageState, PeekedMessage } from "./api-types.js";
import { formatBytes, formatTime } from "./format.js";
import { MessageBody } from "./message-body.js";
import { queueHref } from "./route.js";

const stateLabels: Record<MessageState, string> = { visible: "Visible", in_flight: "In flight", delayed: "Delayed" };

/** A message of the browser, as an article headed by its id. */
export function MessageCard({ message }: { message: PeekedMessage }) {
  const id = message.messageId;
  const attributes = [
    ...Object.entries(message.attributes).map(([key, value]) => ({ key, type: "String", value })),
    ...Object.entries(message.typedAttributes).map(([key, typed]) => ({
      key,
      type: typed.dataType,
      value: typed.stringValue ?? (typed.binaryValue === undefined ? "" : `base64 ${typed.binaryValue}`),
    })),
  ];
  return (
    <article class="message" aria-labelledby={`message-${id}`}>
      <h2 id={`message-${id}`} class="message-id">
        <span class="visually-hidden">Message </span>
        <code>{id}</code>
        <span class={`state state-${message.state}`} data-testid={`state-${id}`}>
          {stateLabels[message.state]}
        </span>
      </h2>
      <dl class="message-facts">
        {message.messageGroupId !== null && (
          <div>
            <dt>Message group</dt>
            <dd>
              <code data-testid={`group-id-${id}`}>{message.messageGroupId}</code>
            </dd>
          </div>
        )}
        {message.sequenceNumber !== null && (
          <div>
            <dt>Sequence number</dt>
            <dd>
              <code data-testid={`sequence-number-${id}`}>{message.sequenceNumber}</code>
            </dd>
          </div>
        )}
        <div>
          <dt>Receive count</dt>
          <dd data-testid={`receive-count-${id}`}>{message.receiveCount}</dd>
        </div>
        <div>
          <dt>Sent</dt>
          <dd>{formatTime(message.sendTime)}</dd>
        </div>
        <div>
          <dt>First received</dt>
          <dd>{message.firstReceiveTime === null ? "never" : formatTime(message.firstReceiveTime)}</dd>
        </div>
        {message.leaseDeadline !== null && (
          <div>
            <dt>Lease deadline</dt>
            <dd>{formatTime(message.leaseDeadline)}</dd>
          </div>
        )}
        {message.visibleTime !== null && message.state === "delayed" && (
          <div>
            <dt>Visible at</dt>
            <dd>{formatTime(message.visibleTime)}</dd>
          </div>
        )}
        <div>
          <dt>Checkpoint</dt>
          <dd data-testid={`checkpoint-size-${id}`}>
            {message.checkpointSize === 0 ? "none" : formatBytes(message.checkpointSize)}
          </dd>
        </div>
        {message.deadLetterSourceQueue !== null && (
          <div>
            <dt>Dead-lettered from</dt>
            <dd>
              <a href={queueHref(message.deadLetterSourceQueue)}>{message.deadLetterSourceQueue}</a>
            </dd>
          </div>
        )}
        {message.deadLetterReason !== null && (
          <div>
            <dt>Dead-letter reason</dt>
            <dd data-testid={`dead-letter-reason-${id}`}>{message.deadLetterReason}</dd>
          </div>
        )}
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
    </article>
  );
}
