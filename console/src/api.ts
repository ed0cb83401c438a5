// The one place the console talks to the broker: JSON over fetch, the CSRF
// header on every change, and the console API's errors as ApiError.
import type {
  ErrorBody,
  FieldViolation,
  MessagePage,
  MoveTask,
  MoveTaskStart,
  QueueConfigJson,
  QueueDetail,
  QueueList,
  QueueView,
  SentMessage,
  Session,
  SignInAnswer,
  TestMessage,
} from "./api-types.js";
import type { ClusterStatus, Overview } from "./overview-types.js";

/** A refusal from the console API, with its stable reason ("QUEUE_NOT_FOUND") and the fields it names. */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly fields: readonly FieldViolation[] = [],
  ) {
    super(message);
  }
}

// The session's CSRF token, from GET or POST /api/session. Kept in memory
// only: the session itself is an HttpOnly cookie the page never sees.
let csrfToken: string | null = null;
const sessionRequiredListeners = new Set<() => void>();

/** Calls `listener` whenever the broker says the session is gone (SESSION_REQUIRED); returns the unsubscribe. */
export function onSessionRequired(listener: () => void): () => void {
  sessionRequiredListeners.add(listener);
  return () => sessionRequiredListeners.delete(listener);
}

/** A queue's API path; names are URL-encoded although the broker allows only [A-Za-z0-9_-] and a ".fifo" ending. */
export function queuePath(name: string, rest = ""): string {
  return `api/queues/${encodeURIComponent(name)}${rest}`;
}

// Refusals the broker answers "retry shortly" to: a queue moving between
// brokers (cluster mode), a broker stopping, storage being reopened. A read
// is asked again a few times before the page shows one, as a client library
// retries it: a page must not stay on an error a second later would have
// cleared. Changes are not repeated, since a send may have been stored.
const retriedReasons = new Set(["QUEUE_MOVING", "SHUTTING_DOWN", "STORAGE_UNAVAILABLE"]);
const readAttempts = 5;
const readRetryDelayMs = 1000;

/** One API call: JSON in and out, the CSRF header on a change, a refusal thrown as ApiError (a read retried first, see retriedReasons). */
export async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendOnce<T>(method, path, body);
    } catch (error) {
      const retry = method === "GET" && attempt < readAttempts && error instanceof ApiError;
      if (!retry || !retriedReasons.has(error.reason)) throw error;
      await new Promise((resolve) => setTimeout(resolve, readRetryDelayMs));
    }
  }
}

async function sendOnce<T>(method: string, path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    if (csrfToken !== null) headers["X-Holdshelf-Csrf"] = csrfToken;
  }
  let response: Response;
  try {
    // Relative paths, so the API is found beside the page even under a proxy's prefix.
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(method === "GET" ? {} : { body: JSON.stringify(body ?? {}) }),
    });
  } catch {
    throw new ApiError(0, "NETWORK", "the console could not reach the broker; it will keep trying");
  }
  const json: unknown = await response.json().catch(() => null);
  if (response.ok) return json as T;
  const error = errorOf(response.status, json);
  if (error.reason === "CSRF_TOKEN_INVALID" && !retried) {
    // The session may have been renewed in another tab: take its current token and try once more.
    await session();
    return sendOnce<T>(method, path, body, true);
  }
  if (error.reason === "SESSION_REQUIRED") {
    csrfToken = null;
    for (const listener of sessionRequiredListeners) listener();
  }
  throw error;
}

function errorOf(status: number, json: unknown): ApiError {
  const error = (json as Partial<ErrorBody> | null)?.error;
  if (error === undefined || typeof error.reason !== "string") {
    return new ApiError(status, `HTTP_${status}`, `the broker answered HTTP ${status}`);
  }
  return new ApiError(status, error.reason, error.message, error.fields ?? []);
}

/** GET /api/session: remembers the session's CSRF token for later changes. */
export async function session(): Promise<Session> {
  const answer = await send<Session>("GET", "api/session");
  csrfToken = answer.csrfToken;
  return answer;
}

/** POST /api/session: signs in with an access token (TOKEN_INVALID when it is wrong). */
export async function signIn(token: string): Promise<SignInAnswer> {
  const answer = await send<SignInAnswer>("POST", "api/session", { token });
  csrfToken = answer.csrfToken;
  return answer;
}

/** DELETE /api/session. */
export async function signOut(): Promise<void> {
  await send<object>("DELETE", "api/session");
  csrfToken = null;
}

/** Every queue the token may see, with recent rates. */
export const listQueues = () => send<QueueList>("GET", "api/queues");

/** Totals, cluster-wide rates, consumers, brokers and the queues that need attention. */
export const getOverview = () => send<Overview>("GET", "api/overview");

/** The cluster's members, shard owners and recent ownership changes. */
export const getCluster = () => send<ClusterStatus>("GET", "api/cluster");

/** Creates a queue; an empty config takes the broker's defaults. */
export const createQueue = (name: string, config: QueueConfigJson) =>
  send<{ queue: QueueView }>("POST", "api/queues", { name, config });

/** One queue with its history and processing times. */
export const getQueue = (name: string) => send<QueueDetail>("GET", queuePath(name));

/** Changes the named settings of a queue (QueueConfig's field names), keeping every other as it is then. */
export const updateQueue = (name: string, config: QueueConfigJson, fields: readonly string[]) =>
  send<{ queue: QueueView }>("PUT", queuePath(name), { config, fields });

/** Deletes a queue and its messages. */
export const deleteQueue = (name: string) => send<object>("DELETE", queuePath(name));

/** Removes every message of a queue. */
export const purgeQueue = (name: string) => send<{ purgedCount: number }>("POST", queuePath(name, "/purge"), {});

/** One page of a queue's messages, read without leasing them; "" is the first page. */
export function peekMessages(name: string, pageToken: string, pageSize = 20): Promise<MessagePage> {
  const query = new URLSearchParams({ pageSize: String(pageSize) });
  if (pageToken !== "") query.set("pageToken", pageToken);
  return send<MessagePage>("GET", queuePath(name, `/messages?${query}`));
}

/** Sends a test message. */
export const sendMessage = (name: string, message: TestMessage) =>
  send<SentMessage>("POST", queuePath(name, "/messages"), message);

/** A dead-letter queue's move tasks, newest first. */
export const listMoveTasks = (name: string) => send<{ tasks: MoveTask[] }>("GET", queuePath(name, "/move-tasks"));

/** Starts a redrive of a dead-letter queue as a tracked task. */
export const startMoveTask = (name: string, start: MoveTaskStart) =>
  send<{ taskHandle: string }>("POST", queuePath(name, "/move-tasks"), start);

/** Cancels a running move task; the messages already moved stay moved. */
export const cancelMoveTask = (taskHandle: string) =>
  send<{ movedCount: number }>("POST", "api/move-tasks/cancel", { taskHandle });
