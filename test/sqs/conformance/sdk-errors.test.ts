/**
 * AWS's recorded error answers (aws-errors.json) through @aws-sdk/client-sqs,
 * the JSON protocol: each case's code and HTTP status, and apart from them its
 * exact message. Parts holdshelf still answers otherwise are known
 * differences (the item in the facts file), asserted to fail, so
 * that fixing one fails its test until the integrator removes its `differs`.
 */
import * as sqsSdk from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSqsHarness, type SqsHarness } from "../sqs-harness.js";
import {
  awsErrorCases,
  caseTitle,
  differsOn,
  expandParams,
  type AnswerPart,
  type AwsErrorCase,
  type CaseCall,
} from "./aws-errors.js";

type CommandClass = new (input: unknown) => Parameters<sqsSdk.SQSClient["send"]>[0];

/** What the SDK reports of a failed call. */
interface SdkFailure {
  readonly name: string;
  readonly Code?: string;
  readonly message: string;
  readonly $metadata?: { httpStatusCode?: number };
}

describe("AWS's recorded errors over the JSON protocol (@aws-sdk/client-sqs)", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    h = await startSqsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  // Each test has its own queue: `part` keeps the two tests of a case apart.
  const answer = async (c: AwsErrorCase, index: number, part: AnswerPart) => {
    const name = `aws-${part}-${index}${c.fifo === true ? ".fifo" : ""}`;
    const attributes = { ...(c.fifo === true ? { FifoQueue: "true" } : {}), ...c.queueAttributes };
    const { QueueUrl } = await h.sqs.send(new sqsSdk.CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const queue = { name, url: QueueUrl!, goneUrl: h.urlOf(`aws-gone-${part}-${index}`) };
    const send = (call: CaseCall) => {
      const Command = (sqsSdk as unknown as Record<string, CommandClass>)[`${call.action}Command`]!;
      return h.sqs.send(new Command(expandParams(call.params, queue)));
    };
    for (const call of c.before ?? []) await send(call);
    const failure = await send(c).then(
      () => undefined,
      (error: unknown) => error as SdkFailure,
    );
    return {
      code: failure === undefined ? "(succeeded)" : (failure.Code ?? failure.name),
      status: failure?.$metadata?.httpStatusCode,
      message: failure?.message,
    };
  };

  awsErrorCases.forEach((c, index) => {
    (differsOn(c, "json", "code") ? it.fails : it)(caseTitle(c, "json", "code"), async () => {
      const { code, status } = await answer(c, index, "code");
      expect({ code, status }).toEqual({ code: c.code, status: c.status });
    });
    (differsOn(c, "json", "message") ? it.fails : it)(caseTitle(c, "json", "message"), async () => {
      expect((await answer(c, index, "message")).message).toBe(c.message);
    });
  });
});
