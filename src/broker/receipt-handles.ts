import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from "node:crypto";
import { HoldshelfError } from "../errors/holdshelf-error.js";

/** What a valid receipt handle names: one delivery (epoch) of one message. */
export interface ReceiptHandleClaim {
  readonly messageId: string;
  readonly epoch: number;
}

// Layout: version:1 queueId:u32 messageId:16 epoch:u32 mac:16, base64url.
const version = 1;
const bodyBytes = 1 + 4 + 16 + 4;
const macBytes = 16;
const handleBytes = bodyBytes + macBytes;

/**
 * Issues and checks receipt handles. A handle is signed with the data
 * directory's secret, so a forged one is refused; it names its queue, so one
 * from another queue is refused; and it names the delivery epoch, the fence
 * that tells a superseded lease from the current one.
 */
export class ReceiptHandles {
  // Imported once: a raw key given to every createHmac is copied and set up each time.
  private readonly key: KeyObject;

  constructor(secret: Uint8Array) {
    this.key = createSecretKey(secret);
  }

  /** The handle of delivery `epoch` of a message. */
  issue(queueId: number, messageId: string, epoch: number): string {
    const handle = Buffer.allocUnsafe(handleBytes);
    handle[0] = version;
    handle.writeUInt32BE(queueId, 1);
    handle.write(messageId, 5, 16, "hex");
    handle.writeUInt32BE(epoch, 21);
    this.mac(handle.subarray(0, bodyBytes)).copy(handle, bodyBytes);
    return handle.toString("base64url");
  }

  /** Checks a handle against the queue it was sent for. Throws RECEIPT_HANDLE_INVALID. */
  verify(handle: string, queueId: number): ReceiptHandleClaim {
    const bytes = Buffer.from(handle, "base64url");
    if (bytes.length !== handleBytes || bytes[0] !== version || bytes.toString("base64url") !== handle) {
      throw invalidHandle("is malformed");
    }
    const body = bytes.subarray(0, bodyBytes);
    if (!timingSafeEqual(this.mac(body), bytes.subarray(bodyBytes))) throw invalidHandle("was not issued by this broker");
    if (bytes.readUInt32BE(1) !== queueId) throw invalidHandle("belongs to another queue");
    return { messageId: bytes.toString("hex", 5, 21), epoch: bytes.readUInt32BE(21) };
  }

  private mac(body: Buffer): Buffer {
    return createHmac("sha256", this.key).update(body).digest().subarray(0, macBytes);
  }
}

function invalidHandle(why: string): HoldshelfError {
  return new HoldshelfError("RECEIPT_HANDLE_INVALID", `receipt handle ${why}`, {
    violations: [{ field: "receipt_handle", description: why }],
  });
}
