import { createHash } from "node:crypto";
import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import { printableIdPattern } from "../protocol/printable-id-pattern.js";
import type { QueueConfig } from "./queue-config.js";
import type { OutgoingMessage } from "./types.js";

/** What a FIFO queue stores of a send beyond a standard message: its group and the deduplication id it is checked against. */
export interface FifoFields {
  readonly group: string;
  readonly deduplicationId: string;
}

/**
 * Checks a message's FIFO fields against its queue, naming `<field>` +
 * the proto field. A standard queue takes none (NOT_A_FIFO_QUEUE); a FIFO
 * queue needs a group (MESSAGE_GROUP_ID_REQUIRED), takes no per-message
 * delay, and needs a deduplication id unless it deduplicates by content
 * (DEDUPLICATION_ID_REQUIRED), in which case the body's SHA-256 stands in.
 */
export function checkFifoFields(message: OutgoingMessage, config: QueueConfig, field: string): FifoFields | undefined {
  const group = message.messageGroupId ?? "";
  const deduplicationId = message.deduplicationId ?? "";
  if (config.fifo === undefined) {
    if (group === "" && deduplicationId === "") return undefined;
    const named = group !== "" ? "message_group_id" : "deduplication_id";
    throw new HoldshelfError(
      "NOT_A_FIFO_QUEUE",
      `${field}${named}: only FIFO queues take it; this queue is a standard queue`,
      {
        violations: [{ field: field + named, description: "only FIFO queues take it" }],
      },
    );
  }
  if (group === "") {
    throw new HoldshelfError("MESSAGE_GROUP_ID_REQUIRED", `${field}message_group_id: is required on a FIFO queue`, {
      violations: [{ field: `${field}message_group_id`, description: "is required on a FIFO queue" }],
    });
  }
  checkFifoId(group, `${field}message_group_id`);
  if (message.delayMs !== undefined) {
    throw invalidArgument(`${field}delay`, "a FIFO queue takes no per-message delay: its own delay applies");
  }
  if (deduplicationId !== "") {
    checkFifoId(deduplicationId, `${field}deduplication_id`);
    return { group, deduplicationId };
  }
  if (!config.fifo.contentBasedDeduplication) {
    throw new HoldshelfError(
      "DEDUPLICATION_ID_REQUIRED",
      `${field}deduplication_id: is required on a FIFO queue without content_based_deduplication`,
      {
        violations: [
          {
            field: `${field}deduplication_id`,
            description: "is required unless the queue has content_based_deduplication",
          },
        ],
      },
    );
  }
  return { group, deduplicationId: createHash("sha256").update(message.body).digest("hex") };
}

function checkFifoId(id: string, field: string): void {
  if (!printableIdPattern.test(id))
    throw invalidArgument(field, "must be 1 to 128 characters of printable ASCII without spaces");
}
