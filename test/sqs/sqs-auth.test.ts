import {
  AddPermissionCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempDir } from "../support/temp-dir.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const admin = { accessKeyId: "AKIAADMIN0000000000A", secretAccessKey: "admin-secret-0123456789" };
const ordersSender = { accessKeyId: "AKIAORDERS000000000B", secretAccessKey: "orders-secret-0123456789" };
const reader = { accessKeyId: "AKIAREADER0000000000D", secretAccessKey: "reader-secret-0123456789" };
const ordersAdmin = { accessKeyId: "AKIAORDERSADMIN0000E", secretAccessKey: "orders-admin-secret-0123456789" };
const newcomer = { accessKeyId: "AKIANEWCOMER0000000C", secretAccessKey: "newcomer-secret-0123456789" };

function keysFile(
  keys: { name: string; key: typeof admin; permissions: { queues: string; allow: string[] }[] }[],
): string {
  return JSON.stringify({
    keys: keys.map(({ name, key, permissions }) => ({
      name,
      accessKeyId: key.accessKeyId,
      secretAccessKey: key.secretAccessKey,
      permissions,
    })),
  });
}

describe("the SQS endpoint with access keys (--sqs-credentials)", () => {
  let h: SqsHarness;
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let credentialsFile: string;
  let adminSqs: SQSClient;
  let senderSqs: SQSClient;
  beforeEach(async () => {
    dir = await makeTempDir();
    credentialsFile = join(dir.path, "sqs-keys.json");
    await writeFile(
      credentialsFile,
      keysFile([
        { name: "ops", key: admin, permissions: [{ queues: "*", allow: ["admin", "send", "receive"] }] },
        { name: "orders-service", key: ordersSender, permissions: [{ queues: "orders-*", allow: ["send"] }] },
        { name: "reader", key: reader, permissions: [{ queues: "*", allow: ["receive"] }] },
        { name: "orders-admin", key: ordersAdmin, permissions: [{ queues: "orders-*", allow: ["admin"] }] },
      ]),
    );
    // The real clock: signatures carry real dates.
    h = await startSqsHarness({ sqs: { credentialsFile } });
    adminSqs = h.client(admin);
    senderSqs = h.client(ordersSender);
    for (const name of ["orders-1", "billing"]) await adminSqs.send(new CreateQueueCommand({ QueueName: name }));
  });
  afterEach(async () => {
    await h.stop();
    await dir.remove();
  });

  it("lets each key do what its permissions allow", async () => {
    await senderSqs.send(new SendMessageCommand({ QueueUrl: h.urlOf("orders-1"), MessageBody: "paid" }));
    const { Messages } = await adminSqs.send(
      new ReceiveMessageCommand({ QueueUrl: h.urlOf("orders-1"), MessageSystemAttributeNames: ["SenderId"] }),
    );
    expect(Messages![0]!.Body).toBe("paid");
    // holdshelf keeps no sender: SenderId is the account, whoever signed.
    expect(Messages![0]!.Attributes).toEqual({ SenderId: "000000000000" });
    // A key sees only the queues it holds a permission on.
    expect((await senderSqs.send(new ListQueuesCommand({}))).QueueUrls).toEqual([h.urlOf("orders-1")]);
    expect((await adminSqs.send(new ListQueuesCommand({}))).QueueUrls).toEqual([
      h.urlOf("billing"),
      h.urlOf("orders-1"),
    ]);
  });

  it("refuses what a key may not do with AccessDenied, before looking the queue up", async () => {
    await expectSqsError(
      senderSqs.send(new CreateQueueCommand({ QueueName: "orders-2" })),
      "AccessDenied",
      403,
      /admin/,
    );
    // Also for a queue that exists: CreateQueue needs admin either way.
    await expectSqsError(
      senderSqs.send(new CreateQueueCommand({ QueueName: "orders-1" })),
      "AccessDenied",
      403,
      /admin/,
    );
    await expectSqsError(
      senderSqs.send(new ReceiveMessageCommand({ QueueUrl: h.urlOf("orders-1") })),
      "AccessDenied",
      403,
      /receive/,
    );
    await expectSqsError(
      senderSqs.send(new SendMessageCommand({ QueueUrl: h.urlOf("billing"), MessageBody: "x" })),
      "AccessDenied",
      403,
    );
    // The same answer for a queue that does not exist: a refusal tells nothing.
    await expectSqsError(
      senderSqs.send(new SendMessageCommand({ QueueUrl: h.urlOf("absent"), MessageBody: "x" })),
      "AccessDenied",
      403,
    );
    // A queue policy is part of the queue's configuration: editing it needs admin, and grants nothing itself.
    await expectSqsError(
      senderSqs.send(
        new AddPermissionCommand({ QueueUrl: h.urlOf("orders-1"), Label: "l", AWSAccountIds: ["1"], Actions: ["*"] }),
      ),
      "AccessDenied",
      403,
      /admin/,
    );
    expect((await h.rpc.getQueue({ name: "billing" })).queue!.stats!.visible).toBe(0n);
  });

  it("asks for admin on the dead-letter queue only of a change that sets RedrivePolicy", async () => {
    const billingArn = "arn:aws:sqs:us-east-1:000000000000:billing";
    const redrivePolicy = JSON.stringify({ deadLetterTargetArn: billingArn, maxReceiveCount: 3 });
    await adminSqs.send(
      new SetQueueAttributesCommand({ QueueUrl: h.urlOf("orders-1"), Attributes: { RedrivePolicy: redrivePolicy } }),
    );
    // orders-admin may not choose billing as a dead-letter queue, but may change the rest of orders-1.
    const ordersAdminSqs = h.client(ordersAdmin);
    const url = h.urlOf("orders-1");
    await ordersAdminSqs.send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "45" } }),
    );
    await ordersAdminSqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { team: "orders" } }));
    await ordersAdminSqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ["team"] }));
    await expectSqsError(
      ordersAdminSqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { RedrivePolicy: redrivePolicy } }),
      ),
      "AccessDenied",
      403,
    );
    const { Attributes } = await adminSqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["VisibilityTimeout", "RedrivePolicy"] }),
    );
    expect(Attributes).toEqual({ VisibilityTimeout: "45", RedrivePolicy: redrivePolicy });
  });

  it("refuses unsigned requests, unknown keys and wrong secrets as AWS does", async () => {
    const unsigned = await fetch(`${h.endpoint}/`, {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.ListQueues" },
      body: "{}",
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get("x-amzn-query-error")).toBe("MissingAuthenticationToken;Sender");
    await expectSqsError(h.client(newcomer).send(new ListQueuesCommand({})), "InvalidClientTokenId", 403);
    await expectSqsError(
      h.client({ ...admin, secretAccessKey: "not-the-secret-0123456789" }).send(new ListQueuesCommand({})),
      "SignatureDoesNotMatch",
      403,
    );
  });

  it("keeps a ReceiveRequestAttemptId to the key that used it: another key's retry cannot take over its leases", async () => {
    const queueUrl = (
      await adminSqs.send(new CreateQueueCommand({ QueueName: "ledger.fifo", Attributes: { FifoQueue: "true" } }))
    ).QueueUrl!;
    await adminSqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: "entry",
        MessageGroupId: "a",
        MessageDeduplicationId: "1",
      }),
    );
    const receive = async (sqs: SQSClient) =>
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, ReceiveRequestAttemptId: "attempt-1" })))
        .Messages ?? [];
    const [mine] = await receive(adminSqs);
    expect(mine!.Body).toBe("entry");
    // The same id from another key is that key's own new receive: the group is locked.
    expect(await receive(h.client(reader))).toEqual([]);
    expect((await receive(adminSqs)).map((message) => message.ReceiptHandle)).toEqual([mine!.ReceiptHandle]);
  });

  it("re-reads the file on reload: a new key works, a removed one no longer does, and a bad file keeps the keys", async () => {
    await writeFile(
      credentialsFile,
      keysFile([{ name: "newcomer", key: newcomer, permissions: [{ queues: "*", allow: ["admin"] }] }]),
    );
    expect(await h.server.reloadAuth()).toBe(true);
    expect((await h.client(newcomer).send(new ListQueuesCommand({}))).QueueUrls).toHaveLength(2);
    await expectSqsError(adminSqs.send(new ListQueuesCommand({})), "InvalidClientTokenId", 403);
    await writeFile(credentialsFile, "{not json");
    expect(await h.server.reloadAuth()).toBe(false);
    expect((await h.client(newcomer).send(new ListQueuesCommand({}))).QueueUrls).toHaveLength(2);
  });
});
