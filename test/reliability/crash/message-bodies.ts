/** What the harness writes in a message body: a unique id, and whether consumers should never delete it. */
export interface BodyContent {
  readonly uid: string;
  readonly poison: boolean;
}

/** Encodes a body. */
export function makeBody(content: BodyContent): Buffer {
  return Buffer.from(JSON.stringify(content));
}

/** Decodes a body the harness wrote. */
export function parseBody(body: Uint8Array): BodyContent {
  return JSON.parse(Buffer.from(body).toString()) as BodyContent;
}
