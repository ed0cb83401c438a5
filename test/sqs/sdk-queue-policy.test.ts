import {
  AddPermissionCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  RemovePermissionCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

// A policy as Terraform's aws_sqs_queue_policy or an SNS subscription sets it.
const snsPolicy = JSON.stringify({
  Version: "2012-10-17",
  Statement: [
    {
      Effect: "Allow",
      Principal: { Service: "sns.amazonaws.com" },
      Action: "sqs:SendMessage",
      Resource: "arn:aws:sqs:us-east-1:000000000000:q",
      Condition: { ArnEquals: { "aws:SourceArn": "arn:aws:sns:us-east-1:000000000000:topic" } },
    },
  ],
});

describe("SQS queue policies through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    h = await startSqsHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  const policyOf = async (QueueUrl: string): Promise<string | undefined> =>
    (await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["Policy"] }))).Attributes?.["Policy"];

  it("keeps a Policy from CreateQueue and SetQueueAttributes as given, returns it, and an empty one removes it", async () => {
    const { QueueUrl } = await h.sqs.send(
      new CreateQueueCommand({ QueueName: "q", Attributes: { Policy: snsPolicy } }),
    );
    expect(await policyOf(QueueUrl!)).toBe(snsPolicy);
    const all = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
    expect(all.Attributes!["Policy"]).toBe(snsPolicy);
    // The same policy again is the same queue; another is QueueAlreadyExists.
    await h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { Policy: snsPolicy } }));
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { Policy: "{}" } })),
      "QueueAlreadyExists",
      400,
      /attribute Policy/,
    );
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: "" } }));
    expect(await policyOf(QueueUrl!)).toBeUndefined();
    const other = JSON.stringify({ Version: "2012-10-17", Statement: [] });
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: other } }));
    expect(await policyOf(QueueUrl!)).toBe(other);
    // gRPC shows the same document, opaque.
    expect((await h.rpc.getQueue({ name: "q" })).queue!.config!.accessPolicy).toBe(other);
  });

  it("refuses a Policy that is not a JSON object or is over 8192 bytes with AWS's InvalidAttributeValue", async () => {
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "q" }));
    for (const Policy of ["{not json", "[1]", JSON.stringify({ Id: "x".repeat(8192) })]) {
      await expectSqsError(
        h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy } })),
        "InvalidAttributeValue",
        400,
        /^Invalid value for the parameter Policy\.$/,
      );
    }
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "other", Attributes: { Policy: "nope" } })),
      "InvalidAttributeValue",
      400,
    );
  });

  it("adds and removes permissions as AWS's recorded statements, with its errors for labels and actions", async () => {
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "q" }));
    const arn = `arn:aws:sqs:us-east-1:${testAccountId}:q`;
    const root = (account: string): string => `arn:aws:iam::${account}:root`;
    await h.sqs.send(
      new AddPermissionCommand({
        QueueUrl,
        Label: "crossaccountpermission",
        AWSAccountIds: ["668614515564", testAccountId],
        Actions: ["ReceiveMessage"],
      }),
    );
    const statement = (sid: string, principal: unknown, action: unknown) => ({
      Sid: sid,
      Effect: "Allow",
      Principal: { AWS: principal },
      Action: action,
      Resource: arn,
    });
    expect(JSON.parse((await policyOf(QueueUrl!))!)).toEqual({
      Version: "2008-10-17",
      Id: `${arn}/SQSDefaultPolicy`,
      Statement: [
        statement("crossaccountpermission", [root("668614515564"), root(testAccountId)], "SQS:ReceiveMessage"),
      ],
    });
    await h.sqs.send(new RemovePermissionCommand({ QueueUrl, Label: "crossaccountpermission" }));
    expect(await policyOf(QueueUrl!)).toBeUndefined();

    await h.sqs.send(
      new AddPermissionCommand({
        QueueUrl,
        Label: "one",
        AWSAccountIds: [testAccountId],
        Actions: ["ReceiveMessage"],
      }),
    );
    await expectSqsError(
      h.sqs.send(
        new AddPermissionCommand({ QueueUrl, Label: "one", AWSAccountIds: ["668614515564"], Actions: ["SendMessage"] }),
      ),
      "InvalidParameterValue",
      400,
      /^Value one for parameter Label is invalid\. Reason: Already exists\.$/,
    );
    await h.sqs.send(
      new AddPermissionCommand({
        QueueUrl,
        Label: "two",
        AWSAccountIds: [testAccountId],
        Actions: ["SendMessage", "DeleteMessage"],
      }),
    );
    expect(JSON.parse((await policyOf(QueueUrl!))!).Statement).toEqual([
      statement("one", root(testAccountId), "SQS:ReceiveMessage"),
      statement("two", root(testAccountId), ["SQS:SendMessage", "SQS:DeleteMessage"]),
    ]);
    await h.sqs.send(new RemovePermissionCommand({ QueueUrl, Label: "one" }));
    expect(JSON.parse((await policyOf(QueueUrl!))!).Statement.map((s: { Sid: string }) => s.Sid)).toEqual(["two"]);
    await h.sqs.send(new RemovePermissionCommand({ QueueUrl, Label: "two" }));
    await expectSqsError(
      h.sqs.send(new RemovePermissionCommand({ QueueUrl, Label: "two" })),
      "InvalidParameterValue",
      400,
      /^Value two for parameter Label is invalid\. Reason: can't find label\.$/,
    );
    await expectSqsError(
      h.sqs.send(new AddPermissionCommand({ QueueUrl, Label: "l", AWSAccountIds: ["1"], Actions: ["CreateQueue"] })),
      "InvalidParameterValue",
      400,
      /^Value SQS:CreateQueue for parameter ActionName is invalid\./,
    );
    const eight = ["SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility"];
    eight.push("GetQueueAttributes", "GetQueueUrl", "PurgeQueue", "ListDeadLetterSourceQueues");
    await expectSqsError(
      h.sqs.send(new AddPermissionCommand({ QueueUrl, Label: "l", AWSAccountIds: ["1"], Actions: eight })),
      "OverLimit",
      403,
      /^8 Actions were found, maximum allowed is 7\.$/,
    );
    // A statement added to a policy a client set keeps the client's document.
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: snsPolicy } }));
    await h.sqs.send(new AddPermissionCommand({ QueueUrl, Label: "all", AWSAccountIds: ["1"], Actions: ["*"] }));
    const edited = JSON.parse((await policyOf(QueueUrl!))!);
    expect(edited.Version).toBe("2012-10-17");
    expect(edited.Statement).toHaveLength(2);
    expect(edited.Statement[1]).toEqual(statement("all", root("1"), "SQS:*"));
    await expectSqsError(
      h.sqs.send(
        new AddPermissionCommand({ QueueUrl: h.urlOf("missing"), Label: "l", AWSAccountIds: ["1"], Actions: ["*"] }),
      ),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
  });
});
