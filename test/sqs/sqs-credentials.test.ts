// The SQS credentials file's format and its strict checks, and the keyring's
// reload: every way a file can be wrong is refused with a message naming the
// entry and field, and none quotes a secret.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSqsCredentials, readSqsCredentials, SqsCredentialsError } from "../../src/sqs/auth/sqs-credentials.js";
import { makeTempDir } from "../support/temp-dir.js";

const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYsecret01";
const entry = (overrides: Record<string, unknown> = {}) => ({
  name: "orders-service",
  accessKeyId: "AKIAIOSFODNN7HOLD01",
  secretAccessKey: secret,
  permissions: [{ queues: "orders-*", allow: ["send", "receive"] }],
  ...overrides,
});
const file = (keys: unknown[]) => JSON.stringify({ keys });

function refusal(text: string): string {
  let caught: unknown;
  try {
    parseSqsCredentials(text, "/etc/holdshelf/sqs-credentials.json");
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SqsCredentialsError);
  const message = (caught as Error).message;
  expect(message).not.toContain(secret);
  expect(message).not.toContain("wJalr");
  return message;
}

describe("the SQS credentials file", () => {
  it("gives each key's id, secret and principal, whose grants are those of the auth file", () => {
    const keys = parseSqsCredentials(
      file([
        entry(),
        entry({
          name: "ops",
          accessKeyId: "AKIA_OPS_lowercase_ok",
          secretAccessKey: "s",
          permissions: [{ queues: "*", allow: ["admin"] }],
        }),
      ]),
      "f",
    );
    expect(keys.map((key) => [key.accessKeyId, key.secret, key.principal.name])).toEqual([
      ["AKIAIOSFODNN7HOLD01", secret, "orders-service"],
      ["AKIA_OPS_lowercase_ok", "s", "ops"],
    ]);
    const [orders, ops] = keys as [(typeof keys)[0], (typeof keys)[0]];
    expect(orders.principal.may("send", "orders-1")).toBe(true);
    expect(orders.principal.may("admin", "orders-1")).toBe(false);
    expect(orders.principal.may("send", "billing")).toBe(false);
    expect(ops.principal.may("admin", "anything")).toBe(true);
    expect(parseSqsCredentials(file([]), "f")).toEqual([]);
  });

  it("refuses text that is not JSON, saying where but quoting nothing", () => {
    const message = refusal(`{"keys":[{"name":"a","secretAccessKey":"${secret}" oops}]}`);
    expect(message).toMatch(
      /^SQS credentials file \/etc\/holdshelf\/sqs-credentials\.json is not valid JSON at line 1, column \d+$/,
    );
  });

  it("refuses a file of the wrong shape, and unknown fields, quoting only plain field names", () => {
    expect(refusal("[]")).toContain("the file must be an object");
    expect(refusal("{}")).toContain("keys is missing");
    expect(refusal('{"keys":{}}')).toContain("keys must be an array");
    expect(refusal('{"keys":[],"tokens":[]}')).toContain('the file has an unknown field "tokens"');
    expect(refusal(file([null]))).toContain("keys[0] must be an object");
    expect(refusal(file([entry({ region: "eu-west-1" })]))).toContain('keys[0] has an unknown field "region"');
    // A pasted secret as a field name is not repeated.
    const pasted = refusal(file([{ ...entry(), [secret]: 1 }]));
    expect(pasted).toContain("keys[0] has an unknown field");
    const asWord = refusal(file([{ ...entry(), ["K7MDENGbPxRfiCYsecret01wJalrXUtnFEMI"]: 1 }]));
    expect(asWord).not.toContain("K7MDENG");
    for (const field of ["name", "accessKeyId", "secretAccessKey", "permissions"]) {
      const rest: Record<string, unknown> = entry();
      delete rest[field];
      expect(refusal(file([rest]))).toContain(`keys[0].${field} is missing`);
    }
  });

  it("refuses bad names, a name used twice, and a name that is the secret", () => {
    expect(refusal(file([entry({ name: "" })]))).toContain("keys[0].name must be 1 to 100 characters");
    expect(refusal(file([entry({ name: "has space" })]))).toContain("keys[0].name must be");
    expect(refusal(file([entry({ name: 7 })]))).toContain("keys[0].name must be");
    expect(refusal(file([entry(), entry({ accessKeyId: "AKIAIOSFODNN7HOLD02" })]))).toContain(
      'keys[1] ("orders-service").name is used by an earlier entry',
    );
    const secretAsName = "abcdefABCDEF0123456789secret";
    expect(refusal(file([entry({ name: secretAsName, secretAccessKey: secretAsName })]))).toBe(
      "SQS credentials file /etc/holdshelf/sqs-credentials.json: keys[0].name is the same as its secretAccessKey, and names are shown in logs",
    );
  });

  it("refuses access key ids that AWS would not issue, among them the placeholders of clients with no credentials", () => {
    for (const id of [
      "test",
      "x",
      "dummy",
      "AKIA-WITH-DASHES-01",
      "AKIA/SLASHES/0000001",
      "A".repeat(15),
      "A".repeat(129),
      // biome-ignore lint/correctness/noPrecisionLoss: any number, refused for not being a string
      12345678901234567,
    ]) {
      expect(refusal(file([entry({ accessKeyId: id })])), String(id)).toContain(
        "keys[0] (\"orders-service\").accessKeyId must be 16 to 128 characters of A-Z, a-z, 0-9, '_'",
      );
    }
    expect(
      parseSqsCredentials(
        file([entry({ accessKeyId: "A".repeat(16) }), entry({ name: "b", accessKeyId: "a_".repeat(64) })]),
        "f",
      ),
    ).toHaveLength(2);
  });

  it("refuses one access key id for two entries", () => {
    expect(refusal(file([entry(), entry({ name: "other" })]))).toContain(
      'keys[1] ("other").accessKeyId is also that of "orders-service": one key would be two callers',
    );
  });

  it("refuses an empty or non-string secret, and one with white space around it, never quoting it", () => {
    expect(refusal(file([entry({ secretAccessKey: "" })]))).toContain(
      'keys[0] ("orders-service").secretAccessKey must be a non-empty string',
    );
    expect(refusal(file([entry({ secretAccessKey: 42 })]))).toContain("secretAccessKey must be a non-empty string");
    expect(refusal(file([entry({ secretAccessKey: `${secret}\n` })]))).toContain(
      "secretAccessKey must not begin or end with white space",
    );
    expect(refusal(file([entry({ secretAccessKey: ` ${secret}` })]))).toContain(
      "secretAccessKey must not begin or end with white space",
    );
  });

  it("refuses missing, empty, unknown and repeated permissions, and bad queue patterns", () => {
    const at = 'keys[0] ("orders-service").permissions';
    expect(refusal(file([entry({ permissions: [] })]))).toContain(`${at} must be a non-empty array`);
    expect(refusal(file([entry({ permissions: "send" })]))).toContain(`${at} must be a non-empty array`);
    expect(refusal(file([entry({ permissions: [{ queues: "orders-*", allow: ["send"], deny: [] }] })]))).toContain(
      `${at}[0] has an unknown field "deny"`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: "orders-*", allow: [] }] })]))).toContain(
      `${at}[0].allow must be a non-empty array`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: "orders-*", allow: ["sendmessage"] }] })]))).toContain(
      `${at}[0].allow may hold only "admin", "send", "receive"`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: "orders-*", allow: ["send", "send"] }] })]))).toContain(
      `${at}[0].allow lists "send" twice`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: "orders.fifo/x", allow: ["send"] }] })]))).toContain(
      `${at}[0].queues may contain only`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: "", allow: ["send"] }] })]))).toContain(
      `${at}[0].queues must not be empty`,
    );
    expect(refusal(file([entry({ permissions: [{ queues: 1, allow: ["send"] }] })]))).toContain(
      `${at}[0].queues must be a string`,
    );
    expect(refusal(file([entry({ permissions: [{ allow: ["send"] }] })]))).toContain(`${at}[0].queues is missing`);
  });
});

describe("the keyring", () => {
  let remove: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await remove?.();
    remove = undefined;
  });
  const tempFile = async (text: string) => {
    const dir = await makeTempDir("holdshelf-sqs-credentials-");
    remove = dir.remove;
    const path = join(dir.path, "sqs-credentials.json");
    await writeFile(path, text);
    return path;
  };

  it("finds keys by id, reloads the whole table, and keeps the keys it had when the new file is bad", async () => {
    const path = await tempFile(file([entry()]));
    const keyring = await readSqsCredentials(path);
    expect(keyring.path).toBe(path);
    expect(keyring.keyCount).toBe(1);
    expect(keyring.find("AKIAIOSFODNN7HOLD01")?.principal.name).toBe("orders-service");
    expect(keyring.find("AKIAIOSFODNN7HOLD02")).toBeUndefined();

    await writeFile(
      path,
      file([entry({ accessKeyId: "AKIAIOSFODNN7HOLD02" }), entry({ name: "ops", accessKeyId: "AKIAIOSFODNN7HOLD03" })]),
    );
    expect(await keyring.reload()).toBe(2);
    expect(keyring.find("AKIAIOSFODNN7HOLD01")).toBeUndefined();
    expect(keyring.find("AKIAIOSFODNN7HOLD02")?.principal.name).toBe("orders-service");

    await writeFile(path, file([entry({ accessKeyId: "short" })]));
    await expect(keyring.reload()).rejects.toBeInstanceOf(SqsCredentialsError);
    expect(keyring.keyCount).toBe(2);
    expect(keyring.find("AKIAIOSFODNN7HOLD03")?.principal.name).toBe("ops");
  });

  it("runs reloads one at a time, so the last one asked for lands last", async () => {
    const path = await tempFile(file([entry()]));
    const keyring = await readSqsCredentials(path);
    await writeFile(path, file([entry(), entry({ name: "b", accessKeyId: "AKIAIOSFODNN7HOLD02" })]));
    const first = keyring.reload();
    const second = keyring.reload();
    expect(await Promise.all([first, second])).toEqual([2, 2]);
    // A failed reload does not stop the next one.
    await writeFile(path, "not json");
    await expect(keyring.reload()).rejects.toThrow(/not valid JSON/);
    await writeFile(path, file([entry()]));
    expect(await keyring.reload()).toBe(1);
  });

  it("says which file it cannot read, by error code", async () => {
    await expect(readSqsCredentials("/nonexistent/holdshelf/sqs-credentials.json")).rejects.toThrow(
      "cannot read SQS credentials file /nonexistent/holdshelf/sqs-credentials.json: ENOENT",
    );
  });
});
