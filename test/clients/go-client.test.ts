/**
 * The Go client library (clients/go) against a real broker: its Go unit
 * tests, gofmt and go vet, the freshness of its committed generated code, each
 * RPC's conversion and each kind of error through small Go programs
 * (test/clients/go/*), a queue's tags, access policy and SQS encryption
 * kept through updates, FIFO queues (fields, reasons, order per group, the
 * Consumer on one), the Consumer on Subscribe (its fallback to Receive, its
 * reconnect), the refusals that end its Run at once, batching sends, bearer
 * tokens and TLS (the default beyond loopback), typed attributes through the
 * SQS endpoint, and the examples' contract.
 * The Consumer's behaviour is the conformance suite's (test/conformance).
 */
import { execFile, spawn } from "node:child_process";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { freePort } from "../support/free-port.js";
import { startJsonLines } from "../support/json-lines-process.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startSqsHarness, type SqsHarness } from "../sqs/sqs-harness.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { nonLoopbackAddress } from "../support/non-loopback-address.js";
import { makeToken, startAuthHarness, type AuthHarness } from "../security/auth-harness.js";
import { issueServerCert, useTestCerts } from "../security/tls-certs.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => `${repoRoot}.build/bin/${name}`;
// GOPATH mode with Debian's gRPC-Go, as examples/build.sh builds.
const goEnv = {
  ...process.env,
  GOPATH: `${repoRoot}.build/go-lib:/usr/share/gocode`,
  GO111MODULE: "off",
  GOCACHE: `${repoRoot}.build/go-cache`,
};
const goDirs = ["clients/go", "examples/go", "test/clients/go", "test/conformance/workers/go", "test/interop/go"];

const missing = missingCommands(["go", "gofmt", "openssl", "protoc-gen-go", "protoc-gen-go-grpc"]);

/** Runs a Go program of .build/bin to its end and returns its JSON lines by their "check". */
async function checks(
  name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Record<string, Record<string, unknown>>> {
  const program = startJsonLines(bin(name), args, env);
  expect(await program.exited(), program.stderr()).toBe(0);
  return Object.fromEntries(program.events.map((event) => [event.check as string, event]));
}

describe.skipIf(skipWithout(missing))("the Go client library", () => {
  let broker: GrpcHarness;

  beforeAll(async () => {
    expect(missing, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    await run("bash", [`${repoRoot}examples/build.sh`], { cwd: repoRoot });
    broker = await startGrpcHarness();
  }, 300_000);
  afterAll(async () => {
    await broker?.stop();
  });

  it("passes its Go unit tests in GOPATH mode", async () => {
    const { stdout } = await run("go", ["test", "-count=1", "github.com/holdshelf/holdshelf/clients/go"], {
      cwd: repoRoot,
      env: goEnv,
    });
    expect(stdout).toMatch(/^ok\s+github\.com\/holdshelf\/holdshelf\/clients\/go/);
  }, 300_000);

  it("is gofmt and go vet clean, with the programs built on it", async () => {
    const { stdout } = await run("gofmt", ["-l", ...goDirs], { cwd: repoRoot });
    expect(stdout).toBe("");
    const packages = [
      "github.com/holdshelf/holdshelf/clients/go",
      "./examples/go/...",
      "./test/clients/go/...",
      "./test/conformance/workers/go",
      "./test/interop/go/...",
    ];
    await run("go", ["vet", ...packages], { cwd: repoRoot, env: goEnv });
  }, 300_000);

  it("has committed generated code that matches proto/", async () => {
    await run("bash", [`${repoRoot}clients/go/generate.sh`, "--check"], { cwd: repoRoot });
  }, 120_000);

  describe("its Client, one call of each RPC", () => {
    let results: Record<string, Record<string, unknown>>;
    beforeAll(async () => {
      results = await checks("go-client-calls", ["--address", broker.server.address, "--queue-prefix", "go-calls"]);
    }, 60_000);

    it("creates, reads, lists and updates queues with every field converted", () => {
      expect(results.createQueue).toMatchObject({
        name: "go-calls-q",
        visibilityTimeoutMs: 5000,
        delayMs: 0,
        retentionMs: 3_600_000,
        maxMessageBytes: 2048,
        receiveWaitTimeMs: 0,
        maxInFlight: 10,
        maxLeaseDurationMs: 7_200_000,
        redrivePolicy: { deadLetterQueue: "go-calls-dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoffMs: 100, maxBackoffMs: 1000 },
        stats: { visible: 0, inFlight: 0, delayed: 0 },
      });
      expect(Math.abs((results.createQueue!.createTime as number) - Date.now())).toBeLessThan(60_000);
      expect(results.getQueue).toMatchObject({
        name: "go-calls-dlq",
        deadLetterSourceQueues: ["go-calls-q"],
        redrivePolicy: null,
        retryPolicy: null,
      });
      expect(results.listQueues).toEqual({ check: "listQueues", names: ["go-calls-dlq"], hasNext: true });
      // UpdateQueue replaces the whole configuration: the unset fields are back to their defaults.
      expect(results.updateQueue).toMatchObject({
        visibilityTimeoutMs: 7000,
        retentionMs: 4 * 24 * 3_600_000,
        redrivePolicy: null,
        maxInFlight: 120_000,
      });
    });

    it("changes only the fields named with holdshelf.Fields, keeping the rest", () => {
      expect(results.updateQueueFields).toMatchObject({
        maxInFlight: 42,
        visibilityTimeoutMs: 7000,
        retryPolicy: { minBackoffMs: 100, maxBackoffMs: 1000 },
      });
    });

    it("sends and receives messages with their attributes and times", () => {
      const { id, batchIds } = results.send as { id: string; batchIds: string[] };
      expect(batchIds).toHaveLength(2);
      const { messages, now } = results.receive as { messages: Record<string, unknown>[]; now: number };
      expect(messages.map((m) => m.id)).toEqual([id, ...batchIds]);
      expect(messages[0]).toMatchObject({
        body: "one",
        attributes: { kind: "single" },
        receiveCount: 1,
        checkpoint: null,
      });
      expect(messages[2]).toMatchObject({ body: "three", attributes: { n: "3" } });
      for (const m of messages) {
        expect(now - (m.sendTime as number)).toBeLessThan(60_000);
        expect(m.firstReceiveTime as number).toBeGreaterThanOrEqual(m.sendTime as number);
        // The 30 s lease the Receive asked for.
        expect((m.leaseDeadline as number) - (m.firstReceiveTime as number)).toBe(30_000);
      }
    });

    it("changes leases, one and in a batch, with each entry's outcome", () => {
      const { leaseDeadline, now } = results.changeVisibility as { leaseDeadline: number; now: number };
      expect(leaseDeadline - now).toBeGreaterThan(5_000);
      expect(leaseDeadline - now).toBeLessThanOrEqual(10_000);
      const [changed, refused] = (results.changeVisibilityBatch as { results: Record<string, unknown>[] }).results;
      expect(changed).toMatchObject({ ok: true });
      expect(changed!.leaseDeadline as number).toBeGreaterThan(now);
      expect(refused).toMatchObject({ ok: false, code: "INVALID_ARGUMENT", reason: "RECEIPT_HANDLE_INVALID" });
    });

    it("renews on a raw Heartbeat stream, deletes one and in a batch, redrives and purges", () => {
      expect(results.heartbeat).toMatchObject({ held: true, handle: true });
      const [deleted, forged] = (results.deleteBatch as { results: Record<string, unknown>[] }).results;
      expect(deleted).toMatchObject({ ok: true, deleteOutcome: "DELETED" });
      expect(forged).toMatchObject({ ok: false, code: "INVALID_ARGUMENT", reason: "RECEIPT_HANDLE_INVALID" });
      expect(results.deleteOutcome).toMatchObject({ first: "DELETED", again: "ALREADY_DELETED", lost: false });
      expect(results.receivedAgain).toMatchObject({ outcome: "RECEIVED_AGAIN", lost: true });
      // The heartbeat's message is the one left to purge; the dead-letter queue was empty.
      expect(results.counts).toMatchObject({ moved: 0, purged: 1 });
    });

    it("fails with *holdshelf.Error carrying the code, the reason and the violated fields", () => {
      expect(results.queueNotFound).toMatchObject({
        code: "NOT_FOUND",
        reason: "QUEUE_NOT_FOUND",
        fields: [],
        isReason: true,
        statusCode: "NOT_FOUND",
      });
      expect(results.invalidArgument).toMatchObject({
        code: "INVALID_ARGUMENT",
        reason: "INVALID_ARGUMENT",
        fields: ["config.retention"],
        isReason: true,
        statusCode: "INVALID_ARGUMENT",
      });
      expect(results.invalidArgument!.text).toMatch(/^holdshelf: INVALID_ARGUMENT \(INVALID_ARGUMENT\): /);
      expect(results.leaseSuperseded).toMatchObject({
        code: "FAILED_PRECONDITION",
        reason: "LEASE_SUPERSEDED",
        isReason: true,
      });
      expect(results.deletedQueue).toMatchObject({ code: "NOT_FOUND", reason: "QUEUE_NOT_FOUND" });
    });
  });

  it("keeps a queue's tags, access policy and SQS encryption through an update, changing them only as named", async () => {
    const results = await checks("go-client-sqssettings", ["--address", broker.server.address]);
    const policy =
      '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage"}]}';
    const kms = { kmsMasterKeyId: "alias/orders", kmsDataKeyReusePeriodMs: 600_000, sqsManagedSseEnabled: false };
    const first = { tags: { team: "billing", env: "prod" }, accessPolicy: policy, sqsEncryption: kms };
    expect(results.created).toMatchObject(first);
    expect(results.got).toMatchObject(first);
    // A configuration read and written back whole keeps them: the bug was losing them here.
    expect(results.replaced).toMatchObject({ ...first, visibilityTimeoutMs: 45_000 });
    expect(results.fields).toMatchObject({ ...first, visibilityTimeoutMs: 45_000, maxInFlight: 42 });
    const managed = { kmsMasterKeyId: "", kmsDataKeyReusePeriodMs: 300_000, sqsManagedSseEnabled: true };
    expect(results.encryption).toMatchObject({ tags: first.tags, accessPolicy: policy, sqsEncryption: managed });
    expect(results.tagKeys).toMatchObject({ tags: { team: "billing", owner: "ana" }, accessPolicy: policy });
    expect(Object.keys(results.tagKeys!.tags as object).sort()).toEqual(["owner", "team"]);
    expect(broker.server.broker.getQueue("go-sqs-settings-q").config).toMatchObject({
      tags: { team: "billing", owner: "ana" },
      accessPolicy: policy,
      sqsEncryption: managed,
      visibilityTimeoutMs: 45_000,
      maxInFlight: 42,
    });
    expect(results.bothEncryptions).toEqual({
      check: "bothEncryptions",
      code: "INVALID_ARGUMENT",
      reason: expect.any(String),
      fields: ["config.sqs_encryption"],
    });
  }, 60_000);

  describe("on FIFO queues", () => {
    let results: Record<string, Record<string, unknown>>;
    beforeAll(async () => {
      results = await checks("go-client-fifo", ["--address", broker.server.address, "--queue-prefix", "go-fifo"]);
    }, 60_000);

    it("creates FIFO queues and reads fifo, content-based deduplication and the scope back", () => {
      expect(results.config).toMatchObject({
        orders: { fifo: true, contentBasedDeduplication: false, deduplicationScope: "QUEUE" },
        byBody: { fifo: true, contentBasedDeduplication: true, deduplicationScope: "MESSAGE_GROUP" },
        standard: { fifo: false, contentBasedDeduplication: false },
      });
    });

    it("fails with the three FIFO reasons, each naming its field and found by its Reason constant", () => {
      expect(results.groupRequired).toMatchObject({
        code: "INVALID_ARGUMENT",
        reason: "MESSAGE_GROUP_ID_REQUIRED",
        fields: ["message_group_id"],
        isReason: true,
      });
      expect(results.deduplicationRequired).toMatchObject({
        code: "INVALID_ARGUMENT",
        reason: "DEDUPLICATION_ID_REQUIRED",
        fields: ["entries[1].deduplication_id"],
        isReason: true,
      });
      expect(results.notFifo).toMatchObject({
        code: "INVALID_ARGUMENT",
        reason: "NOT_A_FIFO_QUEUE",
        fields: ["message_group_id"],
        isReason: true,
      });
    });

    it("returns increasing 20-digit sequence numbers, and a duplicate's the first send's id and number", () => {
      const { sent, retried, batch, plain } = results.send as {
        sent: { body: string; id: string; sequenceNumber: string }[];
        retried: { id: string; sequenceNumber: string };
        batch: { id: string; sequenceNumber: string }[];
        plain: { id: string; sequenceNumber: string };
      };
      const numbers = sent.map((s) => s.sequenceNumber);
      for (const number of numbers) expect(number).toMatch(/^\d{20}$/);
      expect([...numbers].sort()).toEqual(numbers);
      expect(new Set(numbers).size).toBe(numbers.length);
      const first = sent.find((s) => s.body === "c2-order-1")!;
      expect(retried).toEqual({ id: first.id, sequenceNumber: first.sequenceNumber });
      expect(batch[1]).toEqual(batch[0]);
      expect(plain.sequenceNumber).toBe("");
      // The duplicates were not stored: once the sent messages were received and deleted, none was left.
      expect(results.receive).toMatchObject({ left: 0 });
      expect((results.receive!.received as unknown[]).length).toBe(sent.length);
    });

    it("delivers each customer's orders in send order, with their group, sequence number and deduplication id", () => {
      const { sent } = results.send as { sent: { body: string; id: string; sequenceNumber: string }[] };
      const received = results.receive!.received as {
        body: string;
        id: string;
        group: string;
        sequenceNumber: string;
        deduplicationId: string;
      }[];
      for (const customer of ["c1", "c2", "c3"]) {
        const ofCustomer = (list: { body: string }[]) =>
          list.filter((m) => m.body.startsWith(`${customer}-`)).map((m) => m.body);
        expect(ofCustomer(received)).toEqual(ofCustomer(sent));
      }
      for (const message of received) {
        const original = sent.find((s) => s.body === message.body)!;
        expect(message).toEqual({
          body: original.body,
          id: original.id,
          group: original.body.slice(0, 2),
          sequenceNumber: original.sequenceNumber,
          deduplicationId: original.body,
        });
      }
    });

    it("deduplicates by the body's SHA-256 within a group under content-based deduplication and the MESSAGE_GROUP scope", () => {
      const contentBased = results.contentBased as {
        duplicate: boolean;
        otherGroupStored: boolean;
        deduplicationIds: string[];
        sha256: string;
      };
      expect(contentBased).toMatchObject({ duplicate: true, otherGroupStored: true });
      expect(contentBased.deduplicationIds).toEqual([contentBased.sha256, contentBased.sha256]);
    });

    it("runs a Consumer of concurrency 4 that handles each group one message at a time, in send order", async () => {
      const later = ["later-1", "later-2", "later-3", "later-4", "later-5"];
      expect(results.consumer).toEqual({
        check: "consumer",
        handled: { c1: later, c2: later, c3: later },
        overlaps: 0,
        errors: [],
      });
      await expect
        .poll(() => broker.server.broker.getQueue("go-fifo-orders.fifo").counts)
        .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("gives back a group's messages behind a failed one unhandled, and handles them after its retry", async () => {
      const { calls, errors } = results.consumerFailure as { calls: string[]; errors: string[] };
      // a2 and a3 were leased with a0 and a1, yet never handled before a1 was: they went back, and came again behind it.
      expect(calls.filter((call) => call.startsWith("a"))).toEqual(["a0#1", "a1#1", "a1#2", "a2#2", "a3#2"]);
      expect(calls).toContain("b0#1");
      expect(errors).toEqual(["a1 fails once"]);
      await expect
        .poll(() => broker.server.broker.getQueue("go-fifo-retry.fifo").counts)
        .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe("with a broker that requires tokens", () => {
    const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
    let auth: AuthHarness;
    beforeAll(async () => {
      auth = await startAuthHarness([root]);
    });
    afterAll(async () => {
      await auth?.stop();
    });

    it("sends the bearer token on every call", async () => {
      const address = auth.server.address;
      expect((await checks("go-client-auth", ["--address", address, "--token", root.token])).roundtrip).toMatchObject({
        code: "OK",
      });
      expect(
        (await checks("go-client-auth", ["--address", address, "--token", "not-the-token"])).roundtrip,
      ).toMatchObject({ code: "UNAUTHENTICATED" });
      expect((await checks("go-client-auth", ["--address", address])).roundtrip).toMatchObject({
        code: "UNAUTHENTICATED",
      });
    }, 60_000);

    it("refuses a token a header cannot carry, without quoting it", async () => {
      const { dial } = await checks("go-client-auth", ["--address", auth.server.address, "--token", "two words"]);
      expect(dial!.error).toContain("printable ASCII");
      expect(dial!.error).not.toContain("two words");
    });
  });

  describe("over TLS", () => {
    const certs = useTestCerts(missing);
    let server: HoldshelfServer;
    beforeAll(async () => {
      const tls = await loadServerTls({
        certFile: certs.serverCert,
        keyFile: certs.serverKey,
        clientCaFile: certs.caA,
      });
      server = await startHoldshelfServer({ dataDir: join(certs.dir, "data"), listen: "127.0.0.1:0", tls: tls! });
    });
    afterAll(async () => {
      await server?.shutdown();
    });

    it("connects with the CA file and a client certificate, and fails fast with UNAVAILABLE without them", async () => {
      const address = server.address;
      const mutual = ["--tls-ca", certs.caA, "--tls-cert", certs.clientACert, "--tls-key", certs.clientAKey];
      expect((await checks("go-client-auth", ["--address", address, ...mutual])).roundtrip).toMatchObject({
        code: "OK",
      });
      const refused = [
        [], // plaintext
        ["--tls-ca", certs.caB, "--tls-cert", certs.clientACert, "--tls-key", certs.clientAKey], // the server's CA not trusted
        ["--tls-ca", certs.caA], // no client certificate
        ["--tls-ca", certs.caA, "--tls-cert", certs.clientBCert, "--tls-key", certs.clientBKey], // one from another CA
      ];
      for (const args of refused) {
        expect(
          (await checks("go-client-auth", ["--address", address, ...args])).roundtrip,
          args.join(" "),
        ).toMatchObject({ code: "UNAVAILABLE" });
      }
    }, 120_000);

    it("says which TLS file is wrong", async () => {
      const { dial } = await checks("go-client-auth", [
        "--address",
        server.address,
        "--tls-ca",
        certs.caA,
        "--tls-cert",
        certs.clientACert,
      ]);
      expect(dial!.error).toContain("both CertFile and KeyFile");
    });
  });

  describe("beyond loopback", () => {
    // An address beyond loopback (this machine's LAN address, or 0.0.0.0): what a client may not reach in plaintext by default.
    const lan = nonLoopbackAddress();
    const certs = useTestCerts(missing);
    let secure: HoldshelfServer;
    let plain: HoldshelfServer;
    beforeAll(async () => {
      const { cert, key } = await issueServerCert(certs, "lan", lan);
      const tls = await loadServerTls({ certFile: cert, keyFile: key });
      secure = await startHoldshelfServer({ dataDir: join(certs.dir, "secure"), listen: `${lan}:0`, tls: tls! });
      plain = await startHoldshelfServer({ dataDir: join(certs.dir, "plain"), listen: `${lan}:0` });
    }, 60_000);
    afterAll(async () => {
      await secure?.shutdown();
      await plain?.shutdown();
    });

    it("connects over TLS with the system's roots by default, which SSL_CERT_FILE points at the test CA", async () => {
      const trusted = { SSL_CERT_FILE: certs.caA };
      expect((await checks("go-client-auth", ["--address", secure.address], trusted)).roundtrip).toMatchObject({
        code: "OK",
      });
      // The same call to the plaintext broker fails the handshake: no byte went in plaintext.
      expect((await checks("go-client-auth", ["--address", plain.address], trusted)).roundtrip).toMatchObject({
        code: "UNAVAILABLE",
      });
      // With the system's own roots, which do not hold the test CA, the broker's certificate is not trusted.
      expect((await checks("go-client-auth", ["--address", secure.address])).roundtrip).toMatchObject({
        code: "UNAVAILABLE",
      });
    }, 120_000);

    it("reaches a plaintext broker only with WithPlaintext, and sends a token there only with AllowPlaintextToken", async () => {
      const address = plain.address;
      expect((await checks("go-client-auth", ["--address", address, "--plaintext"])).roundtrip).toMatchObject({
        code: "OK",
      });
      const { dial } = await checks("go-client-auth", ["--address", address, "--plaintext", "--token", "lan-token"]);
      expect(dial!.error).toContain("refusing to send a bearer token in plaintext");
      expect(dial!.error).not.toContain("lan-token");
      const allowed = ["--plaintext", "--allow-plaintext-token", "--token", "lan-token"];
      expect((await checks("go-client-auth", ["--address", address, ...allowed])).roundtrip).toMatchObject({
        code: "OK",
      });
    }, 120_000);
  });

  describe("with typed attributes, through the SQS endpoint", () => {
    let sqs: SqsHarness;
    beforeAll(async () => {
      sqs = await startSqsHarness();
    });
    afterAll(async () => {
      await sqs?.stop();
    });

    it("sends Number, Binary and labelled String attributes that an SQS client receives as sent", async () => {
      const url = (await sqs.sqs.send(new CreateQueueCommand({ QueueName: "go-typed-out" }))).QueueUrl!;
      const { sent } = await checks("go-client-typed", [
        "--address",
        sqs.server.address,
        "--queue",
        "go-typed-out",
        "--mode",
        "send",
      ]);
      const received = [];
      while (received.length < 3) {
        const { Messages } = await sqs.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ["All"],
          }),
        );
        received.push(...(Messages ?? []));
      }
      // The SDK checked each message's MD5OfMessageAttributes against what it received.
      expect(received.map((m) => m.MessageId).sort()).toEqual([...(sent!.ids as string[])].sort());
      for (const message of received) {
        const n = Number(message.Body!.slice("typed-".length));
        expect(message.MessageAttributes).toEqual({
          tenant: { DataType: "String", StringValue: "acme" },
          price: { DataType: "Number", StringValue: `${n}.99` },
          thumb: { DataType: "Binary.png", BinaryValue: Uint8Array.of(0x89, 0x50, 0x4e, 0x47, n) },
          label: { DataType: "String.json", StringValue: `{"n":${n}}` },
        });
      }
    }, 60_000);

    it("receives what an SQS client sent, a plain String in Attributes and the others in TypedAttributes", async () => {
      const url = (await sqs.sqs.send(new CreateQueueCommand({ QueueName: "go-typed-in" }))).QueueUrl!;
      const { MessageId } = await sqs.sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: "from SQS",
          MessageAttributes: {
            tenant: { DataType: "String", StringValue: "acme" },
            amount: { DataType: "Number.cents", StringValue: "1999" },
            blob: { DataType: "Binary", BinaryValue: Uint8Array.of(9, 8, 7) },
            note: { DataType: "String.note", StringValue: "fragile" },
          },
        }),
      );
      const { received } = await checks("go-client-typed", [
        "--address",
        sqs.server.address,
        "--queue",
        "go-typed-in",
        "--mode",
        "receive",
      ]);
      expect(received!.messages).toEqual([
        {
          id: MessageId,
          body: "from SQS",
          attributes: { tenant: "acme" },
          typedAttributes: {
            amount: { dataType: "Number.cents", stringValue: "1999", binaryValue: null },
            blob: { dataType: "Binary", stringValue: "", binaryValue: Buffer.of(9, 8, 7).toString("base64") },
            note: { dataType: "String.note", stringValue: "fragile", binaryValue: null },
          },
        },
      ]);
    }, 60_000);
  });

  describe("its Consumer refused by the broker", () => {
    const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
    const elsewhere = makeToken("elsewhere", { queues: "elsewhere-*", allow: ["receive"] });
    const sender = makeToken("sender", { queues: "*", allow: ["send"] });
    let auth: AuthHarness;
    beforeAll(async () => {
      auth = await startAuthHarness([root, elsewhere, sender]);
      await auth.client(root.token).createQueue({ name: "go-guarded" });
    });
    afterAll(async () => {
      await auth?.stop();
    });

    /** Runs the refusal program until Run returns, and returns its events. */
    async function refused(args: string[]): Promise<Record<string, unknown>[]> {
      const program = startJsonLines(bin("go-client-refusal"), args);
      expect(await program.exited(), program.stderr()).toBe(0);
      return program.events;
    }

    it("returns QUEUE_NOT_FOUND from Run at once for a queue that does not exist, reporting nothing", async () => {
      const events = await refused(["--address", broker.server.address, "--queue", "go-no-such-queue"]);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        check: "run",
        code: "NOT_FOUND",
        reason: "QUEUE_NOT_FOUND",
        queueNotFound: true,
      });
      expect(events[0]!.error).toContain("consumer of queue go-no-such-queue");
      expect(events[0]!.ms as number).toBeLessThan(5_000);
    }, 60_000);

    it("returns PERMISSION_DENIED from Run at once when the token may not read the queue, or may not receive from it", async () => {
      const address = auth.server.address;
      for (const token of [elsewhere.token, sender.token]) {
        const events = await refused(["--address", address, "--queue", "go-guarded", "--token", token]);
        expect(events, token === sender.token ? "sender" : "elsewhere").toEqual([
          expect.objectContaining({ check: "run", code: "PERMISSION_DENIED", permissionDenied: true }),
        ]);
        expect(events[0]!.ms as number).toBeLessThan(5_000);
      }
      const [unknown] = await refused(["--address", address, "--queue", "go-guarded", "--token", "not-the-token"]);
      expect(unknown).toMatchObject({ check: "run", code: "UNAUTHENTICATED", reason: "TOKEN_INVALID" });
    }, 60_000);

    it.each([
      ["on Subscribe", []],
      ["on Receive", ["--receive"]],
    ])(
      "stops and returns QUEUE_NOT_FOUND when its queue is deleted while it runs, %s",
      async (_, mode) => {
        const queue = `go-doomed${mode.length}`;
        await broker.rpc.createQueue({ name: queue });
        await broker.rpc.send({ queue, body: new TextEncoder().encode("before") });
        const program = startJsonLines(bin("go-client-refusal"), [
          "--address",
          broker.server.address,
          "--queue",
          queue,
          ...mode,
        ]);
        await program.waitFor((event) => event.check === "handled");
        await broker.rpc.deleteQueue({ name: queue });
        const deletedAt = Date.now();
        expect(await program.exited(), program.stderr()).toBe(0);
        // Well within the 10 s grace period: nothing waits for a queue that is gone.
        expect(Date.now() - deletedAt).toBeLessThan(5_000);
        expect(program.events.at(-1)).toMatchObject({ check: "run", reason: "QUEUE_NOT_FOUND", queueNotFound: true });
      },
      60_000,
    );

    it("keeps retrying a broker that is not there yet, and consumes once it has started", async () => {
      const dir = await makeTempDir();
      const listen = `127.0.0.1:${await freePort()}`;
      try {
        // The queue and its message exist; the broker that holds them is down when the Consumer starts.
        const first = await startHoldshelfServer({ dataDir: dir.path, listen });
        const client = new QueueClient(listen);
        await client.createQueue("go-later");
        await client.send("go-later", "waited");
        client.close();
        await first.shutdown();
        const program = startJsonLines(bin("go-client-refusal"), [
          "--address",
          listen,
          "--queue",
          "go-later",
          "--stop-after",
          "1",
        ]);
        await program.waitFor((event) => event.check === "reported" && event.code === "UNAVAILABLE");
        const second = await startHoldshelfServer({ dataDir: dir.path, listen });
        try {
          expect(await program.exited(), program.stderr()).toBe(0);
        } finally {
          await second.shutdown();
        }
        expect(program.events.filter((event) => event.check === "handled")).toEqual([
          { check: "handled", body: "waited" },
        ]);
        expect(program.events.at(-1)).toMatchObject({ check: "run", error: "" });
      } finally {
        await dir.remove();
      }
    }, 60_000);
  });

  it("counts a handler's panic as a failure, keeps LastCheckpoint and a cancelled Checkpoint straight, and a dead-lettered message's late delete as a lost lease", async () => {
    const { consumer, deadLettered } = await checks("go-client-consumer", [
      "--address",
      broker.server.address,
      "--queue",
      "go-consumer",
    ]);
    // A handled message dead-lettered before its ack or delete is a lost lease, not a success, on either path.
    expect(deadLettered).toEqual({
      check: "deadLettered",
      "subscribe=true": "DEAD_LETTERED",
      "subscribe=false": "DEAD_LETTERED",
    });
    expect(consumer).toEqual({
      check: "consumer",
      deliveries: [1, 2],
      reported: "1: holdshelf: handler panicked: boom",
      lastCheckpoint: "half-way",
      cancelledCheckpoint: true,
    });
    await expect
      .poll(() => broker.server.broker.getQueue("go-consumer").counts)
      .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  }, 60_000);

  describe("its Consumer on Subscribe", () => {
    let results: Record<string, Record<string, unknown>>;
    const counts = (queue: string) => broker.server.broker.getQueue(queue).counts;
    beforeAll(async () => {
      results = await checks("go-client-subscribe", ["--address", broker.server.address, "--queue-prefix", "go-sub"]);
    }, 90_000);

    it("consumes, acks, fails and renews on one Subscribe stream, with no Receive, Delete or Heartbeat", async () => {
      expect(results.consume).toMatchObject({
        deliveries: { "ok-0": [1], "ok-1": [1], "ok-2": [1], "ok-3": [1], fail: [1, 2], later: [1, 2], slow: [1] },
        // Its handler outlasted its 2 s lease 2.25 times over: renewed on the stream, never lost.
        slowCancelled: false,
        reported: ["fail: fails once", "later: holdshelf: retry in 300ms"],
      });
      expect(results.consume!.laterGapMs as number).toBeGreaterThanOrEqual(290);
      const calls = results.consume!.calls as Record<string, number>;
      expect(calls.Subscribe).toBe(1);
      expect(Object.keys(calls).sort()).toEqual(["CreateQueue", "GetQueue", "Send", "Subscribe"]);
      await expect.poll(() => counts("go-sub-consume")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("falls back to Receive, Heartbeat and Delete on a broker that answers Subscribe UNIMPLEMENTED, reporting nothing", async () => {
      expect(results.fallback).toMatchObject({ handled: ["old-0", "old-1", "old-2"], reported: [] });
      const calls = results.fallback!.calls as Record<string, number>;
      expect(calls).toMatchObject({ Subscribe: 1, Heartbeat: 1, Delete: 3 });
      expect(calls.Receive).toBeGreaterThanOrEqual(1);
      await expect.poll(() => counts("go-sub-fallback")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("keeps a held message's receipt handle across a cut connection: the new stream renews it, then checkpoints and acks it", async () => {
      expect(results.reconnect).toMatchObject({ receiveCounts: [1], checkpointError: "", left: 0 });
      expect(results.reconnect!.reported).toContain("UNAVAILABLE");
      const calls = results.reconnect!.calls as Record<string, number>;
      expect(calls.Subscribe).toBeGreaterThanOrEqual(2);
      expect(calls).not.toHaveProperty("Receive");
      expect(calls).not.toHaveProperty("Delete");
      await expect.poll(() => counts("go-sub-reconnect")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe("its batching Send", () => {
    type Outcome = { body: string; id?: string; sequenceNumber?: string; reason?: string; fields?: string[] };
    let results: Record<string, Record<string, unknown>>;
    const visible = (queue: string) => broker.server.broker.getQueue(queue).counts.visible;
    beforeAll(async () => {
      results = await checks("go-client-batching", ["--address", broker.server.address, "--queue-prefix", "go-batch"]);
    }, 90_000);

    it("gathers concurrent sends into few SendBatch calls, each send with its own message id", () => {
      const outcomes = results.batched!.outcomes as Outcome[];
      const ids = outcomes.map((o) => o.id);
      expect(new Set(ids).size).toBe(40);
      const calls = results.batched!.calls as Record<string, number>;
      expect(calls.SendBatch).toBeGreaterThanOrEqual(1);
      expect((calls.SendBatch ?? 0) + (calls.Send ?? 0)).toBeLessThanOrEqual(10);
      expect(visible("go-batch-batched")).toBe(40);
    });

    it("fails only the send the broker refused, with its reason and field, and stores the rest of its batch", () => {
      const outcomes = results.entryError!.outcomes as Outcome[];
      expect(outcomes[2]).toEqual({ body: "g-2", reason: "MESSAGE_GROUP_ID_REQUIRED", fields: ["message_group_id"] });
      for (const o of [outcomes[0], outcomes[1], outcomes[3], outcomes[4]])
        expect(o!.sequenceNumber).toMatch(/^\d{20}$/);
      // The batch the refusal failed, then the four others again.
      expect(results.entryError!.calls).toEqual({ SendBatch: 2 });
      expect(visible("go-batch-groups.fifo")).toBe(4);
    });

    it("sends what waits when the client closes, and every send alone with a delay of 0", () => {
      expect(results.flush).toMatchObject({ callsBeforeClose: {}, calls: { SendBatch: 1 } });
      expect((results.flush!.outcomes as Outcome[]).every((o) => o.id !== undefined)).toBe(true);
      expect(visible("go-batch-flush")).toBe(3);
      expect(results.unbatched!.calls).toEqual({ Send: 5 });
      expect(visible("go-batch-unbatched")).toBe(5);
    });
  });

  it("refuses to run a Consumer on a queue whose visibility timeout is 0 without its own", async () => {
    const client = new QueueClient(broker.server.address);
    await client.createQueue("go-no-lease", { visibilityTimeoutMs: 0 });
    client.close();
    const worker = startJsonLines(bin("go-conformance-worker"), [
      "--address",
      broker.server.address,
      "--queue",
      "go-no-lease",
    ]);
    expect(await worker.exited()).toBe(1);
    expect(worker.stderr()).toContain(
      "queue go-no-lease has a visibility timeout of 0: set ConsumerOptions.VisibilityTimeout",
    );
  }, 60_000);

  describe("its examples", () => {
    const running: ReturnType<typeof startJsonLines>[] = [];
    afterEach(async () => {
      for (const program of running.splice(0)) {
        if (program.child.exitCode === null && program.child.signalCode === null) program.child.kill("SIGKILL");
        await program.exited();
      }
    });

    it("send with the producer and process with the worker, which stops on SIGTERM with status 0", async () => {
      const { stdout } = await run(bin("go-producer"), [
        "--address",
        broker.server.address,
        "--queue",
        "go-examples",
        "--count",
        "5",
      ]);
      const sent = stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" "));
      expect(sent.every(([word]) => word === "sent")).toBe(true);
      expect(sent).toHaveLength(5);

      const worker = spawn(bin("go-worker"), ["--address", broker.server.address, "--queue", "go-examples"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      const allProcessed = new Promise<void>((resolve) =>
        worker.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          if (output.split("\n").filter((line) => line.startsWith("processed ")).length === 5) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => worker.on("close", resolve));
      await allProcessed;
      worker.kill("SIGTERM");
      expect(await exited).toBe(0);
      const processed = output
        .trim()
        .split("\n")
        .map((line) => line.split(" "));
      expect(processed.map(([, id]) => id).sort()).toEqual(sent.map(([, id]) => id).sort());
      expect(processed.map(([, , body]) => body).sort()).toEqual(["job-0", "job-1", "job-2", "job-3", "job-4"]);
      await expect
        .poll(() => broker.server.broker.getQueue("go-examples").counts)
        .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    }, 60_000);
  });
});
