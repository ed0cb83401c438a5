/**
 * AWS's recorded error answers over the query protocol, through Debian's
 * boto3 1.26 / botocore 1.29, unchanged: runs
 * test/sqs/python/test_boto3_aws_errors.py with pytest against a real
 * broker, and fails with pytest's report if any of its tests fail.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithout } from "../support/required-tools.js";
import { missingBoto3, runPytest } from "./run-pytest.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const pytestFile = fileURLToPath(new URL("./python/test_boto3_aws_errors.py", import.meta.url));

describe.skipIf(skipWithout(missingBoto3))("AWS's recorded error answers through boto3 (query protocol)", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    expect(missingBoto3, "Debian packages missing (see .ci/run)").toEqual([]);
    h = await startSqsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("passes test_boto3_aws_errors.py: codes, statuses and messages as AWS words them", async () => {
    const result = await runPytest(pytestFile, h);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ passed/);
  }, 150_000);
});
