/**
 * Debian's boto3 1.26 / botocore 1.29 (query protocol), unchanged, against
 * the SQS endpoint: runs test/sqs/python/test_boto3_sqs.py with pytest against
 * a real broker, and fails with pytest's report if any of its tests fail.
 */
import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemPython } from "../support/python-package.js";
import { skipWithout } from "../support/required-tools.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

const run = promisify(execFile);
const pytestFile = fileURLToPath(new URL("./python/test_boto3_sqs.py", import.meta.url));
// Debian's interpreter: PATH's python3 may be a pyenv without these. CI installs them (.ci/run).
const missing = spawnSync(systemPython, ["-c", "import boto3, botocore, pytest"]).status === 0 ? [] : ["python3-boto3, python3-pytest"];

describe.skipIf(skipWithout(missing))("boto3 (query protocol) against the SQS endpoint", () => {
  let h: SqsHarness;
  beforeAll(async () => {
    expect(missing, "Debian packages missing (see .ci/run)").toEqual([]);
    h = await startSqsHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("passes test_boto3_sqs.py: every action, its errors, digests and long polls", async () => {
    // Asynchronous: the broker serving pytest runs in this process.
    const result = await run(systemPython, ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", pytestFile], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/",
        HOLDSHELF_SQS_ENDPOINT: h.endpoint,
        HOLDSHELF_SQS_ACCOUNT: testAccountId,
        // No bytecode in the repository; no user AWS settings leaking in.
        PYTHONDONTWRITEBYTECODE: "1",
        AWS_CONFIG_FILE: "/nonexistent/holdshelf/aws-config",
        AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/holdshelf/aws-credentials",
      },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code?: number | string; stdout?: string; stderr?: string }) => ({ code: error.code, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }),
    );
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ passed/);
  }, 150_000);
});
