/**
 * Queue policies and encryption attributes through boto3, unchanged: runs
 * test/sqs/python/test_boto3_queue_settings.py with pytest against a real broker, with Debian's boto3 1.26 (the query
 * protocol) and, where one is installed, a current boto3 (the JSON
 * protocol), failing with pytest's report if any of its tests fail.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPython } from "../support/python-package.js";
import { skipWithout } from "../support/required-tools.js";
import { jsonBoto3Python, missingBoto3, runPytest, type PytestRun } from "./run-pytest.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const pytestFile = fileURLToPath(new URL("./python/test_boto3_queue_settings.py", import.meta.url));

describe("queue policies and encryption attributes through boto3", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    h = await startSqsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const passes = async (how: PytestRun): Promise<void> => {
    const result = await runPytest(pytestFile, h, how);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ passed/);
  };

  it.skipIf(skipWithout(missingBoto3))(
    "passes test_boto3_queue_settings.py with Debian's boto3 (query protocol)",
    async () => {
      expect(missingBoto3, "Debian packages missing (see .ci/run)").toEqual([]);
      await passes({ python: systemPython, protocol: "query" });
    },
    150_000,
  );

  // Optional: CI's Debian image has no boto3 that speaks JSON (run-pytest.ts).
  it.skipIf(jsonBoto3Python === undefined)(
    "passes test_boto3_queue_settings.py with a current boto3 (JSON protocol)",
    async () => {
      await passes({ python: jsonBoto3Python!, protocol: "json" });
    },
    150_000,
  );
});
