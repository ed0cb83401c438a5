// Binary array parameters against a real PostgreSQL: what binaryArray
// writes, array_recv reads back as the same values, for every element type
// the store sends; and what it cannot encode, it refuses before sending.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { binaryArray, type ElementType } from "../../src/store/postgres/binary-array.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("binary array parameters", () => {
  let client: pg.Client;
  beforeEach(async () => {
    client = new pg.Client({ connectionString: postgres().url() });
    await client.connect();
  });
  afterEach(async () => {
    await client.end();
  });

  /** The array PostgreSQL read, each element as text. */
  async function roundTrip(type: ElementType, values: readonly unknown[]): Promise<string[]> {
    const { rows } = await client.query<{ element: string }>(
      `SELECT element::text FROM unnest($1::${type}[]) AS element`,
      [binaryArray(type, values)],
    );
    return rows.map((row) => row.element);
  }

  it.each([
    ["int4", [0, 1, -1, 2 ** 31 - 1, -(2 ** 31)], ["0", "1", "-1", "2147483647", "-2147483648"]],
    [
      "int8",
      [0, 4294967296, 2 ** 53 - 1, -1, -(2 ** 40)],
      ["0", "4294967296", "9007199254740991", "-1", "-1099511627776"],
    ],
    ["float8", [1796307902282, 0.5, -0, 2 ** 32 + 1], ["1796307902282", "0.5", "-0", "4294967297"]],
    ["uuid", ["0123456789abcdef0123456789abcdef"], ["01234567-89ab-cdef-0123-456789abcdef"]],
    ["text", ["", "jobs", "héllo ✓ 🚀"], ["", "jobs", "héllo ✓ 🚀"]],
  ] as const)("reads %s elements back as sent", async (type, values, expected) => {
    expect(await roundTrip(type, values)).toEqual(expected);
  });

  it("reads bytea elements back byte for byte, empty ones included", async () => {
    const bodies = [
      Buffer.alloc(0),
      Buffer.from([0, 255, 92, 120]),
      Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)),
    ];
    const { rows } = await client.query<{ element: Buffer }>("SELECT element FROM unnest($1::bytea[]) AS element", [
      binaryArray("bytea", bodies),
    ]);
    expect(rows.map((row) => row.element.toString("hex"))).toEqual(bodies.map((body) => body.toString("hex")));
  });

  it("sends an empty array as one with no dimensions", async () => {
    const { rows } = await client.query<{ count: number }>("SELECT cardinality($1::int4[]) AS count", [
      binaryArray("int4", []),
    ]);
    expect(rows[0]!.count).toBe(0);
  });

  it("refuses an id that is not 32 hex digits and an int8 beyond 53 bits, before sending", () => {
    expect(() => binaryArray("uuid", ["not hex at all, not hex at all!!"])).toThrow(/is not 32 hex digits/);
    expect(() => binaryArray("uuid", ["0123"])).toThrow(/is not 32 hex digits/);
    expect(() => binaryArray("int8", [2 ** 53])).toThrow(/is not a safe integer/);
  });
});
