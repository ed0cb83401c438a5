import fc from "fast-check";
import { prototypeKeys } from "./sqs-fuzz-arbitraries.js";

// The attributes issue #35 adds (queue policies, KMS and SQS-managed
// encryption, AWSTraceHeader). The fuzzers send them where the whole
// request must be refused whether or not the endpoint supports them yet:
// well-formed values beside a poisoned member (all or nothing), and values
// no version may take. So the invariant is the same before and after the
// support lands: a clear 4xx error, nothing stored changes, no crash.

const text = fc.string({ unit: fc.constantFrom(..."abcXYZ019 -_.:/*\u00e9\u4e2d\ud83d\ude00"), maxLength: 16 });
const arn = fc
  .tuple(fc.constantFrom("sqs", "sns", "iam", "*"), fc.stringMatching(/^\d{12}$/), text)
  .map(([service, account, name]) => `arn:aws:${service}:us-east-1:${account}:${name}`);
const oneOrMany = <T>(item: fc.Arbitrary<T>) => fc.oneof(item, fc.array(item, { maxLength: 3 }));

/** A policy statement: IAM's members, with odd values, and prototype keys now and then. */
const statement = fc
  .record(
    {
      Sid: text,
      Effect: fc.constantFrom("Allow", "Deny", "allow", ""),
      Principal: fc.oneof(
        fc.constant("*"),
        fc.record({ AWS: oneOrMany(fc.oneof(arn, fc.stringMatching(/^\d{12}$/))) }),
      ),
      Action: oneOrMany(fc.constantFrom("SQS:SendMessage", "sqs:*", "SQS:ReceiveMessage", "*", "sqs:Nope")),
      Resource: oneOrMany(arn),
      Condition: fc.record({ ArnEquals: fc.record({ "aws:SourceArn": arn }) }),
    },
    { requiredKeys: ["Effect"] },
  )
  .chain((members) =>
    fc.dictionary(fc.constantFrom(...prototypeKeys), text, { maxKeys: 1 }).map((extra) => ({ ...extra, ...members })),
  );

/** Policy documents as Terraform, CDK and SNS write them, and odder ones: a JSON text each. */
export const policyDocuments: fc.Arbitrary<string> = fc
  .record(
    {
      Version: fc.constantFrom("2012-10-17", "2008-10-17", "1999-01-01"),
      Id: text,
      Statement: fc.oneof(statement, fc.array(statement, { maxLength: 3 })),
    },
    { requiredKeys: ["Statement"] },
  )
  .map((document) => JSON.stringify(document));

/** Policies no version may store: not JSON, cut short, or far past any size limit. */
export const brokenPolicies: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("{", "not json", '{"Statement":', "{'Version':'2012-10-17'}", '{"a":1,}'),
  policyDocuments.chain((document) => fc.nat({ max: document.length - 2 }).map((at) => document.slice(0, at + 1))),
  policyDocuments.map((document) => JSON.stringify({ Padding: "p".repeat(200_000), Document: document })),
);

/** KMS and SQS-managed encryption settings as infrastructure code sets them. */
export const encryptionAttributes: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    KmsMasterKeyId: fc.oneof(fc.constantFrom("alias/aws/sqs", ""), text, arn),
    KmsDataKeyReusePeriodSeconds: fc.integer({ min: 60, max: 86_400 }).map(String),
    SqsManagedSseEnabled: fc.constantFrom("true", "false"),
  },
  { requiredKeys: [] },
);

/** Encryption settings no version may take: periods out of AWS's 60 to 86400, non-booleans, KMS and SQS-managed at once. */
export const brokenEncryptionAttributes: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc
    .constantFrom("59", "86401", "-1", "abc", "1.5", "1e3", "99999999999999999999")
    .map((period) => ({ KmsDataKeyReusePeriodSeconds: period })),
  fc.constantFrom("maybe", "yes", "enabled").map((enabled) => ({ SqsManagedSseEnabled: enabled })),
  fc.constant({ KmsMasterKeyId: "alias/aws/sqs", SqsManagedSseEnabled: "true" }),
);

/** AWSTraceHeader values as X-Ray and OpenTelemetry's AWS propagator write them, and odder text. */
export const traceHeaders: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.stringMatching(/^[0-9a-f]{8}$/), fc.stringMatching(/^[0-9a-f]{24}$/), fc.stringMatching(/^[0-9a-f]{16}$/))
    .map(([time, id, parent]) => `Root=1-${time}-${id};Parent=${parent};Sampled=1`),
  text.filter((value) => value.length > 0),
);

/** MessageSystemAttributes no version may take: other names, other types, no value. */
export const brokenSystemAttributes: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  traceHeaders.map((value) => ({ AWSTraceHeader: { DataType: "Number", StringValue: value } })),
  fc.constant({ AWSTraceHeader: { DataType: "Binary", BinaryValue: "AAAA" } }),
  fc.constant({ AWSTraceHeader: { DataType: "String" } }),
  fc
    .tuple(fc.constantFrom("Nope", "AWSTraceHeaders", "awstraceheader", ...prototypeKeys), traceHeaders)
    .map(
      ([name, value]) =>
        JSON.parse(`{${JSON.stringify(name)}:${JSON.stringify({ DataType: "String", StringValue: value })}}`) as Record<
          string,
          unknown
        >,
    ),
);
