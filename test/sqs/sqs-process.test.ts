import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { makeTempDir } from "../support/temp-dir.js";

type TempDir = Awaited<ReturnType<typeof makeTempDir>>;

const processTestTimeoutMs = 30_000;

describe("holdshelf serve with the SQS endpoint", () => {
  let dir: TempDir | undefined;
  let broker: BrokerProcess | undefined;
  afterEach(async () => {
    broker?.child.kill("SIGTERM");
    if (broker?.child.exitCode === null) await new Promise((resolve) => broker!.child.once("exit", resolve));
    broker = undefined;
    await dir?.remove();
  });

  it(
    "logs the endpoint's URL, where an unchanged SDK client works",
    async () => {
      dir = await makeTempDir();
      broker = await startBrokerProcess(join(dir.path, "data"), ["--sqs-listen", "127.0.0.1:0"]);
      const line = JSON.parse(
        broker
          .logs()
          .split("\n")
          .find((text) => text.includes('"holdshelf listening"'))!,
      ) as Record<string, string>;
      expect(line["sqsUrl"]).toBe(`http://${line["sqsAddress"]}`);
      const sqs = new SQSClient({
        endpoint: line["sqsUrl"]!,
        region: "us-east-1",
        credentials: { accessKeyId: "x", secretAccessKey: "y" },
      });
      try {
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "cli" }));
        expect(QueueUrl).toBe(`${line["sqsUrl"]}/000000000000/cli`);
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "hello" }));
        expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages![0]!.Body).toBe("hello");
      } finally {
        sqs.destroy();
      }
    },
    processTestTimeoutMs,
  );

  it(
    "keeps the default endpoint off when gRPC requires tokens and no access keys are given, and says why",
    async () => {
      dir = await makeTempDir();
      const authFile = join(dir.path, "auth.json");
      await writeFile(authFile, JSON.stringify({ tokens: [] }));
      // No --sqs-listen at all: the default endpoint, which must stay off here.
      broker = await startBrokerProcess(join(dir.path, "data"), ["--auth-file", authFile], { sqsDefault: true });
      const line = JSON.parse(
        broker
          .logs()
          .split("\n")
          .find((text) => text.includes('"holdshelf listening"'))!,
      ) as Record<string, string>;
      expect(line).toMatchObject({ sqsAddress: "off", sqsOffBecause: "--auth-file without --sqs-credentials" });
    },
    processTestTimeoutMs,
  );
});
