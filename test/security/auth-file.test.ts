// The auth file's format and its strict checks, the queue pattern language,
// and the token table's lookup: every way a file can be wrong is refused with
// a message naming the entry and field, and none quotes a hash or token.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Metadata } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { AuthFileError, parseAuthFile, readAuthFile } from "../../src/auth/auth-file.js";
import { AuthGate } from "../../src/auth/auth-gate.js";
import { generateToken, tokenDigest, tokenPrefix } from "../../src/auth/bearer-token.js";
import { QueuePattern } from "../../src/auth/queue-pattern.js";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { makeTempDir } from "../support/temp-dir.js";

const token = generateToken();
const hash = tokenDigest(token).toString("hex");
const entry = (overrides: Record<string, unknown> = {}) => ({
  name: "orders-worker",
  sha256: hash,
  permissions: [{ queues: "orders-*", allow: ["send", "receive"] }],
  ...overrides,
});
const file = (tokens: unknown[]) => JSON.stringify({ tokens });

function refusal(text: string): string {
  let caught: unknown;
  try {
    parseAuthFile(text, "/etc/holdshelf/auth.json");
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AuthFileError);
  const message = (caught as Error).message;
  expect(message).not.toContain(hash);
  expect(message).not.toContain(token);
  return message;
}

describe("queue patterns", () => {
  const matches = (pattern: string, name: string) => (QueuePattern.parse(pattern) as QueuePattern).matches(name);

  it("match exact names, and * as any run of characters, also none", () => {
    expect(matches("orders", "orders")).toBe(true);
    expect(matches("orders", "orders-1")).toBe(false);
    expect(matches("orders", "Orders")).toBe(false);
    expect(matches("orders-*", "orders-")).toBe(true);
    expect(matches("orders-*", "orders-eu-1")).toBe(true);
    expect(matches("orders-*", "orders")).toBe(false);
    expect(matches("orders-*", "my-orders-1")).toBe(false);
    // FIFO queues' names end in ".fifo", which a pattern can name.
    expect(matches("*.fifo", "orders.fifo")).toBe(true);
    expect(matches("*.fifo", "orders-fifo")).toBe(false);
    expect(matches("orders.fifo", "orders.fifo")).toBe(true);
    expect(matches("*-dlq", "orders-dlq")).toBe(true);
    expect(matches("*-dlq", "orders-dlq-2")).toBe(false);
    expect(matches("*", "anything_at-all")).toBe(true);
    expect(matches("a*b*c", "abc")).toBe(true);
    expect(matches("a*b*c", "a-b-b-c")).toBe(true);
    expect(matches("a*b*c", "acb")).toBe(false);
    // The prefix and suffix may not overlap.
    expect(matches("ab*ba", "aba")).toBe(false);
    expect(matches("a**a", "a")).toBe(false);
    expect(matches("a**a", "aa")).toBe(true);
  });

  it("take no time to refuse a name against many stars (no backtracking)", () => {
    const started = performance.now();
    for (let i = 0; i < 1000; i++) matches("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a".repeat(80));
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("refuse other characters, an empty pattern and an overlong one", () => {
    expect(QueuePattern.parse("")).toBe("must not be empty");
    expect(QueuePattern.parse("orders.?")).toMatch(/may contain only/);
    expect(QueuePattern.parse("orders/[a-z]")).toMatch(/may contain only/);
    expect(QueuePattern.parse("a".repeat(161))).toMatch(/at most 160/);
  });
});

describe("auth file checks", () => {
  it("accepts a good file, with hashes in either case", () => {
    const entries = parseAuthFile(
      file([entry(), entry({ name: "other", sha256: tokenDigest("x").toString("hex").toUpperCase() })]),
      "f",
    );
    expect(entries.map((e) => e.principal.name)).toEqual(["orders-worker", "other"]);
    expect(entries[0]!.principal.may("send", "orders-1")).toBe(true);
    expect(entries[0]!.principal.may("admin", "orders-1")).toBe(false);
    expect(entries[0]!.principal.may("send", "payments")).toBe(false);
    expect(entries[0]!.principal.canSee("orders-1")).toBe(true);
    expect(entries[0]!.principal.canSee("payments")).toBe(false);
  });

  it("accepts an empty token list (nobody may call)", () => {
    expect(parseAuthFile(file([]), "f")).toEqual([]);
  });

  it("refuses text that is not JSON without quoting it", () => {
    const message = refusal(`{"tokens": [${token}]}`);
    expect(message).toMatch(/^auth file \/etc\/holdshelf\/auth\.json is not valid JSON( at line 1, column \d+)?$/);
  });

  it.each([
    ["a top level that is not an object", "[]", "the file must be an object"],
    ["a missing tokens field", "{}", "the file.tokens is missing"],
    ["an unknown top-level field", JSON.stringify({ tokens: [], token: [] }), 'the file has an unknown field "token"'],
    ["tokens that are not an array", JSON.stringify({ tokens: {} }), "tokens must be an array"],
    ["an entry that is not an object", file(["x"]), "tokens[0] must be an object"],
    ["a missing name", file([{ sha256: hash, permissions: [] }]), "tokens[0].name is missing"],
    ["a bad name", file([entry({ name: "has space" })]), "tokens[0].name must be 1 to 100 characters"],
    ["a name that looks like a token", file([entry({ name: token })]), 'tokens[0].name must not start with "hs_"'],
    ["a name that is not a string", file([entry({ name: 7 })]), "tokens[0].name must be"],
    ["a missing hash", file([{ name: "w", permissions: [] }]), "tokens[0].sha256 is missing"],
    [
      "a hash too short",
      file([entry({ sha256: hash.slice(2) })]),
      'tokens[0] ("orders-worker").sha256 must be 64 hex digits',
    ],
    [
      "a raw token where the hash goes",
      file([entry({ sha256: token })]),
      'tokens[0] ("orders-worker").sha256 must be 64 hex digits',
    ],
    ["an unknown entry field", file([{ ...entry(), token }]), 'tokens[0] has an unknown field "token"'],
    ["a secret-looking unknown key, not quoted", file([{ ...entry(), [token]: 1 }]), "tokens[0] has an unknown field"],
    [
      "a duplicate name",
      file([entry(), entry({ sha256: "0".repeat(64) })]),
      'tokens[1] ("orders-worker").name is used by an earlier entry',
    ],
    [
      "a duplicate hash",
      file([entry(), entry({ name: "twin" })]),
      'tokens[1] ("twin").sha256 is the same as that of "orders-worker"',
    ],
    [
      "a duplicate hash in another case",
      file([entry(), entry({ name: "twin", sha256: hash.toUpperCase() })]),
      'tokens[1] ("twin").sha256 is the same',
    ],
    [
      "empty permissions",
      file([entry({ permissions: [] })]),
      'tokens[0] ("orders-worker").permissions must be a non-empty array',
    ],
    [
      "a permission that is not an object",
      file([entry({ permissions: ["send"] })]),
      ".permissions[0] must be an object",
    ],
    ["a missing pattern", file([entry({ permissions: [{ allow: ["send"] }] })]), ".permissions[0].queues is missing"],
    [
      "a pattern that is not a string",
      file([entry({ permissions: [{ queues: 1, allow: ["send"] }] })]),
      ".permissions[0].queues must be a string",
    ],
    [
      "a bad pattern",
      file([entry({ permissions: [{ queues: "orders/*", allow: ["send"] }] })]),
      ".permissions[0].queues may contain only",
    ],
    [
      "an empty allow",
      file([entry({ permissions: [{ queues: "*", allow: [] }] })]),
      ".permissions[0].allow must be a non-empty array",
    ],
    [
      "an unknown action",
      file([entry({ permissions: [{ queues: "*", allow: ["write"] }] })]),
      '.permissions[0].allow may hold only "admin", "send", "receive"',
    ],
    [
      "a repeated action",
      file([entry({ permissions: [{ queues: "*", allow: ["send", "send"] }] })]),
      '.permissions[0].allow lists "send" twice',
    ],
    [
      "an unknown permission field",
      file([entry({ permissions: [{ queues: "*", allow: ["send"], deny: [] }] })]),
      '.permissions[0] has an unknown field "deny"',
    ],
  ])("refuses %s", (_what, text, expected) => {
    const message = refusal(text);
    expect(message).toContain("auth file /etc/holdshelf/auth.json: ");
    expect(message).toContain(expected);
  });

  describe("from disk", () => {
    let dir: Awaited<ReturnType<typeof makeTempDir>>;
    afterEach(async () => dir.remove());

    it("names a file that cannot be read", async () => {
      dir = await makeTempDir();
      const path = join(dir.path, "missing.json");
      await expect(readAuthFile(path)).rejects.toThrow(`cannot read auth file ${path}: ENOENT`);
    });

    it("keeps the tokens in use when a reload finds a bad file", async () => {
      dir = await makeTempDir();
      const path = join(dir.path, "auth.json");
      await writeFile(path, file([entry()]));
      const gate = await AuthGate.open(path);
      await writeFile(path, file([entry({ sha256: "nope" })]));
      await expect(gate.reload()).rejects.toBeInstanceOf(AuthFileError);
      expect(gate.tokenCount).toBe(1);
      expect(gate.authenticate(bearer(token)).principal.name).toBe("orders-worker");
    });
  });
});

describe("token lookup", () => {
  const gate = async () => {
    const dir = await makeTempDir();
    const path = join(dir.path, "auth.json");
    await writeFile(path, file([entry({ name: "first", sha256: tokenDigest("t1").toString("hex") }), entry()]));
    const opened = await AuthGate.open(path);
    await dir.remove();
    return opened;
  };
  const reasonOf = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(HoldshelfError);
      expect((error as Error).message).not.toContain(token);
      return (error as HoldshelfError).reason;
    }
    throw new Error("expected a refusal");
  };

  it("finds a token by its hash, whichever entry holds it", async () => {
    const g = await gate();
    expect(g.authenticate(bearer(token)).principal.name).toBe("orders-worker");
    expect(g.authenticate(bearer("t1")).principal.name).toBe("first");
    // RFC 6750: the scheme is case-insensitive.
    const lower = new Metadata();
    lower.set("authorization", `bearer ${token}`);
    expect(g.authenticate(lower).principal.name).toBe("orders-worker");
  });

  it("tells a missing token from one that is not valid, and no more", async () => {
    const g = await gate();
    expect(reasonOf(() => g.authenticate(new Metadata()))).toBe("TOKEN_MISSING");
    expect(reasonOf(() => g.authenticate(bearer(`${token}x`)))).toBe("TOKEN_INVALID");
    expect(reasonOf(() => g.authenticate(bearer(hash)))).toBe("TOKEN_INVALID");
    for (const value of [token, `Basic ${token}`, "Bearer", "Bearer ", `Bearer ${token} extra`, `Bearer:${token}`]) {
      const metadata = new Metadata();
      metadata.set("authorization", value);
      expect(
        reasonOf(() => g.authenticate(metadata)),
        value,
      ).toBe("TOKEN_INVALID");
    }
    const twice = bearer(token);
    twice.add("authorization", `Bearer ${token}`);
    expect(reasonOf(() => g.authenticate(twice))).toBe("TOKEN_INVALID");
  });

  it("makes tokens with the hs_ prefix and 256 random bits", () => {
    const made = new Set(Array.from({ length: 100 }, generateToken));
    expect(made.size).toBe(100);
    for (const t of made) expect(t).toMatch(new RegExp(`^${tokenPrefix}[A-Za-z0-9_-]{43}$`));
  });
});

function bearer(value: string): Metadata {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${value}`);
  return metadata;
}
