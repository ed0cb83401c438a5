import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ReceiptHandles } from "../../src/broker/receipt-handles.js";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";

const secret = Buffer.alloc(32, 5);
const messageId = "0123456789abcdef0123456789abcdef";

/** A handle as holdshelf 0.1 issued it: version 1, and an HMAC-SHA256 tag cut to 16 bytes. */
function versionOneHandle(queueId: number, epoch: number, key: Uint8Array = secret): string {
  const body = Buffer.alloc(25);
  body[0] = 1;
  body.writeUInt32BE(queueId, 1);
  body.write(messageId, 5, 16, "hex");
  body.writeUInt32BE(epoch, 21);
  const tag = createHmac("sha256", key).update(body).digest().subarray(0, 16);
  return Buffer.concat([body, tag]).toString("base64url");
}

function refusal(handles: ReceiptHandles, handle: string, queueId = 7): string {
  try {
    handles.verify(handle, queueId);
  } catch (error) {
    expect(error).toBeInstanceOf(HoldshelfError);
    expect((error as HoldshelfError).reason).toBe("RECEIPT_HANDLE_INVALID");
    return (error as HoldshelfError).violations[0]!.description;
  }
  throw new Error("the handle was accepted");
}

describe("receipt handles", () => {
  const handles = new ReceiptHandles(secret);

  it("issues version 2 handles of 33 bytes that verify to their message and epoch", () => {
    const handle = handles.issue(7, messageId, 3);
    const bytes = Buffer.from(handle, "base64url");
    expect(bytes).toHaveLength(33);
    expect(bytes[0]).toBe(2);
    expect(handles.verify(handle, 7)).toEqual({ messageId, epoch: 3 });
  });

  it("still accepts the HMAC-tagged handles holdshelf 0.1 issued, so leases held across an upgrade can be acted on", () => {
    expect(handles.verify(versionOneHandle(7, 4), 7)).toEqual({ messageId, epoch: 4 });
  });

  it("refuses a handle with any one bit of it changed, in either version", () => {
    for (const handle of [handles.issue(7, messageId, 3), versionOneHandle(7, 3)]) {
      const bytes = Buffer.from(handle, "base64url");
      for (let bit = 8; bit < bytes.length * 8; bit++) {
        const changed = Buffer.from(bytes);
        changed[bit >> 3]! ^= 1 << (bit & 7);
        const description = refusal(handles, changed.toString("base64url"));
        // A changed queue id is caught by the tag before the queue is compared.
        expect(description).toBe("was not issued by this broker");
      }
    }
  });

  it("refuses handles of another data directory's secret, in either version", () => {
    const other = new ReceiptHandles(Buffer.alloc(32, 6));
    expect(refusal(handles, other.issue(7, messageId, 3))).toBe("was not issued by this broker");
    expect(refusal(handles, versionOneHandle(7, 3, Buffer.alloc(32, 6)))).toBe("was not issued by this broker");
  });

  it("refuses a handle of another queue", () => {
    expect(refusal(handles, handles.issue(8, messageId, 3))).toBe("belongs to another queue");
    expect(refusal(handles, versionOneHandle(8, 3))).toBe("belongs to another queue");
  });

  it("refuses an unknown version, a wrong length and a non-canonical encoding as malformed", () => {
    const bytes = Buffer.from(handles.issue(7, messageId, 3), "base64url");
    const unknownVersion = Buffer.from(bytes);
    unknownVersion[0] = 3;
    // A version 2 body with a version 1 tag's length, and the other way round.
    const longTag = Buffer.concat([bytes, Buffer.alloc(8)]);
    const shortTag = Buffer.from(versionOneHandle(7, 3), "base64url").subarray(0, 33);
    for (const handle of [
      unknownVersion.toString("base64url"),
      longTag.toString("base64url"),
      shortTag.toString("base64url"),
      "",
      `${handles.issue(7, messageId, 3)}=`,
    ]) {
      expect(refusal(handles, handle)).toBe("is malformed");
    }
  });
});
