import fc from "fast-check";
import { prototypeKeys } from "./sqs-fuzz-arbitraries.js";
import { parseDuration } from "../../src/time/duration-text.js";

// Generators of hostile requests for the console's HTTP API (src/console/).
// The queues they aim at are seeded by console-fuzz.test.ts.

/** Queues the fuzz test seeds: fz-a dead-letters into fz-dlq; fz-f.fifo is a FIFO queue. */
export const seededQueues = ["fz-a", "fz-b", "fz-dlq", "fz-f.fifo"] as const;
/** A well-formed message id no queue holds. */
export const unknownMessageId = "00000000-0000-4000-8000-000000000000";
/** A queue name no test creates. */
export const absentQueue = "fz-absent";

/**
 * What a field of a JSON body takes, by who reads it: the console's own
 * readers (src/console/console-input.ts) or protobuf's JSON form of
 * QueueConfig (src/console/console-views.ts), which accepts more (an int32 as
 * a numeric string, null as unset).
 */
export type FieldKind =
  | "string"
  | "nullableString"
  | "wholeNumber"
  | "stringMap"
  | "mapValue"
  | "object"
  | "duration"
  | "int32"
  | "protoString"
  | "protoMap"
  | "protoMessage"
  | "protoBool"
  | "protoEnum";

/** A route that reads a JSON body: a valid body, and every field it reads by its path in that body. */
export interface BodyRoute {
  readonly method: string;
  readonly path: string;
  readonly validBody: Record<string, unknown>;
  readonly fields: Readonly<Record<string, FieldKind>>;
}

/** fz-a's configuration as the console shows it, every field set: the body of a PUT that changes nothing. */
export const fzAConfig = {
  visibilityTimeout: "45s",
  delay: "0s",
  retention: "345600s",
  maxMessageBytes: 1048576,
  receiveWaitTime: "0s",
  maxInFlight: 120000,
  maxLeaseDuration: "43200s",
  redrivePolicy: { deadLetterQueue: "fz-dlq", maxReceiveCount: 3 },
  retryPolicy: { minBackoff: "1s", maxBackoff: "10s" },
  tags: { team: "fuzz" },
};

/** fz-f.fifo's configuration as the console shows it: the defaults, FIFO, deduplicated per message group. */
export const fzFConfig = {
  visibilityTimeout: "30s",
  delay: "0s",
  retention: "345600s",
  maxMessageBytes: 1048576,
  receiveWaitTime: "0s",
  maxInFlight: 120000,
  maxLeaseDuration: "43200s",
  fifo: true,
  deduplicationScope: "DEDUPLICATION_SCOPE_MESSAGE_GROUP",
};

const configFields: Record<string, FieldKind> = {
  config: "object",
  "config.visibilityTimeout": "duration",
  "config.delay": "duration",
  "config.retention": "duration",
  "config.maxMessageBytes": "int32",
  "config.receiveWaitTime": "duration",
  "config.maxInFlight": "int32",
  "config.maxLeaseDuration": "duration",
  "config.redrivePolicy": "protoMessage",
  "config.redrivePolicy.deadLetterQueue": "protoString",
  "config.redrivePolicy.maxReceiveCount": "int32",
  "config.retryPolicy": "protoMessage",
  "config.retryPolicy.minBackoff": "duration",
  "config.retryPolicy.maxBackoff": "duration",
  "config.tags": "protoMap",
  "config.tags.team": "mapValue",
  "config.fifo": "protoBool",
  "config.contentBasedDeduplication": "protoBool",
  "config.deduplicationScope": "protoEnum",
};

// A send's fields, a FIFO queue's among them (which a standard queue refuses, by name, when they are set).
const sendFields: Record<string, FieldKind> = {
  body: "string",
  attributes: "stringMap",
  "attributes.kind": "mapValue",
  delaySeconds: "wholeNumber",
  messageGroupId: "nullableString",
  deduplicationId: "nullableString",
};

/** Every route of src/console/console-api.ts that reads a body, aimed at seeded queues (POST /api/session is apart: it reads its token only with an auth file). */
export const bodyRoutes: readonly BodyRoute[] = [
  {
    method: "POST",
    path: "/api/queues",
    validBody: { name: "fz-new", config: fzAConfig },
    fields: { name: "string", ...configFields },
  },
  {
    method: "POST",
    path: "/api/queues",
    validBody: { name: "fz-new.fifo", config: fzFConfig },
    fields: { name: "string", ...configFields },
  },
  { method: "PUT", path: "/api/queues/fz-a", validBody: { config: fzAConfig }, fields: configFields },
  { method: "PUT", path: "/api/queues/fz-f.fifo", validBody: { config: fzFConfig }, fields: configFields },
  {
    method: "POST",
    path: "/api/queues/fz-a/messages",
    validBody: { body: "hello", attributes: { kind: "test" }, delaySeconds: 0 },
    fields: sendFields,
  },
  {
    method: "POST",
    path: "/api/queues/fz-f.fifo/messages",
    validBody: { body: "hello", attributes: { kind: "test" }, messageGroupId: "g-1", deduplicationId: "fz-new" },
    fields: sendFields,
  },
  {
    method: "POST",
    path: "/api/queues/fz-dlq/move-tasks",
    validBody: { destinationQueue: "fz-b", maxPerSecond: 1 },
    fields: { destinationQueue: "nullableString", maxPerSecond: "wholeNumber" },
  },
  { method: "POST", path: "/api/move-tasks/cancel", validBody: { taskHandle: "x" }, fields: { taskHandle: "string" } },
  // One message's actions (message-routes.ts): their bodies are read before the message is looked for.
  {
    method: "POST",
    path: `/api/queues/fz-dlq/messages/${unknownMessageId}/move`,
    validBody: { destinationQueue: "fz-b" },
    fields: { destinationQueue: "nullableString" },
  },
  {
    method: "POST",
    path: `/api/queues/fz-dlq/messages/${unknownMessageId}/copy`,
    validBody: { body: "edited", destinationQueue: "fz-b", messageGroupId: null, pageToken: null },
    fields: {
      body: "string",
      destinationQueue: "nullableString",
      messageGroupId: "nullableString",
      pageToken: "nullableString",
    },
  },
];

// Text kept clear of the leak check's patterns (console-fuzz-judge.ts): an error that echoes it must still pass.
const safeText = fc.string({
  unit: fc.constantFrom(..."abcXYZ019 -_.:/%+=&?#\u00e9\u4e2d\ud83d\ude00\t"),
  maxLength: 24,
});
const anyKey = fc.oneof(safeText, fc.constantFrom(...prototypeKeys));

/** Any JSON value, nested a little, with prototype keys among its keys. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    safeText,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(anyKey, tie("value"), { maxKeys: 3 }),
  ),
})).value;

const isObject = (value: unknown): boolean => typeof value === "object" && value !== null && !Array.isArray(value);
const isWholeNumber = (value: unknown): boolean =>
  typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1;
// A duration the console reads: text as the CLI reads it ("30", "30s", "5m", "1h30m"; see src/time/duration-text.ts).
const durationText = (value: unknown): boolean => typeof value === "string" && parseDuration(value) !== undefined;
// Values protobuf may read as an int32 (a number, or a string that is one), whatever the range.
const int32Like = (value: unknown): boolean =>
  (typeof value === "number" || (typeof value === "string" && value.trim() !== "")) && Number.isFinite(Number(value));

/** Values a field of `kind` must refuse: wrong JSON types, and for numbers wrong values too. Never null where null means unset. */
export function wrongValue(kind: FieldKind): fc.Arbitrary<unknown> {
  switch (kind) {
    case "string":
    case "mapValue":
      return anyJson.filter((value) => typeof value !== "string");
    case "nullableString":
    case "protoString":
      return anyJson.filter((value) => typeof value !== "string" && value !== null);
    case "wholeNumber":
      return fc.oneof(
        anyJson.filter((value) => value !== null && !isWholeNumber(value)),
        fc.constantFrom(-1, 1.5, 2 ** 31, -(2 ** 31), 1e21, "5", "0", true),
      );
    case "stringMap":
    case "protoMap":
      return fc.oneof(
        anyJson.filter((value) => value !== null && !isObject(value)),
        fc
          .dictionary(
            anyKey,
            anyJson.filter((value) => typeof value !== "string"),
            { minKeys: 1, maxKeys: 3 },
          )
          .filter((map) => Object.keys(map).length > 0),
      );
    case "object":
    case "protoMessage":
      return fc.oneof(
        anyJson.filter((value) => value !== null && !isObject(value)),
        // A key that names no setting.
        fc.dictionary(fc.constantFrom("nope", "Visibility_Timeout", ...prototypeKeys), anyJson, {
          minKeys: 1,
          maxKeys: 2,
        }),
      );
    case "duration":
      return fc.oneof(
        anyJson.filter((value) => value !== null && !durationText(value)),
        fc.constantFrom(30, "30 s", "30m1h", "1e3s", "-1s", "315576000001s", "NaNs", "", "s", {
          seconds: 30,
        }),
      );
    case "protoBool":
      // protobuf's JSON takes only true and false (null: unset), not their strings or numbers.
      return fc.oneof(
        anyJson.filter((value) => value !== null && typeof value !== "boolean"),
        fc.constantFrom("true", "false", 0, 1, [true]),
      );
    case "protoEnum":
      // Names other than DeduplicationScope's, and numbers it lacks (a number of it would be valid): refused by the console, or by the broker.
      return fc.oneof(
        anyJson.filter(
          (value) => value !== null && !(Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 2),
        ),
        fc.constantFrom(
          "queue",
          "messageGroup",
          "QUEUE",
          "deduplication_scope_queue",
          "DEDUPLICATION_SCOPE_",
          3,
          -1,
          1.5,
          2 ** 31,
          -(2 ** 31) - 1,
          "1",
          true,
          [1],
        ),
      );
    case "int32":
      return fc.oneof(
        anyJson.filter((value) => value !== null && !int32Like(value)),
        fc.constantFrom(1.5, "1.5", 2 ** 31, -(2 ** 31) - 1, "2147483648", "abc", "", "NaN", "Infinity", true, [5], {
          value: 5,
        }),
      );
  }
}

/** A route's valid body with one field (or the whole body) replaced by a wrong value; `field` is "" for the whole body. */
export interface MistypedBody {
  readonly route: BodyRoute;
  readonly field: string;
  readonly body: unknown;
}

/** For each route, each field it reads (and the body itself) set to a value that must be refused. */
export const mistypedBodies: fc.Arbitrary<MistypedBody> = fc.constantFrom(...bodyRoutes).chain((route) =>
  fc.oneof(
    { weight: 1, arbitrary: anyJson.filter((value) => !isObject(value)).map((body) => ({ route, field: "", body })) },
    {
      weight: 6,
      arbitrary: fc.constantFrom(...Object.keys(route.fields)).chain((field) =>
        wrongValue(route.fields[field]!).map((value) => ({
          route,
          field,
          body: withField(route.validBody, field, value),
        })),
      ),
    },
  ),
);

/** A deep copy of `body` with the value at a dotted path replaced; objects missing on the way (fz-f.fifo has no tags) are made. */
export function withField(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = path.split(".");
  let at: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
  at[keys[keys.length - 1]!] = value;
  return copy;
}

const percentEncodeAll = (text: string): string =>
  [...Buffer.from(text, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** Queue names as they may appear in a path: seeded (plain and percent-encoded), absent, and malformed. */
export const pathQueueNames = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...seededQueues, absentQueue) },
  { weight: 1, arbitrary: fc.constantFrom(...seededQueues).map(percentEncodeAll) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      absentQueue,
      "fz%2Dabsent",
      "%",
      "%zz",
      "%E0%A4%A",
      "%C3%28",
      "%FF",
      "%ED%A0%80",
      "%00",
      "fz-a%00",
      "%2F",
      "fz-a%2Fpurge",
      ".",
      "..",
      "%2e%2e",
      "...",
      "%20",
      "+",
      "a".repeat(8000),
      percentEncodeAll("\u961f\u5217"),
      percentEncodeAll("\ud83d\ude00"),
      percentEncodeAll("fz-\u00e9"),
      ...prototypeKeys,
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(..."abz09-_.~%2EFf"), maxLength: 30 }) },
);

/** What follows a queue's name in a path. */
const subPaths = fc.constantFrom(
  "",
  "",
  "",
  "/",
  "/purge",
  "/purge",
  "/messages",
  "/messages",
  "/messages",
  "/move-tasks",
  "/move-tasks",
  "/cancel",
  "/purge/",
  "/messages/x",
  "/messages/search",
  "/messages/search",
  "/messages/search/x",
  `/messages/${unknownMessageId}`,
  `/messages/${unknownMessageId}/move`,
  `/messages/${unknownMessageId}/copy`,
  "/messages/x/move",
  "/messages/%00/copy",
  "/messages/constructor/__proto__",
  "/Purge",
  "/%70urge",
  "/constructor",
  "/__proto__",
  "/hasOwnProperty",
  "/toString",
  "/..",
  "/../..",
  "/%2e%2e/fz-b",
  "//",
);

/** Query strings: the message browser's pageSize and pageToken, and junk. */
export const queryStrings = fc.oneof(
  fc.constant(""),
  fc.constantFrom(
    "?",
    "?&&&=",
    "?%",
    "?a=%zz",
    "?pageSize",
    "?pageSize=&pageToken=",
    "?__proto__=1",
    "?pageSize=1&pageSize=1000",
    // The message search's.
    "?field=body&q=hello",
    "?field=id&q=",
    "?field=attribute&q=kind%3D",
    "?field=attribute&q=%3D%3D",
    "?field=nope&q=x",
    "?field=body&q=%FF",
    "?field=__proto__&q=x",
    "?field=id&q=a&pageToken=%FF%FE",
    "?field=body&field=id&q=x&q=y",
  ),
  fc
    .tuple(
      fc.constantFrom(
        "0",
        "-1",
        "1000",
        "101",
        "1.5",
        "1e2",
        "1e400",
        "0x10",
        "ten",
        "%00",
        "",
        "-0",
        "2147483648",
        "99999999999999999999",
      ),
      fc.oneof(
        fc.constant(""),
        fc.base64String({ maxLength: 40 }),
        fc.constantFrom("AAAA", "%FF%FE", "x".repeat(3000), "eyJhIjoxfQ", "%00"),
      ),
    )
    .map(
      ([size, token]) => `?pageSize=${size}&pageToken=${encodeURIComponent(token).replace(/%25([0-9A-F]{2})/g, "%$1")}`,
    ),
);

/** Raw paths under /api/: the routes with random names and tails, and junk. */
export const apiPaths: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          "/api/queues/",
          "/api/queues/",
          "/api/queues/",
          "/api/queues//",
          "/api/QUEUES/",
          "/api/%71ueues/",
          "/api/queues/./",
        ),
        pathQueueNames,
        subPaths,
        queryStrings,
      )
      .map((parts) => parts.join("")),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          "/api/",
          "/api/queues",
          "/api/session",
          "/api/session/",
          "/api/move-tasks",
          "/api/move-tasks/cancel",
          "/api/move-tasks/cancel/x",
          "/api/overview",
          "/api/overview/",
          "/api/overview/x",
          "/api/cluster",
          "/api/cluster/fz-a",
          "/api/sessions",
          "/api/%",
          "/api/..",
          "/api/x/../session",
          "/api/queues/../../api/session",
        ),
        queryStrings,
      )
      .map((parts) => parts.join("")),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(
        fc.oneof(
          pathQueueNames,
          fc.constantFrom("queues", "session", "move-tasks", "cancel", "purge", "messages", "overview", "cluster"),
        ),
        { minLength: 1, maxLength: 5 },
      )
      .map((segments) => `/api/${segments.join("/")}`),
  },
);

/** Methods the console knows, and others Node's parser lets through to it (CONNECT never reaches it). */
export const methods = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom("GET", "GET", "POST", "POST", "PUT", "DELETE") },
  { weight: 2, arbitrary: fc.constantFrom("PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "PURGE", "SEARCH", "LOCK") },
);
/** Methods Node's HTTP parser refuses itself, with a bare 400. */
export const junkMethods = fc.constantFrom("FOO", "get", "Post", "G@T", "X", "DELETE_", "__PROTO__");

/** Request bodies: none, broken JSON, invalid UTF-8, deep nesting, any JSON, and every route's bodies, valid and mistyped. */
export const bodies: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  // None, about as often as all the rest: most routes are reads, and a read with a body is refused first for its content type.
  { weight: 8, arbitrary: fc.constant(undefined) },
  fc
    .constantFrom(
      "",
      "{",
      '{"name":',
      "[1,]",
      "nul",
      "'x'",
      '{"a":1}}',
      "\u0000",
      "\ufeff{}",
      '{"name":"fz-new"',
      "{}{}",
      "NaN",
      "Infinity",
      "-",
      '"\\ud800"',
    )
    .map((text) => Buffer.from(text)),
  fc
    .constantFrom(
      [0xff],
      [0xc3, 0x28],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xc0, 0x80],
      [0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d],
    )
    .chain((bytes) =>
      fc.constantFrom(
        Buffer.from(bytes),
        Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]),
      ),
    ),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => Buffer.from("[".repeat(depth) + "]".repeat(depth))),
  anyJson.map((value) => Buffer.from(JSON.stringify(value))),
  mistypedBodies.map(({ body }) => Buffer.from(JSON.stringify(body))),
  // Valid for some route: on another route, or a queue that does not exist, still refused.
  fc.constantFrom(...bodyRoutes).map(({ validBody }) => Buffer.from(JSON.stringify(validBody))),
  fc
    .constantFrom('{"__proto__":{"name":"fz-new","polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}')
    .map((text) => Buffer.from(text)),
);

/** Content-Type headers: none, JSON in its spellings, and others. */
export const contentTypes = fc.constantFrom<readonly string[]>(
  [],
  ["application/json"],
  ["application/json"],
  ["application/json"],
  ["application/json"],
  ["application/json; charset=utf-8"],
  ["APPLICATION/JSON"],
  ["application/json;charset=utf-16"],
  ["application/jsonx"],
  ["application/json, text/plain"],
  ["text/plain"],
  ["application/x-www-form-urlencoded"],
  ["multipart/form-data; boundary=x"],
  [";;;=="],
  ["application/json", "text/plain"],
);

/** How a request presents the session: its cookie and its CSRF header, each right, wrong or missing. */
export interface Credentials {
  readonly cookie: "valid" | "none" | "bogus" | "empty" | "twice";
  readonly csrf: "valid" | "none" | "wrong" | "empty" | "repeated" | "padded";
  readonly fetchSite: "none" | "cross-site" | "same-origin";
}

// Right more often than not, so that most requests get past the session's checks to the routes.
export const credentials: fc.Arbitrary<Credentials> = fc.record({
  cookie: fc.oneof(
    { weight: 8, arbitrary: fc.constant("valid" as const) },
    { weight: 2, arbitrary: fc.constantFrom("none", "bogus", "empty", "twice") },
  ),
  csrf: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom("valid", "padded") },
    { weight: 2, arbitrary: fc.constantFrom("none", "wrong", "empty", "repeated") },
  ),
  fetchSite: fc.oneof(
    { weight: 9, arbitrary: fc.constant("none" as const) },
    { weight: 1, arbitrary: fc.constantFrom("cross-site", "same-origin") },
  ),
});

/** Paths outside /api/ that try to reach files beside the built page. */
export const staticPaths: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "/",
    "/index.html",
    "/./index.html",
    "/assets/",
    "/assets",
    "/../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E/%2E%2E/%2E%2E/etc/passwd",
    "/assets/%2e%2e/",
    "/assets/%2e%2e/%2e%2e/package.json",
    "/assets/..%2f..%2fpackage.json",
    "/assets/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/assets/%5c..%5c..%5cpackage.json",
    "/assets/..\\..\\package.json",
    "/index.html%00",
    "/index.html%00.js",
    "/%00",
    "/assets/%00../../package.json",
    "/.env",
    "/.git/config",
    "/package.json",
    "/src/index.ts",
    "/dist/console/index.html",
    "/console/index.html",
    "/console/vite.config.ts",
    "/INDEX.HTML",
    "/index.html/",
    "/index.html?x=1",
    "/index.html#top",
    "/;/index.html",
    "/%69ndex.html",
    "/api",
    "/API/queues",
    "/apix/queues",
    "/%61pi/queues",
    "/node_modules/preact/package.json",
    "/assets/index.js.map",
    "/favicon.ico",
    "/../../../../../../proc/self/environ",
  ),
  fc
    .array(
      fc.constantFrom(
        "..",
        "%2e%2e",
        "%2E%2e",
        ".",
        "%2e",
        "etc",
        "passwd",
        "assets",
        "index.html",
        "%00",
        "%2f",
        "%5c",
        "~",
        ".git",
        "package.json",
        "dist",
        "console",
        "src",
        "",
      ),
      {
        minLength: 1,
        maxLength: 7,
      },
    )
    .map((segments) => `/${segments.join("/")}`),
);

/** Host headers that name neither localhost nor an IP address: a rebinding page's (node:http sends none for ""; the test sends that raw). */
export const foreignHosts: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "evil.example",
    "evil.example:80",
    "localhost.evil.example",
    "localhost.",
    "localhost:abc",
    "evil-localhost",
    "127.0.0.1.nip.io",
    "127.1",
    "0x7f000001",
    "2130706433",
    "[::1].evil.example",
    "[localhost]",
    "console.invalid",
    "0",
    "\u00e9vil.example",
  ),
  fc.string({ unit: fc.constantFrom(..."abcxyz019.-_:[]"), minLength: 1, maxLength: 40 }),
);
