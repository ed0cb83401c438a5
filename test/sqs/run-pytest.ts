import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { systemPython } from "../support/python-package.js";
import { testAccountId, type SqsHarness } from "./sqs-harness.js";

const run = promisify(execFile);

/** The Debian packages the query-protocol pytest files need and this machine lacks (CI installs them: .ci/run). */
export const missingBoto3 =
  spawnSync(systemPython, ["-c", "import boto3, botocore, pytest"]).status === 0
    ? []
    : ["python3-boto3, python3-pytest"];

/**
 * An interpreter whose boto3 speaks SQS's JSON protocol (botocore ≥ 1.34.90,
 * e.g. a pyenv's pip install on the PATH), with pytest; undefined when there
 * is none. Debian's python3-boto3 (1.26) speaks only the query protocol, and
 * CI installs nothing newer, so tests that need one skip there (the JSON
 * protocol is covered in CI by @aws-sdk/client-sqs).
 */
export const jsonBoto3Python: string | undefined = (() => {
  const probe = spawnSync("python3", [
    "-c",
    "import sys, boto3, pytest\n" +
      "client = boto3.client('sqs', region_name='us-east-1', aws_access_key_id='x', aws_secret_access_key='x')\n" +
      "assert client.meta.service_model.protocol == 'json'\n" +
      "print(sys.executable)",
  ]);
  return probe.status === 0 ? probe.stdout.toString().trim() : undefined;
})();

/** How to run a pytest file: which interpreter, and the protocol its boto3 must speak (the file checks it). */
export interface PytestRun {
  readonly python: string;
  readonly protocol: "query" | "json";
}

/**
 * Runs a pytest file against the harness's SQS endpoint and answers its exit
 * code and report. Asynchronous: the broker serving pytest runs in this
 * process.
 */
export async function runPytest(
  file: string,
  h: SqsHarness,
  { python, protocol }: PytestRun = { python: systemPython, protocol: "query" },
): Promise<{ code: number | string | undefined; output: string }> {
  return run(python, ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", file], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/",
      HOLDSHELF_SQS_ENDPOINT: h.endpoint,
      HOLDSHELF_SQS_ACCOUNT: testAccountId,
      HOLDSHELF_SQS_PROTOCOL: protocol,
      // No bytecode in the repository; no user AWS settings leaking in.
      PYTHONDONTWRITEBYTECODE: "1",
      AWS_CONFIG_FILE: "/nonexistent/holdshelf/aws-config",
      AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/holdshelf/aws-credentials",
    },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number | string; stdout?: string; stderr?: string }) => ({
      code: error.code,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}`,
    }),
  );
}
