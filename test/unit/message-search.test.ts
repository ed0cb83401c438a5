// The console's message search without a broker: what matches, and the
// bounds of one scan, over PeekMessages pages a fake hands out.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PeekedMessageSchema, type PeekedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import { messageMatches, scanQueue, searchScanLimit } from "../../src/console/message-search.js";
import type { QueueCalls } from "../../src/service/queue-calls.js";

const bytes = (text: string) => new TextEncoder().encode(text);

const message = (init: Parameters<typeof create<typeof PeekedMessageSchema>>[1]): PeekedMessage =>
  create(PeekedMessageSchema, init);

describe("messageMatches", () => {
  const typed = message({
    messageId: "0a1b2c3d-0000-4000-8000-00000000abcd",
    body: bytes("Zürich ÉTÉ"),
    attributes: { Kind: "Invoice" },
    typedAttributes: {
      blob: { dataType: "Binary", value: { case: "binaryValue", value: bytes("signed=yes") } },
      raw: { dataType: "Binary", value: { case: "binaryValue", value: Uint8Array.from([0xff, 0xfe]) } },
      amount: { dataType: "Number.cents", value: { case: "stringValue", value: "1250" } },
    },
  });

  it("matches a case-insensitive substring of the id and of a UTF-8 body, accents included", () => {
    expect(messageMatches(typed, "id", "ABCD")).toBe(true);
    expect(messageMatches(typed, "id", "ffff")).toBe(false);
    expect(messageMatches(typed, "body", "zürich été")).toBe(true);
    expect(messageMatches(message({ body: Uint8Array.from([0xc3, 0x28, 0x61]) }), "body", "a")).toBe(false);
  });

  it("reads name=value, name=, =value and bare text against plain and typed attributes", () => {
    expect(messageMatches(typed, "attribute", "kind=invoice")).toBe(true);
    expect(messageMatches(typed, "attribute", "kind=refund")).toBe(false);
    expect(messageMatches(typed, "attribute", "amount=")).toBe(true);
    expect(messageMatches(typed, "attribute", "=125")).toBe(true);
    // A binary value counts by its bytes as UTF-8 text; "=" after the first belongs to the value.
    expect(messageMatches(typed, "attribute", "blob=signed=yes")).toBe(true);
    expect(messageMatches(typed, "attribute", "signed")).toBe(true);
    // Bytes that are no UTF-8 have no value to match, though the name still does.
    expect(messageMatches(typed, "attribute", "raw=\ufffd")).toBe(false);
    expect(messageMatches(typed, "attribute", "raw")).toBe(true);
    expect(messageMatches(typed, "attribute", "nothing")).toBe(false);
  });
});

/** PeekMessages over `total` messages, `perPage` at most a page whatever was asked (as 4 MiB pages of large bodies are), counting calls. */
function fakeQueue(total: number, perPage: number): { calls: Pick<QueueCalls, "call">; count: () => number } {
  let count = 0;
  const call = async (_method: string, request: { pageSize: number; pageToken: string }) => {
    count += 1;
    const start = request.pageToken === "" ? 0 : Number(request.pageToken);
    const end = Math.min(total, start + Math.min(perPage, request.pageSize));
    const messages = Array.from({ length: end - start }, (_, i) =>
      message({ messageId: `m-${start + i}`, body: bytes(start + i === total - 1 ? "needle" : "hay") }),
    );
    return { messages, nextPageToken: end === total ? "" : String(end) };
  };
  return { calls: { call } as unknown as Pick<QueueCalls, "call">, count: () => count };
}

describe("scanQueue", () => {
  const needle = (m: PeekedMessage) => messageMatches(m, "body", "needle");

  it("reads at most the scan limit, in pages of 100, and its token goes on from there", async () => {
    const queue = fakeQueue(searchScanLimit + 250, 100);
    const first = await scanQueue(queue.calls, "q", "", needle);
    expect(first).toMatchObject({ matches: [], scanned: searchScanLimit, nextPageToken: String(searchScanLimit) });
    expect(queue.count()).toBe(100);
    const rest = await scanQueue(queue.calls, "q", first.nextPageToken, needle);
    expect(rest.scanned).toBe(250);
    expect(rest.nextPageToken).toBe("");
    expect(rest.matches.map((m) => m.messageId)).toEqual([`m-${searchScanLimit + 249}`]);
  });

  it("makes at most 100 calls when pages are small, so large bodies cost no more calls", async () => {
    const queue = fakeQueue(1000, 3);
    const page = await scanQueue(queue.calls, "q", "", needle);
    expect(queue.count()).toBe(100);
    expect(page.scanned).toBe(300);
    expect(page.nextPageToken).toBe("300");
  });

  it("stops after the page that brings the match limit, keeping that whole page's matches", async () => {
    const queue = fakeQueue(1000, 100);
    const page = await scanQueue(queue.calls, "q", "", () => true, 150);
    expect(page.matches).toHaveLength(200);
    expect(page.nextPageToken).toBe("200");
  });
});
