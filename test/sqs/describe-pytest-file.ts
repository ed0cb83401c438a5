import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPython } from "../support/python-package.js";
import { skipWithout } from "../support/required-tools.js";
import { jsonBoto3Python, missingBoto3, runPytest, type PytestRun } from "./run-pytest.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

/**
 * A suite that runs one pytest file of SQS checks against a real broker: with
 * Debian's boto3 1.26 (the query protocol; CI installs it, so it fails there
 * when missing) and, where one is installed, a current boto3 (the JSON
 * protocol; optional, as CI's Debian image has none), each test failing with
 * pytest's report if any check fails. `does` names what a run shows, as in
 * "passes test_x.py" or "answers as AWS did".
 */
export function describePytestFile(title: string, pytestFile: string, does: string): void {
  describe(title, () => {
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
      `${does} with Debian's boto3 (query protocol)`,
      async () => {
        expect(missingBoto3, "Debian packages missing (see .ci/run)").toEqual([]);
        await passes({ python: systemPython, protocol: "query" });
      },
      150_000,
    );

    it.skipIf(jsonBoto3Python === undefined)(
      `${does} with a current boto3 (JSON protocol)`,
      async () => {
        await passes({ python: jsonBoto3Python!, protocol: "json" });
      },
      150_000,
    );
  });
}
