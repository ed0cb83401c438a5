/**
 * Debian's AWS CLI 2.9 (query protocol, its own bundled botocore), unchanged,
 * against the SQS endpoint: a message's whole life through `aws sqs`, its
 * JSON output read back, and an error as the CLI reports it.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const run = promisify(execFile);
// Debian's awscli: PATH's aws may be a pip one. CI installs it (.ci/run).
const aws = "/usr/bin/aws";
const missing = missingCommands([aws]);

/** How a run of the CLI ended. */
interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

describe.skipIf(skipWithout(missing))("the AWS CLI (query protocol) against the SQS endpoint", () => {
  let h: SqsHarness;
  let home: Awaited<ReturnType<typeof makeTempDir>>;
  beforeEach(async () => {
    expect(missing, "Debian's awscli is missing (see .ci/run)").toEqual([]);
    h = await startSqsHarness();
    home = await makeTempDir("holdshelf-awscli-");
  });
  afterEach(async () => {
    await h?.stop();
    await home?.remove();
  });

  /** Runs `aws sqs <args> --endpoint-url <endpoint>`, asynchronously: the broker runs in this process. */
  const sqs = (args: string[]): Promise<CliRun> =>
    run(aws, ["sqs", ...args, "--endpoint-url", h.endpoint, "--output", "json"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home.path,
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
        AWS_DEFAULT_REGION: "us-east-1",
        // Files that do not exist: no profile of this machine's user can change what the CLI sends.
        AWS_CONFIG_FILE: `${home.path}/absent-config`,
        AWS_SHARED_CREDENTIALS_FILE: `${home.path}/absent-credentials`,
        AWS_PAGER: "",
        // One attempt: the test sees each answer as the endpoint gave it.
        AWS_MAX_ATTEMPTS: "1",
      },
      timeout: 60_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        stdout: error.stdout ?? "",
        stderr: error.stderr ?? "",
      }),
    );

  /** The parsed JSON output of a run that must succeed. */
  const json = async (args: string[]): Promise<Record<string, unknown>> => {
    const result = await sqs(args);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout.trim() === "" ? {} : (JSON.parse(result.stdout) as Record<string, unknown>);
  };

  it("creates a queue, sends, receives and deletes a message with typed attributes, leaving the queue empty", async () => {
    const { QueueUrl } = await json([
      "create-queue",
      "--queue-name",
      "cli-work",
      "--attributes",
      "VisibilityTimeout=60",
    ]);
    expect(QueueUrl).toBe(h.urlOf("cli-work"));

    const body = 'quotes " and <tags> & CRLF\r\n, ünïcödé, emoji 🎉';
    const blob = Buffer.from([0, 1, 2, 0x3c, 0x26, 0xff]).toString("base64");
    // AWS CLI 2 takes and prints blobs as base64.
    const attributes = {
      text: { DataType: "String", StringValue: 'a "quoted" <value>' },
      count: { DataType: "Number", StringValue: "-12.5" },
      id: { DataType: "Number.int", StringValue: "42" },
      raw: { DataType: "Binary", BinaryValue: blob },
    };
    const sent = await json([
      "send-message",
      "--queue-url",
      h.urlOf("cli-work"),
      "--message-body",
      body,
      "--message-attributes",
      JSON.stringify(attributes),
    ]);
    expect(sent).toMatchObject({
      MessageId: expect.any(String),
      MD5OfMessageBody: createHash("md5").update(body, "utf8").digest("hex"),
    });

    const received = await json([
      "receive-message",
      "--queue-url",
      h.urlOf("cli-work"),
      "--attribute-names",
      "All",
      "--message-attribute-names",
      "All",
    ]);
    const messages = received.Messages as Record<string, unknown>[];
    expect(messages).toHaveLength(1);
    const [message] = messages as [Record<string, unknown>];
    expect(message.MessageId).toBe(sent.MessageId);
    expect(message.Body).toBe(body);
    expect(message.MD5OfBody).toBe(sent.MD5OfMessageBody);
    expect(message.MessageAttributes).toEqual(attributes);
    expect(message.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(message.Attributes).toMatchObject({
      ApproximateReceiveCount: "1",
      SentTimestamp: expect.stringMatching(/^\d+$/),
    });
    expect((await h.rpc.getQueue({ name: "cli-work" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 1n });

    const deleted = await sqs([
      "delete-message",
      "--queue-url",
      h.urlOf("cli-work"),
      "--receipt-handle",
      message.ReceiptHandle as string,
    ]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await h.rpc.getQueue({ name: "cli-work" })).queue!.stats).toMatchObject({
      visible: 0n,
      inFlight: 0n,
      delayed: 0n,
    });
  }, 60_000);

  it("exits non-zero with SQS's error code for a queue that does not exist", async () => {
    const result = await sqs(["get-queue-url", "--queue-name", "absent"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("AWS.SimpleQueueService.NonExistentQueue");
    expect(result.stderr).toContain("GetQueueUrl");
  }, 60_000);
});
