/**
 * The Python package (clients/python) as a user gets it: its wheel installed
 * offline into a fresh venv, then driven by the small scripts in test/clients/python/
 * against real brokers: every RPC's conversions, the errors it raises (a class
 * per reason family), a queue's tags, access policy and SQS encryption kept
 * through updates, FIFO queues, the Consumer's error paths (failing fast on
 * a missing queue or a refused token), its Subscribe stream and its fallback
 * to Receive, a clean stop by a signal, batched sends, typed attributes
 * through the SQS endpoint, bearer tokens and TLS (by default beyond
 * loopback); and its LeaseKeeper and Subscription against scripted streams,
 * for what a real broker cannot be made to do on cue.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopbackAddress } from "../../src/net/loopback-address.js";
import { reasonCodes } from "../../src/protocol/error-reasons.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { makeToken, startAuthHarness, type AuthHarness } from "../security/auth-harness.js";
import { useTestCerts } from "../security/tls-certs.js";
import { freePort } from "../support/free-port.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { startJsonLines } from "../support/json-lines-process.js";
import { installPythonPackage, missingPythonTools } from "../support/python-package.js";
import { nonLoopbackAddress } from "../support/non-loopback-address.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { startSqsHarness, type SqsHarness } from "../sqs/sqs-harness.js";

const scripts = fileURLToPath(new URL("./python/", import.meta.url));
const goReasons = fileURLToPath(new URL("../../clients/go/reasons.go", import.meta.url));
const missing = [...missingCommands(["openssl"]), ...missingPythonTools()];

type Line = Record<string, unknown>;

describe.skipIf(skipWithout(missing))("the Python client package", () => {
  let python: string;
  let removeVenv: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    expect(missing, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    ({ python, remove: removeVenv } = await installPythonPackage());
  }, 180_000);
  afterAll(async () => {
    await removeVenv?.();
  });

  /** Runs a script of test/clients/python/ to its end; its JSON lines keyed by `key`. */
  const run = async (
    script: string,
    args: string[],
    key: string,
    env: Record<string, string> = {},
  ): Promise<Record<string, Line>> => {
    const child = startJsonLines(python, [join(scripts, script), ...args], env);
    expect(await child.exited(), child.stderr()).toBe(0);
    return Object.fromEntries(child.events.map((line) => [line[key] as string, line]));
  };

  it("installs from its wheel into a fresh venv and imports from there, its generated code under holdshelf._gen", async () => {
    const probe = [
      "import json, holdshelf, holdshelf._gen.holdshelf.v1.queue_service_pb2_grpc as g",
      "from importlib.util import find_spec",
      "print(json.dumps({'package': holdshelf.__file__, 'stub': g.__file__, 'clash': find_spec('holdshelf.v1') is not None}))",
    ].join("\n");
    // From / and with no PYTHONPATH: nothing of the repository is on the path.
    const result = spawnSync(python, ["-c", probe], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
    });
    expect(result.status, result.stderr).toBe(0);
    const found = JSON.parse(result.stdout) as { package: string; stub: string; clash: boolean };
    const venv = join(python, "../..");
    expect(found.package.startsWith(venv)).toBe(true);
    expect(found.stub.startsWith(venv)).toBe(true);
    expect(found.clash, "no public holdshelf.v1 package").toBe(false);
  });

  it("has a constant for every reason of Go's and the broker's, and raises each as its family's HoldshelfError", () => {
    const result = spawnSync(python, [join(scripts, "reason_classes.py")], {
      input: JSON.stringify(reasonCodes),
      encoding: "utf8",
    });
    expect(result.status, result.stderr).toBe(0);
    const found = JSON.parse(result.stdout) as {
      constants: Record<string, string>;
      classes: Record<string, string>;
      by_code: Record<string, string>;
      hierarchy: Record<string, boolean>;
      lease_lost: unknown[];
    };
    // Named after their values, as Go's are (ReasonDeadLetterQueueMissing aside): the same values, none missing.
    const go = [...readFileSync(goReasons, "utf8").matchAll(/^\s*Reason\w+\s*=\s*"([A-Z_]+)"/gm)].map((m) => m[1]!);
    expect(go.length).toBeGreaterThanOrEqual(17);
    for (const value of [...go, ...Object.keys(reasonCodes)]) expect(found.constants[value], value).toBe(value);
    const family = (name: string, reasons: string[]) => Object.fromEntries(reasons.map((reason) => [reason, name]));
    expect(found.classes).toEqual({
      ...family("NotFoundError", [
        "QUEUE_NOT_FOUND",
        "MESSAGE_NOT_FOUND",
        "DEAD_LETTER_QUEUE_NOT_FOUND",
        "MOVE_TASK_NOT_FOUND",
      ]),
      ...family("AlreadyExistsError", ["QUEUE_ALREADY_EXISTS"]),
      ...family("InvalidArgumentError", [
        "INVALID_ARGUMENT",
        "MESSAGE_TOO_LARGE",
        "RECEIPT_HANDLE_INVALID",
        "MESSAGE_GROUP_ID_REQUIRED",
        "DEDUPLICATION_ID_REQUIRED",
        "NOT_A_FIFO_QUEUE",
      ]),
      ...family("FailedPreconditionError", ["QUEUE_IN_USE", "MOVE_TASK_RUNNING", "BACKUP_NOT_SUPPORTED"]),
      ...family("LeaseError", ["LEASE_SUPERSEDED", "LEASE_LIMIT_EXCEEDED", "LEASE_EXPIRED", "RELEASED"]),
      ...family("ResourceExhaustedError", [
        "TOO_MANY_IN_FLIGHT",
        "TOO_MANY_STREAMS",
        "TOO_MANY_WAITING_RECEIVES",
        "TOO_MANY_SUBSCRIBERS",
        "TOO_MANY_QUEUES",
        "BROKER_FULL",
      ]),
      ...family("UnavailableError", ["SHUTTING_DOWN", "STORAGE_UNAVAILABLE", "QUEUE_MOVING"]),
      ...family("UnauthenticatedError", ["TOKEN_MISSING", "TOKEN_INVALID"]),
      ...family("PermissionDeniedError", ["PERMISSION_DENIED"]),
      ...family("HoldshelfError", ["INTERNAL"]),
    });
    // Without a reason (the gRPC layer's statuses), the code decides.
    expect(found.by_code).toMatchObject({
      UNAVAILABLE: "UnavailableError",
      NOT_FOUND: "NotFoundError",
      PERMISSION_DENIED: "PermissionDeniedError",
      UNAUTHENTICATED: "UnauthenticatedError",
      DEADLINE_EXCEEDED: "HoldshelfError",
      CANCELLED: "HoldshelfError",
      UNIMPLEMENTED: "HoldshelfError",
    });
    // Every exported exception but RetryLater (the handler's own) is a HoldshelfError, so old except clauses hold.
    expect(Object.entries(found.hierarchy).filter(([, isOne]) => !isOne)).toEqual([["RetryLater", false]]);
    expect(found.lease_lost).toEqual([
      ["LeaseError", "HoldshelfError"],
      "CANCELLED",
      "the lease of this message was lost: RELEASED",
    ]);
  });

  it("tells loopback addresses (plaintext by default) from the rest (TLS) as the TypeScript client does", () => {
    const addresses = [
      ...["127.0.0.1:50051", "127.3.2.1", "localhost:50051", "LocalHost", "[::1]:50051", "::1", "[::1]"],
      ...["::ffff:127.0.0.1", "[::ffff:127.0.0.2]:1", "unix:/run/holdshelf.sock", "unix-abstract:holdshelf"],
      ...["10.0.0.7:50051", "0.0.0.0:50051", "[::]:50051", "broker.internal:50051", "::ffff:10.0.0.1", "192.0.2.2"],
      ...["localhost.example:1", "127.0.0.1.example:1", "dns:///localhost:50051", "", "[::1", "host:port:x"],
    ];
    const probe = [
      "import json, sys",
      "from holdshelf.loopback_address import is_loopback_address",
      "print(json.dumps([is_loopback_address(a) for a in json.load(sys.stdin)]))",
    ].join("\n");
    const result = spawnSync(python, ["-c", probe], { input: JSON.stringify(addresses), encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    const fromPython = JSON.parse(result.stdout) as boolean[];
    expect(Object.fromEntries(addresses.map((a, i) => [a, fromPython[i]]))).toEqual(
      Object.fromEntries(addresses.map((a) => [a, isLoopbackAddress(a)])),
    );
    expect(fromPython.filter(Boolean)).toHaveLength(11);
  });

  it("keeps leases right on scripted streams: notices, lost checkpoints, endings, a stall, a stream that stays down, refusals", async () => {
    const check = await run("lease_keeper.py", [], "check");
    expect(check.first_requests).toMatchObject({ first: [0, true], second: ["h1"], second_timeout: null });
    expect(check.notice).toMatchObject({ lost: "LEASE_EXPIRED" });
    expect(check.checkpoint_lost).toMatchObject({ sent: "7", outcome: "LEASE_SUPERSEDED", lost: "LEASE_SUPERSEDED" });
    expect(check.endings).toMatchObject({ release: [0, false], fail: [null, true], retry_later: [5, true], lost: 0 });
    expect(check.queue_not_found).toMatchObject({ lost: ["QUEUE_NOT_FOUND", "QUEUE_NOT_FOUND"] });
    expect(check.stall).toMatchObject({
      cancelled: true,
      first: [0, true],
      lost: "LEASE_EXPIRED",
      errors: ["TimeoutError"],
    });
    // Cut 5 s after the unanswered renewal was sent (seen here a little after): wide for a loaded machine.
    expect(check.stall!.broken_after).toBeGreaterThanOrEqual(4.5);
    expect(check.stall!.broken_after).toBeLessThan(9);
    expect(check.down_expiry).toMatchObject({ lost: "LEASE_EXPIRED", errors: ["ConnectionError", "HoldshelfError"] });
    // inf and 1e300 once got into the keeper and failed inside its send, leaving a request "in flight" forever.
    expect(check.out_of_range).toMatchObject({
      retry_later: ["ValueError", "ValueError", "ValueError", "ValueError"],
      fail: ["ValueError", "ValueError"],
      // biome-ignore lint/suspicious/noThenProperty: the Python check's key for its `then` scenario, not a thenable
      then: ["h1", 0],
      released: "ok",
      timing_thread: true,
    });
    // A refused renewal leaves the lease valid until its deadline: the holder is cancelled, but its failed renewal still goes.
    expect(check.refused_renewal).toMatchObject({
      lost: ["LEASE_LIMIT_EXCEEDED", "INVALID_ARGUMENT"],
      checkpoint: "LeaseLostError LEASE_LIMIT_EXCEEDED",
      sent: ["h1", true],
      released: "ok",
      renewals_after: 0,
      lost_again: 0,
    });
    // Forgotten at the 1.2 s deadline, not before; the upper bound is wide for a loaded machine.
    expect(check.refused_renewal!.forgotten_after).toBeGreaterThanOrEqual(1.1);
    expect(check.refused_renewal!.forgotten_after).toBeLessThan(5);
    // A refused ending fails its caller; a lost one does not, the loss being no failure of the ending.
    expect(check.refused_ending).toMatchObject({
      retry_too_late: "LeaseLostError INVALID_ARGUMENT",
      release_superseded: "ok",
    });
    // The refused lease stays, unrenewed, to its 1.2 s deadline, and stop's release queued behind the refusal goes out.
    expect(check.refused_then_release).toMatchObject({
      refusal: "LeaseLostError INVALID_ARGUMENT",
      sent: ["h1", 0, false],
      second: "LeaseLostError LEASE_LIMIT_EXCEEDED",
      state: "refused",
      renewals_after: 0,
      lost: 0,
    });
    expect(check.refused_then_release!.forgotten_after).toBeGreaterThanOrEqual(1.1);
    expect(check.refused_then_release!.forgotten_after).toBeLessThan(5);
    expect(check.close_unsent).toMatchObject({
      release: "RuntimeError: the Consumer stopped before this release was sent",
      checkpoint: "LeaseLostError RELEASED",
    });
    // Once, such a lease stayed queued and every later request raised, from hold() or the timing thread.
    expect(check.unencodable).toMatchObject({
      hold: "ok",
      lost: "INVALID_ARGUMENT",
      errors: ["UnicodeEncodeError"],
      timing_thread: true,
    });
    expect(check.checkpoint_after).toMatchObject({
      release: "LeaseLostError RELEASED",
      close: "LeaseLostError RELEASED",
    });
    // Stop's release is not dropped: its refusal is reported, with the handler's error, and nothing else.
    expect(check.stop_refused).toMatchObject({
      release: ["h1", 0, false],
      stopped: true,
      errors: ["LeaseLostError LEASE_LIMIT_EXCEEDED", "ValueError"],
      others: 0,
    });
  }, 60_000);

  it("keeps a Subscription right on scripted streams: coalesced acks matched by handle, notices, reconnects, fallback", async () => {
    const check = await run("subscription.py", [], "check");
    expect(check.opening).toMatchObject({
      queue: "q",
      visibility_timeout: 30,
      release_on_disconnect: true,
      flow: [4, 0],
      acks: [],
      renewals: [],
    });
    // Answered out of order, each result still reaches its own ack.
    expect(check.coalesced_acks).toMatchObject({
      alone: ["h1"],
      together: ["h2", "h3"],
      results: ["ok", "LeaseError FAILED_PRECONDITION LEASE_SUPERSEDED", "ok"],
      errors: 0,
    });
    expect(check.notice).toMatchObject({ lost: "LEASE_EXPIRED", checkpoint: "LeaseLostError LEASE_EXPIRED" });
    expect(check.notice_in_flight).toMatchObject({ sent: [["h1", "7"]], checkpoint: "ok", lost: 0 });
    expect(check.reconnect).toMatchObject({
      before: ["h2"],
      first_request: ["q", ["h1"], []],
      again: ["h2"],
      ack: "ok",
      errors: ["SHUTTING_DOWN"],
      lost: 0,
    });
    expect(check.unimplemented).toMatchObject({ called: true, reopened: false, errors: 0 });
    expect(check.queue_not_found).toMatchObject({
      lost: ["QUEUE_NOT_FOUND", "QUEUE_NOT_FOUND"],
      errors: ["QUEUE_NOT_FOUND"],
      reopened_with: [],
    });
    expect(check.pause_close).toMatchObject({
      paused: [0, [], []],
      released: [["on-its-way", 0]],
      waited: true,
      half_closed: true,
      given_back: ["late"],
      delivered: 0,
      errors: 0,
    });
    // The handler's own error (it raised ctx.lost) is reported, as on the Receive path.
    expect(check.consumer_notice).toMatchObject({ heard: ["True", "LEASE_EXPIRED"], errors: ["LeaseLostError"] });
    expect(check.consumer_fifo).toMatchObject({
      before: ["start a1"],
      order: ["start a1", "end a1", "start a2", "end a2"],
      acks: [["a1"], ["a2"]],
    });
    // Once, it waited behind a3, which went back unhandled, and so went back too: a receive spent for nothing.
    expect(check.consumer_fifo_again).toMatchObject({ handled: true, calls: ["a1#1", "a1-again#2"] });
  }, 60_000);

  describe("against a broker", () => {
    let broker: GrpcHarness;
    beforeAll(async () => {
      broker = await startGrpcHarness();
    });
    afterAll(async () => {
      await broker?.stop();
    });

    it("converts every RPC's arguments and answers: seconds, timedeltas, UTC datetimes, dataclasses", async () => {
      const rpc = await run("rpcs.py", ["--address", broker.server.address], "rpc");
      expect(rpc.create_queue!.queue).toMatchObject({
        name: "py-main",
        config: {
          visibility_timeout: 20,
          delay: 0,
          retention: 3600.5,
          max_message_bytes: 4096,
          receive_wait_time: 0.25,
          max_in_flight: 50,
          max_lease_duration: 7200,
          redrive_policy: { dead_letter_queue: "py-dlq", max_receive_count: 3 },
          retry_policy: { min_backoff: 0.5, max_backoff: 8 },
        },
        stats: { visible: 0, in_flight: 0, delayed: 0, oldest_message_age: null },
      });
      expect(rpc.get_queue!.queue).toMatchObject({
        name: "py-dlq",
        config: { visibility_timeout: 30 },
        dead_letter_source_queues: ["py-main"],
      });
      expect(rpc.list_queues).toMatchObject({ first: ["py-dlq"], second: ["py-main"], last_token: "" });
      expect(rpc.update_queue!.queue).toMatchObject({
        config: { redrive_policy: null, retry_policy: null, max_in_flight: 50 },
      });
      // With fields, only max_in_flight changes; every refused list is a ValueError before any call.
      expect(rpc.update_queue_fields!.queue).toMatchObject({
        config: { max_in_flight: 60, visibility_timeout: 20, retention: 3600.5 },
      });
      expect(rpc.update_queue_fields!.refusals).toEqual([
        expect.stringContaining("at least one field"),
        expect.stringContaining("'visibilityTimeout' is not a QueueConfig field"),
        expect.stringContaining("not one string"),
      ]);

      const sent = [rpc.send!.message_id, ...(rpc.send_batch!.message_ids as string[])];
      const messages = rpc.receive!.messages as Line[];
      // The delayed fourth message is not received.
      expect(messages.map((m) => m.message_id)).toEqual(sent.slice(0, 3));
      expect(messages.map((m) => [m.body, m.attributes, m.receive_count, m.checkpoint])).toEqual([
        ["one", { kind: "text" }, 1, null],
        ["two", {}, 1, null],
        ["three", { n: "3" }, 1, null],
      ]);
      const [first] = messages;
      const leaseMs = Date.parse(first!.lease_deadline as string) - Date.parse(first!.first_receive_time as string);
      expect(leaseMs, "the 30 s visibility_timeout").toBe(30_000);

      const extendedMs =
        Date.parse(rpc.change_visibility!.deadline as string) - Date.parse(first!.first_receive_time as string);
      expect(extendedMs).toBeGreaterThanOrEqual(45_000);
      expect(rpc.change_visibility_batch!.results).toMatchObject([
        { error: null, lease_deadline: expect.any(String) },
        { receipt_handle: "forged", error: { code: 3, reason: "RECEIPT_HANDLE_INVALID" }, lease_deadline: null },
      ]);
      // What the delete did (DeleteOutcome), a name as the Python client gives it.
      expect(rpc.delete!.result).toBe("DELETED");
      expect(rpc.delete_batch!.results).toMatchObject([{ error: null }, { error: null }]);

      expect(rpc.heartbeat).toMatchObject({
        renewed: [{ held: true, reason: "", lease_deadline: expect.any(String) }],
        failed: [{ held: false, reason: "RELEASED" }],
        ended: "ended",
      });
      expect(rpc.heartbeat_checkpoint).toMatchObject({ checkpoint: "half", receive_count: 2 });
      expect(rpc.purge_queue!.purged).toBe(2);
      expect(rpc.redrive_messages!.moved).toBe(1);
      expect(rpc.delete_queue).toMatchObject({ result: null, remaining: ["py-dlq"] });
    }, 60_000);

    it("keeps a queue's tags, access policy and SQS encryption through an update, changing them only as named", async () => {
      const check = await run("sqs_settings.py", ["--address", broker.server.address], "check");
      const policy =
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage"}]}';
      const kms = { kms_master_key_id: "alias/orders", kms_data_key_reuse_period: 600, sqs_managed_sse_enabled: false };
      const first = { tags: { team: "billing", env: "prod" }, access_policy: policy, sqs_encryption: kms };
      expect(check.created).toMatchObject(first);
      expect(check.got).toMatchObject(first);
      // A configuration read and written back whole keeps them: the bug was losing them here.
      expect(check.replaced).toMatchObject({ ...first, visibility_timeout: 45 });
      expect(check.fields).toMatchObject({ ...first, visibility_timeout: 45, max_in_flight: 42 });
      const managed = { kms_master_key_id: "", kms_data_key_reuse_period: 300, sqs_managed_sse_enabled: true };
      expect(check.encryption).toMatchObject({ tags: first.tags, access_policy: policy, sqs_encryption: managed });
      expect(check.tag_keys!.tags).toEqual({ team: "billing", owner: "ana" });
      expect(broker.server.broker.getQueue("py-sqs-settings").config).toMatchObject({
        tags: { team: "billing", owner: "ana" },
        accessPolicy: policy,
        sqsEncryption: { kmsMasterKeyId: "", kmsDataKeyReusePeriodMs: 300_000, sqsManagedSseEnabled: true },
        visibilityTimeoutMs: 45_000,
        maxInFlight: 42,
      });
      expect(check.both_encryptions).toMatchObject({ code: "INVALID_ARGUMENT", fields: ["config.sqs_encryption"] });
      expect(check.refusals!.messages).toEqual([
        expect.stringContaining("at least one tag"),
        expect.stringContaining("not one string"),
        expect.stringContaining('"tags" beside tag_keys'),
      ]);
    }, 60_000);

    it("batches single sends per queue into SendBatch calls, each send with its own result or error; close() flushes", async () => {
      const check = await run("send_batching.py", ["--address", broker.server.address], "check");
      expect(check.bad_options!.refused).toEqual([
        "ValueError",
        "ValueError",
        "ValueError",
        "ValueError",
        "ValueError",
      ]);
      expect(check.batched).toMatchObject({ ids: 40, all_ids: true, sends: 0, entries: 40, stored: true });
      // 40 sends released together share a few calls (one, unless the machine is very slow).
      expect(check.batched!.batches).toBeLessThanOrEqual(10);
      expect(check.entry_error).toMatchObject({
        refused: { type: "InvalidArgumentError", reason: "MESSAGE_GROUP_ID_REQUIRED", fields: ["message_group_id"] },
        others: ["SendResult", "SendResult", "SendResult", "SendResult"],
        stored: ["o0", "o1", "o3", "o4"],
      });
      expect(check.batch_error!.errors).toEqual([
        ["NotFoundError", "QUEUE_NOT_FOUND"],
        ["NotFoundError", "QUEUE_NOT_FOUND"],
        ["NotFoundError", "QUEUE_NOT_FOUND"],
      ]);
      expect(check.fifo_order).toMatchObject({ in_order: true, increasing: true, count: 100 });
      // Two full batches went at once, 30 s before their delay; the 5 left went at close().
      expect(check.limits).toMatchObject({ early: 20, total: 25, batches: [10, 10, 5], stored: 25 });
      expect(check.flush).toMatchObject({ waiting_before: true, sent: 1, stored: ["flushed"] });
      expect(check.flush!.close_seconds).toBeLessThan(5);
      // Sent after half its 0.5 s timeout, not after the 60 s delay.
      expect(check.timeout).toMatchObject({ stored: ["in time"] });
      expect(check.timeout!.seconds).toBeGreaterThanOrEqual(0.2);
      expect(check.timeout!.seconds).toBeLessThan(5);
      expect(check.unbatched).toMatchObject({ plain: [5, 0], too_large: 1, stored: 6 });
    }, 60_000);

    it("consumes on one Subscribe stream (acks, renewals, failures, reconnects, stop) and falls back to Receive", async () => {
      const check = await run("subscribe.py", ["--address", broker.server.address], "check");
      const receivePath = { Subscribe: 1, Heartbeat: 1, Delete: 10, DeleteBatch: 0 };
      expect(check.fallback).toMatchObject({ finished: true, calls: receivePath, errors: [], left: 0 });
      expect(check.fallback!.handled).toHaveLength(10);
      expect(check.forced).toMatchObject({
        finished: true,
        calls: { Subscribe: 0, Heartbeat: 1, Delete: 1 },
        errors: [],
        left: 0,
      });
      const handled = Array.from({ length: 30 }, (_, i) => `s${i}`).sort();
      expect(check.subscribed).toMatchObject({
        finished: true,
        handled,
        receive_counts: [1],
        calls: { Subscribe: 1, Receive: 0, Heartbeat: 0, Delete: 0, DeleteBatch: 0 },
        opening: {
          queue: "sub-main",
          visibility_timeout: 30,
          release_on_disconnect: true,
          max_outstanding_messages: 4,
          max_outstanding_bytes: 0,
        },
        acks: 30,
        errors: [],
        left: 0,
      });
      expect(check.subscribed!.most_active).toBeLessThanOrEqual(4);
      expect(check.subscribed!.ack_requests).toBeLessThan(30);
      expect(check.renew).toMatchObject({
        finished: true,
        handled: [["long", 1]],
        cancelled: [false],
        errors: [],
        left: 0,
      });
      expect(check.renew!.renewals).toBeGreaterThanOrEqual(2);
      expect(check.fail).toMatchObject({
        finished: true,
        seen: [
          ["later", 1, null],
          ["later", 2, "later-half"],
          ["raise", 1, null],
          ["raise", 2, "raise-half"],
        ],
        failed: [
          [true, 1000],
          [true, null],
        ],
        errors: ["RetryLater", "ValueError"],
        left: 0,
      });
      expect(check.fail!.later_after).toBeGreaterThanOrEqual(0.9);
      expect(check.reconnect).toMatchObject({
        started: true,
        cut: 1,
        reopened: true,
        finished: true,
        handled: [["held", 1]],
        renewed_in_first_request: true,
        cancelled: [false],
        errors: ["UnavailableError"],
        left: 0,
      });
      expect(check.stop).toMatchObject({
        cancelled: [true],
        paused: [0],
        released: [[true, 0, false]],
        // The handler's `raise ctx.lost` after stop gave its message back is a clean stop, not a failure.
        errors: [],
        visible: 1,
        in_flight: 0,
      });
      expect(check.raw_stream).toMatchObject({
        delivered: ["ack me"],
        ack: [[true, ""]],
        renewal: [["forged", false, "RECEIPT_HANDLE_INVALID"]],
        second: ["let expire"],
        notice: [[true, false]],
        ended: ["ok"],
      });
    }, 90_000);

    it("raises a HoldshelfError of the reason's family carrying the code, the reason, the message and the field violations", async () => {
      const unreachable = `127.0.0.1:${await freePort()}`;
      const check = await run("errors.py", ["--address", broker.server.address, "--unreachable", unreachable], "check");
      const rpcError = (type: string, code: string, reason: string, fields: string[] = []) => ({
        type,
        code,
        reason,
        fields: fields.map((field) => [field, true]),
      });
      expect(check.queue_not_found).toMatchObject({
        ...rpcError("NotFoundError", "NOT_FOUND", "QUEUE_NOT_FOUND"),
        message: expect.stringContaining("no-such-queue"),
      });
      // Both bad settings at once: the broker names every field it refuses.
      expect(check.config_out_of_bounds).toMatchObject(
        rpcError("InvalidArgumentError", "INVALID_ARGUMENT", "INVALID_ARGUMENT", [
          "config.retention",
          "config.max_message_bytes",
        ]),
      );
      expect(check.batch_entry).toMatchObject(
        rpcError("InvalidArgumentError", "INVALID_ARGUMENT", "INVALID_ARGUMENT", ["entries[1].attributes"]),
      );
      expect(check.lease_superseded).toMatchObject(rpcError("LeaseError", "FAILED_PRECONDITION", "LEASE_SUPERSEDED"));
      expect(check.receipt_handle_invalid).toMatchObject(
        rpcError("InvalidArgumentError", "INVALID_ARGUMENT", "RECEIPT_HANDLE_INVALID", ["receipt_handle"]),
      );
      expect(check.already_exists).toMatchObject(
        rpcError("AlreadyExistsError", "ALREADY_EXISTS", "QUEUE_ALREADY_EXISTS"),
      );
      expect(check.heartbeat_queue_not_found).toMatchObject(rpcError("NotFoundError", "NOT_FOUND", "QUEUE_NOT_FOUND"));
      // A status from the gRPC layer has no reason.
      expect(check.unreachable).toMatchObject(rpcError("UnavailableError", "UNAVAILABLE", ""));
      // Arguments the package refuses before any call.
      expect(check.negative_duration).toMatchObject({ type: "ValueError" });
      expect(check.bad_token).toMatchObject({ type: "ValueError" });
      expect(check.cert_without_key).toMatchObject({ type: "ValueError" });
      // tls=False is plaintext: files that would mean TLS contradict it.
      expect(check.plaintext_with_files).toMatchObject({
        type: "ValueError",
        message: expect.stringContaining("tls=False"),
      });
    }, 60_000);

    it("works FIFO queues: settings, the three reasons, sequence numbers, duplicates, order per customer, the Consumer", async () => {
      const check = await run("fifo.py", ["--address", broker.server.address], "check");
      expect(check.config).toMatchObject({
        orders: { fifo: true, content_based_deduplication: false, deduplication_scope: "queue" },
        by_body: { fifo: true, content_based_deduplication: true, deduplication_scope: "message_group" },
        standard: { fifo: false, content_based_deduplication: false, deduplication_scope: null },
      });
      expect(check.errors).toMatchObject({
        group_required: { code: "INVALID_ARGUMENT", reason: "MESSAGE_GROUP_ID_REQUIRED", fields: ["message_group_id"] },
        deduplication_required: {
          code: "INVALID_ARGUMENT",
          reason: "DEDUPLICATION_ID_REQUIRED",
          fields: ["entries[1].deduplication_id"],
        },
        not_fifo: { code: "INVALID_ARGUMENT", reason: "NOT_A_FIFO_QUEUE", fields: ["message_group_id"] },
        // An unknown scope is refused by the package, not sent as the default.
        bad_scope: "ValueError",
      });

      type Sent = { body: string; id: string; sequence_number: string };
      const { sent, retried, batch, plain } = check.send as {
        sent: Sent[];
        retried: Omit<Sent, "body">;
        batch: Omit<Sent, "body">[];
        plain: Omit<Sent, "body">;
      };
      const numbers = sent.map((s) => s.sequence_number);
      for (const number of numbers) expect(number).toMatch(/^\d{20}$/);
      expect([...numbers].sort()).toEqual(numbers);
      expect(new Set(numbers).size).toBe(numbers.length);
      const first = sent.find((s) => s.body === "c2-order-1")!;
      expect(retried).toEqual({ id: first.id, sequence_number: first.sequence_number });
      expect(batch[1]).toEqual(batch[0]);
      expect(plain.sequence_number).toBe("");

      const received = check.receive!.received as (Sent & { group: string; deduplication_id: string })[];
      // The duplicates were not stored: once the sent messages were received and deleted, none was left.
      expect(check.receive).toMatchObject({ left: 0, plain: ["", "", ""] });
      expect(received).toHaveLength(sent.length);
      for (const customer of ["c1", "c2", "c3"]) {
        const ofCustomer = (list: { body: string }[]) =>
          list.filter((m) => m.body.startsWith(`${customer}-`)).map((m) => m.body);
        expect(ofCustomer(received)).toEqual(ofCustomer(sent));
      }
      for (const message of received) {
        const original = sent.find((s) => s.body === message.body)!;
        expect(message).toEqual({ ...original, group: original.body.slice(0, 2), deduplication_id: original.body });
      }

      const contentBased = check.content_based as {
        duplicate: boolean;
        other_group_stored: boolean;
        deduplication_ids: string[];
        sha256: string;
      };
      expect(contentBased).toMatchObject({ duplicate: true, other_group_stored: true });
      expect(contentBased.deduplication_ids).toEqual([contentBased.sha256, contentBased.sha256]);

      const later = ["later-1", "later-2", "later-3", "later-4", "later-5"];
      expect(check.consumer).toEqual({
        check: "consumer",
        handled: { c1: later, c2: later, c3: later },
        overlaps: 0,
        errors: [],
      });
      // a2 and a3 were leased with a0 and a1, yet never handled before a1 was: they went back, and came again behind it.
      const calls = (check.consumer_failure!.calls as string[]).filter((call) => call.startsWith("a"));
      expect(calls).toEqual(["a0#1", "a1#1", "a1#2", "a2#2", "a3#2"]);
      expect(check.consumer_failure!.calls).toContain("b0#1");
      expect(check.consumer_failure!.errors).toEqual(["ValueError('a1 fails once')"]);
      await expect
        .poll(() => broker.server.broker.getQueue("py-fifo-orders.fifo").counts)
        .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
      await expect
        .poll(() => broker.server.broker.getQueue("py-fifo-retry.fifo").counts)
        .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    }, 90_000);

    it("runs the Consumer's error paths: bad options, a missing queue, a lost lease, a failing handler, refusals, signals", async () => {
      const check = await run("consumer.py", ["--address", broker.server.address], "check");
      expect(check.invalid_options!.refused).toEqual([
        "ValueError",
        "ValueError",
        "ValueError",
        "ValueError",
        "ValueError",
      ]);
      expect(check.missing_queue).toMatchObject({ type: "NotFoundError", reason: "QUEUE_NOT_FOUND" });
      expect(check.lost_lease).toMatchObject({
        cancelled: true,
        lost: "LEASE_SUPERSEDED",
        checkpoint: "LeaseLostError LEASE_SUPERSEDED",
      });
      expect(check.handler_error).toMatchObject({ type: "ValueError", text: "handler failed", same_message: true });
      expect(check.retry_too_late!.errors).toEqual([
        ["RetryLater", ""],
        ["LeaseLostError", "INVALID_ARGUMENT"],
      ]);
      // Reported even though stop() had given the message back; the release itself is no error.
      expect(check.given_back_error).toMatchObject({
        type: "ValueError",
        text: "stopped unfinished",
        with_message: true,
        released: true,
        others: 0,
      });
      // Tried again while no broker answers, for 3 s, longer than the 2 s lease, which is kept meanwhile: the
      // message is handled once, never delivered again. Each failure is reported; each attempt has a 30 s deadline.
      const { unavailable, refused } = check.delete_retry as Record<string, Line>;
      expect(unavailable).toMatchObject({ finished: true, handled: 1, timeouts: [30], left: 0 });
      expect(unavailable!.attempts).toBeGreaterThanOrEqual(4);
      expect(unavailable!.errors).toBe((unavailable!.attempts as number) - 1);
      // A refusal is not tried again, and the message stays leased.
      expect(refused).toMatchObject({ finished: true, handled: 1, attempts: 1, errors: 1, timeouts: [30], left: 1 });
      expect(check.zero_visibility).toMatchObject({
        type: "ValueError",
        text: expect.stringContaining("visibility timeout of 0"),
        stopped: true,
        received: false,
        with_option: true,
        deleted: true,
      });
      expect(check.big_checkpoint).toMatchObject({ big: "ValueError", cancelled: false, last: 65536, deleted: true });
      // A handled message dead-lettered before its ack or delete is a lost lease, not a success, on either path.
      expect(check.dead_lettered).toEqual({
        check: "dead_lettered",
        subscribe: ["LeaseLostError", "DEAD_LETTERED"],
        receive: ["LeaseLostError", "DEAD_LETTERED"],
        dead: 2,
      });
      expect(check.signals).toMatchObject({ installed: true, stopped: true, restored: true, previous_called: 1 });
    }, 60_000);

    it("fails fast on a queue that does not exist or is deleted under it (wait() raises NotFoundError) and retries transient errors", async () => {
      const check = await run("fail_fast.py", ["--address", broker.server.address], "check");
      for (const path of ["missing_get_queue", "missing_subscribe", "missing_receive"]) {
        expect(check[path], path).toMatchObject({
          raised: "NotFoundError",
          code: "NOT_FOUND",
          reason: "QUEUE_NOT_FOUND",
          heard: ["NotFoundError"],
          again: true,
          failure: true,
        });
        // At once: no retry with backoff (the old behaviour never returned); the bound is wide for a loaded machine.
        expect(check[path]!.seconds as number, path).toBeLessThan(5);
      }
      // A queue deleted under a running Consumer stops it too, the handler at work cancelled.
      for (const path of ["deleted_subscribe", "deleted_receive"]) {
        expect(check[path], path).toMatchObject({
          raised: "NotFoundError",
          reason: "QUEUE_NOT_FOUND",
          heard: "NotFoundError",
        });
        expect(check[path]!.seconds as number, path).toBeLessThan(5);
      }
      // Refused twice each, reported, retried: the message is handled and the Consumer keeps running.
      expect(check.transient).toMatchObject({
        handled: true,
        running: true,
        heard: [
          "UnavailableError QUEUE_MOVING",
          "UnavailableError QUEUE_MOVING",
          "UnavailableError SHUTTING_DOWN",
          "UnavailableError SHUTTING_DOWN",
        ],
        calls: { GetQueue: 3, Subscribe: 3 },
      });
    }, 60_000);

    it("stops cleanly on SIGINT with handlers running the documented pattern: no ERROR line, the messages released", async () => {
      const queue = "py-clean-stop";
      await broker.rpc.createQueue({ name: queue });
      for (const body of ["a", "b", "c"]) await broker.rpc.send({ queue, body: Buffer.from(body) });
      const worker = startJsonLines(python, [
        join(scripts, "clean_stop.py"),
        "--address",
        broker.server.address,
        "--queue",
        queue,
      ]);
      for (const body of ["a", "b", "c"]) await worker.waitFor((line) => line.started === body);
      worker.child.kill("SIGINT");
      expect(await worker.exited(), worker.stderr()).toBe(0);
      expect(worker.events.at(-1)).toEqual({ stopped: true });
      const lines = worker
        .stderr()
        .split("\n")
        .filter((line) => line !== "");
      expect(
        lines.filter((line) => /ERROR|Traceback/.test(line)),
        worker.stderr(),
      ).toEqual([]);
      expect(lines.filter((line) => line.startsWith("INFO holdshelf") && line.includes("released"))).toHaveLength(3);
      // Released before the worker exited: visible again at once, not after their leases.
      expect(broker.server.broker.getQueue(queue).counts).toMatchObject({ visible: 3, inFlight: 0 });
    }, 60_000);
  });

  describe("typed attributes, with the SQS endpoint", () => {
    let sqs: SqsHarness;
    beforeAll(async () => {
      sqs = await startSqsHarness();
    });
    afterAll(async () => {
      await sqs?.stop();
    });

    it("sends Number, Binary and custom String attributes boto3 reads, and receives the ones boto3 sends", async () => {
      const check = await run(
        "typed_attributes.py",
        ["--address", sqs.server.address, "--sqs-endpoint", sqs.endpoint],
        "check",
      );
      const typed = {
        blob: ["Binary", Buffer.from("\x00\xffraw", "latin1").toString("base64")],
        count: ["Number.int", "7"],
        label: ["String.custom", "tagged"],
        price: ["Number", "12.50"],
        zipped: ["Binary.gzip", Buffer.from("gz").toString("base64")],
      };
      // A batched send, a unary one and a send_batch entry; the plain String stays in attributes.
      expect(check.to_sqs!.seen).toEqual({
        batched: { ...typed, plain: ["String", "text"] },
        unary: typed,
        entry: typed,
      });
      const fromSqs = { blob: typed.blob, label: typed.label, price: typed.price };
      expect(check.from_sqs).toMatchObject({
        received: ["to receive", fromSqs, { plain: "text" }],
        consumed: [["to consume", fromSqs, { plain: "text" }]],
      });
      expect(check.refused).toMatchObject({
        raised: "InvalidArgumentError",
        reason: "INVALID_ARGUMENT",
        fields: ['typed_attributes["blob"].binary_value'],
      });
      expect(check.traced).toEqual({
        check: "traced",
        seen: { batched: "Root=1-batched", unary: "Root=1-unary", entry: "Root=1-entry" },
        received: ["from boto3", "Root=1-boto3"],
      });
    }, 60_000);
  });

  describe("with bearer tokens", () => {
    const admin = makeToken("admin", { queues: "*", allow: ["admin", "send", "receive"] });
    const worker = makeToken("worker", { queues: "tasks", allow: ["receive"] });
    let auth: AuthHarness;
    beforeAll(async () => {
      auth = await startAuthHarness([admin, worker]);
      await auth.client(admin.token).createQueue({ name: "tasks" });
      await auth.client(admin.token).createQueue({ name: "other" });
    });
    afterAll(async () => {
      await auth?.stop();
    });
    const connect = (...args: string[]) =>
      run("connect.py", ["--address", auth.server.address, "--queue", "tasks", ...args], "call");

    it("sends the token on unary calls and on the Heartbeat and Subscribe streams", async () => {
      const calls = await connect("--token", worker.token);
      // ListQueues shows only the queues the token holds a permission on.
      expect(calls.list_queues).toMatchObject({ ok: true, queues: ["tasks"] });
      expect(calls.heartbeat).toMatchObject({ ok: true, answer: [] });
      expect(calls.subscribe).toMatchObject({ ok: true, answer: [["forged", "RECEIPT_HANDLE_INVALID"]] });
    });

    it("fails fast when the token may not consume the queue, or the broker does not know it", async () => {
      for (const [token, queue, raised, code] of [
        [worker.token, "other", "PermissionDeniedError", "PERMISSION_DENIED"],
        ["not-a-known-token", "tasks", "UnauthenticatedError", "UNAUTHENTICATED"],
      ] as const) {
        const check = await run(
          "fail_fast.py",
          ["--address", auth.server.address, "--token", token, "--denied-queue", queue],
          "check",
        );
        for (const path of ["denied_get_queue", "denied_subscribe"]) {
          expect(check[path], `${raised} ${path}`).toMatchObject({ raised, code, heard: [raised] });
          expect(check[path]!.seconds as number, path).toBeLessThan(5);
        }
      }
    }, 60_000);

    it("is refused without a token, and with a token the broker does not know", async () => {
      for (const [args, reason] of [
        [[], "TOKEN_MISSING"],
        [["--token", "not-a-known-token"], "TOKEN_INVALID"],
      ] as const) {
        const calls = await connect(...args);
        expect(calls.list_queues).toMatchObject({ ok: false, code: "UNAUTHENTICATED", reason });
        expect(calls.heartbeat).toMatchObject({ ok: false, code: "UNAUTHENTICATED", reason });
        expect(calls.subscribe).toMatchObject({ ok: false, code: "UNAUTHENTICATED", reason });
      }
    });
  });

  describe("over TLS", () => {
    const certs = useTestCerts(missing.filter((tool) => tool === "openssl"));
    let server: HoldshelfServer;
    beforeAll(async () => {
      const tls = await loadServerTls({
        certFile: certs.serverCert,
        keyFile: certs.serverKey,
        clientCaFile: certs.caA,
      });
      server = await startHoldshelfServer({ dataDir: join(certs.dir, "data"), listen: "127.0.0.1:0", tls: tls! });
    }, 30_000);
    afterAll(async () => {
      await server?.shutdown();
    });
    const connect = (...args: string[]) =>
      run("connect.py", ["--address", server.address, "--queue", "tls-q", ...args], "call");

    it("connects with the CA file and a client certificate (mutual TLS)", async () => {
      const calls = await connect(
        "--ca-file",
        certs.caA,
        "--cert-file",
        certs.clientACert,
        "--key-file",
        certs.clientAKey,
      );
      expect(calls.list_queues).toMatchObject({ ok: true, queues: [] });
      // The stream is up: the broker answers that its queue does not exist.
      expect(calls.heartbeat).toMatchObject({ ok: false, code: "NOT_FOUND", reason: "QUEUE_NOT_FOUND" });
    }, 60_000);

    it("fails with UNAVAILABLE without a client certificate, with one from another CA, or trusting another CA", async () => {
      for (const args of [
        ["--ca-file", certs.caA],
        ["--ca-file", certs.caA, "--cert-file", certs.clientBCert, "--key-file", certs.clientBKey],
        ["--ca-file", certs.caB, "--cert-file", certs.clientACert, "--key-file", certs.clientAKey],
      ]) {
        const calls = await connect(...args);
        expect(calls.list_queues, args.join(" ")).toMatchObject({ ok: false, code: "UNAVAILABLE", reason: "" });
      }
    }, 60_000);
  });

  describe("to an address beyond loopback", () => {
    const certs = useTestCerts(missing.filter((tool) => tool === "openssl"));
    // An address beyond loopback (this machine's LAN address, or 0.0.0.0): a broker there is reached as a remote one would be.
    const lan = nonLoopbackAddress();
    let tlsServer: HoldshelfServer;
    let plainServer: HoldshelfServer;
    beforeAll(async () => {
      const tls = await loadServerTls({ certFile: certs.serverCert, keyFile: certs.serverKey });
      tlsServer = await startHoldshelfServer({ dataDir: join(certs.dir, "tls-data"), listen: `${lan}:0`, tls: tls! });
      plainServer = await startHoldshelfServer({ dataDir: join(certs.dir, "plain-data"), listen: `${lan}:0` });
    }, 30_000);
    afterAll(async () => {
      await tlsServer?.shutdown();
      await plainServer?.shutdown();
    });
    // The test CA stands in for the system's roots (grpcio reads them from this file; read once the
    // certificates exist), and the broker's certificate names localhost, not this address.
    const connect = (address: string, ...args: string[]) =>
      run("connect.py", ["--address", address, "--queue", "q", "--target-name", "localhost", ...args], "call", {
        GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: certs.caA,
      });

    it("connects with TLS and the system's roots by default", async () => {
      const calls = await connect(tlsServer.address);
      expect(calls.list_queues).toMatchObject({ ok: true, queues: [] });
      expect(calls.subscribe).toMatchObject({ ok: false, code: "NOT_FOUND", reason: "QUEUE_NOT_FOUND" });
    }, 60_000);

    it("refuses plaintext unless tls=False says so explicitly", async () => {
      expect((await connect(plainServer.address)).list_queues).toMatchObject({ ok: false, code: "UNAVAILABLE" });
      expect((await connect(plainServer.address, "--tls", "off")).list_queues).toMatchObject({ ok: true, queues: [] });
      // A token goes over that plaintext only when allow_plaintext_token says so.
      const refused = await run(
        "connect.py",
        ["--address", plainServer.address, "--queue", "q", "--tls", "off", "--token", "t"],
        "call",
      );
      expect(refused.client).toMatchObject({
        ok: false,
        error: expect.stringContaining("refusing to send a bearer token in plaintext"),
      });
      expect(
        (await connect(plainServer.address, "--tls", "off", "--token", "t", "--allow-plaintext-token")).list_queues,
      ).toMatchObject({ ok: true, queues: [] });
      // And tls=False is plaintext: the TLS broker cannot be reached with it.
      expect((await connect(tlsServer.address, "--tls", "off")).list_queues).toMatchObject({
        ok: false,
        code: "UNAVAILABLE",
      });
    }, 60_000);
  });
});
