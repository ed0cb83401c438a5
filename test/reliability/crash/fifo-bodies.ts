import { createHash } from "node:crypto";

/** What a FIFO producer writes in a body: the message group and the message's place in it (0, 1, 2, ...). */
export interface FifoBodyContent {
  readonly group: string;
  readonly counter: number;
}

/**
 * Encodes a body. The same content always gives the same bytes: a content-
 * deduplicated queue must see a retried send as the same send.
 */
export function makeFifoBody(content: FifoBodyContent): Buffer {
  return Buffer.from(JSON.stringify({ group: content.group, counter: content.counter }));
}

/** Decodes a body a FIFO producer wrote. */
export function parseFifoBody(body: Uint8Array): FifoBodyContent {
  return JSON.parse(Buffer.from(body).toString()) as FifoBodyContent;
}

/** The uid the shared checks (invariants.ts) know a FIFO message by: one per group and counter. */
export function fifoUid(content: FifoBodyContent): string {
  return `${content.group}#${content.counter}`;
}

/** The deduplication id a producer names for a message, on a queue that takes ids. */
export function fifoDeduplicationId(content: FifoBodyContent): string {
  return `${content.group}.${content.counter}`;
}

/** The deduplication id a content-deduplicated queue reports: the body's SHA-256 in hex. */
export function contentDeduplicationId(content: FifoBodyContent): string {
  return createHash("sha256").update(makeFifoBody(content)).digest("hex");
}
