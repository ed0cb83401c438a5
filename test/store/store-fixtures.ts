import { newMessageId } from "../../src/broker/message-id.js";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import { contentKey, queueKey } from "../../src/store/key-layout.js";
import { createLevelDatabase } from "../../src/store/level-batch.js";
import type { MessageContent, QueueRecord, ScheduleEntry, Store, StoreOp } from "../../src/store/store.js";
import { faultyLevel } from "../support/faulty-level.js";
import { makeTempDir } from "../support/temp-dir.js";
import { WriteFault } from "../support/write-fault.js";

/** A time all fixtures count from, so that values read back can be compared exactly. */
export const t0 = Date.UTC(2026, 0, 1);

/** A ClassicLevelStore on a fresh temporary directory, reopenable on the same directory. */
export interface StoreFixture {
  store: ClassicLevelStore;
  readonly dataDir: string;
  /** Makes the database's batch writes fail while set, as a failing disk would; survives reopens. */
  readonly writeFault: WriteFault;
  /** Closes the store and opens a new one on the same directory. */
  reopen(): Promise<ClassicLevelStore>;
  /** Replaces a message's stored content with raw bytes (an older layout), the store closed meanwhile. */
  putRawContent(dataId: number, id: string, value: Buffer): Promise<void>;
  /** Replaces a queue record with raw bytes (an older layout), the store closed meanwhile. */
  putRawQueueRecord(name: string, value: Buffer): Promise<void>;
  /** Closes the store (if still open) and removes the directory. */
  dispose(): Promise<void>;
}

/** Opens a StoreFixture. */
export async function openStoreFixture(): Promise<StoreFixture> {
  const dir = await makeTempDir("holdshelf-store-");
  const writeFault = new WriteFault();
  const open = () =>
    ClassicLevelStore.open({ dataDir: dir.path, durability: "os", createDatabase: faultyLevel(writeFault) });
  const putRaw = async (key: Buffer, value: Buffer): Promise<void> => {
    await fixture.store.close();
    const db = createLevelDatabase(dir.path);
    await db.open();
    await db.put(key, value);
    await db.close();
    fixture.store = await open();
  };
  const fixture: StoreFixture = {
    store: await open(),
    dataDir: dir.path,
    writeFault,
    async reopen() {
      await fixture.store.close();
      fixture.store = await open();
      return fixture.store;
    },
    putRawContent: (dataId, id, value) => putRaw(contentKey(dataId, id), value),
    putRawQueueRecord: (name, value) => putRaw(queueKey(name), value),
    async dispose() {
      await fixture.store.close().catch(() => undefined);
      await dir.remove();
    },
  };
  return fixture;
}

/** A queue record with default configuration. */
export function queueRecord(name: string, id: number, dataId = id): QueueRecord {
  return { name, queueId: id, dataId, config: defaultQueueConfig, createTime: t0, updateTime: t0 };
}

/** A fresh, never received message's schedule entry, ready at `readyAt`. */
export function scheduleEntry(readyAt: number, overrides: Partial<ScheduleEntry> = {}): ScheduleEntry {
  return {
    id: newMessageId(t0),
    readyAt,
    leased: false,
    hasCheckpoint: false,
    receiveCount: 0,
    epoch: 0,
    sendTime: t0,
    enqueuedAt: t0,
    firstReceiveAt: 0,
    leaseStart: 0,
    size: 5,
    ...overrides,
  };
}

/** Message content with a UTF-8 body. */
export function content(
  body: string,
  attributes: Record<string, string> = {},
  typedAttributes: MessageContent["typedAttributes"] = {},
): MessageContent {
  return { body: Buffer.from(body, "utf8"), attributes, typedAttributes };
}

/** A putMessage op. */
export function putMessage(dataId: number, entry: ScheduleEntry, messageContent = content("hello")): StoreOp {
  return { kind: "putMessage", dataId, entry, content: messageContent };
}

/** Reads messages' contents (no checkpoints), as Receive would. */
export function readContents(store: Store, dataId: number, ids: readonly string[]) {
  return store.readMessages(
    dataId,
    ids.map((id) => ({ id, hasCheckpoint: false })),
  );
}
