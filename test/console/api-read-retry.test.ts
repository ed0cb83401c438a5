// The page's reads ride out a refusal the broker says to retry (a queue
// moving between brokers, a broker stopping): asked again a few times before
// the page shows it; changes are never repeated.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { ApiError, send } from "../../console/src/api.js";

const refusal = (reason: string) =>
  new Response(JSON.stringify({ error: { reason, message: `${reason} now`, fields: [] } }), { status: 503 });
const answers: Response[] = [];
const calls: string[] = [];

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal("fetch", async (path: string, init: { method: string }) => {
    calls.push(`${init.method} ${path}`);
    return answers.shift() ?? new Response(JSON.stringify({ ok: true }), { status: 200 });
  });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  answers.length = 0;
  calls.length = 0;
});

it("asks a read again after QUEUE_MOVING, and answers once the broker does", async () => {
  answers.push(refusal("QUEUE_MOVING"), refusal("SHUTTING_DOWN"));
  const read = send<{ ok: boolean }>("GET", "api/queues/jobs/messages");
  await vi.runAllTimersAsync();
  expect(await read).toEqual({ ok: true });
  expect(calls).toEqual(Array(3).fill("GET api/queues/jobs/messages"));
});

it("gives up on a read after five attempts, with the broker's refusal", async () => {
  for (let i = 0; i < 5; i++) answers.push(refusal("QUEUE_MOVING"));
  const read = send("GET", "api/queues/jobs").catch((error: unknown) => error);
  await vi.runAllTimersAsync();
  expect(await read).toMatchObject({ reason: "QUEUE_MOVING", status: 503 });
  expect(await read).toBeInstanceOf(ApiError);
  expect(calls).toHaveLength(5);
});

it("never repeats a change, nor a read refused for good", async () => {
  answers.push(refusal("QUEUE_MOVING"));
  await expect(send("POST", "api/queues/jobs/messages", { body: "x" })).rejects.toMatchObject({
    reason: "QUEUE_MOVING",
  });
  answers.push(refusal("QUEUE_NOT_FOUND"));
  await expect(send("GET", "api/queues/gone")).rejects.toMatchObject({ reason: "QUEUE_NOT_FOUND" });
  expect(calls).toEqual(["POST api/queues/jobs/messages", "GET api/queues/gone"]);
});
