import { sqsErrors } from "./sqs-error.js";

// The characters SQS accepts in bodies and string attribute values: XML's
// (#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF). A lone
// surrogate is no character at all, so the `u` flag's code points reject it.
const refused = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Refuses text SQS would refuse: InvalidMessageContents naming what carried it. */
export function checkMessageText(text: string, what: string): void {
  if (refused.test(text)) {
    throw sqsErrors.invalidMessageContents(
      `Invalid characters found in ${what}. Allowed are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.`,
    );
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

// The same characters, each to be replaced.
const unsendable = new RegExp(refused.source, "gu");

/**
 * A stored body as SQS text. Bodies sent over SQS are such text and come
 * back unchanged. A body sent over gRPC is bytes: sequences that are not
 * UTF-8, and characters SQS text cannot hold (U+0000, U+FFFE), come back
 * as U+FFFD (docs/sqs.md says so). Both wires send this text, and its
 * MD5OfBody is the MD5 of it, so SDKs still verify it.
 */
export function bodyText(body: Uint8Array): string {
  return utf8.decode(body).replace(unsendable, "\uFFFD");
}
