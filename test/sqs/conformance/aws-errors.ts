import { readFileSync } from "node:fs";

/** Why holdshelf answers a case otherwise than AWS today: an issue #35 item being fixed, or a difference docs/sqs.md gives. */
export interface KnownDifference {
  /** The item; absent for a difference that is not one of them. */
  readonly item?: number;
  /** The protocols it shows on; both when absent. */
  readonly on?: readonly Protocol[];
  /** "message" when the code and status are AWS's and only the message differs. */
  readonly part?: "message";
  readonly why: string;
}

/** The two parts of an answer a case checks apart, so a wrong message leaves the code asserted. */
export type AnswerPart = "code" | "message";

/** SQS's two wire protocols. */
export type Protocol = "json" | "query";

/** An SQS call: the action's name and its parameters, with placeholders. */
export interface CaseCall {
  readonly action: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/** One error AWS answered, and the request that got it (aws-errors.json's `about` says how params are written). */
export interface AwsErrorCase {
  readonly case: string;
  /** The LocalStack test whose recorded AWS answer this is. */
  readonly snapshot: string;
  /** Whether the case's queue is FIFO. */
  readonly fifo?: boolean;
  readonly queueAttributes?: Readonly<Record<string, string>>;
  /** Calls made first on the case's queue, which must succeed. */
  readonly before?: readonly CaseCall[];
  readonly action: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly code: string;
  readonly message: string;
  /** The message on the query protocol, where it differs from the JSON protocol's. */
  readonly queryMessage?: string;
  readonly status: number;
  readonly differs?: KnownDifference;
}

/** The cases, read from the facts file the query protocol's pytest reads too. */
export const awsErrorCases: readonly AwsErrorCase[] = (
  JSON.parse(readFileSync(new URL("./aws-errors.json", import.meta.url), "utf8")) as { cases: AwsErrorCase[] }
).cases;

/** Whether holdshelf answers this part of the case otherwise than AWS on this protocol today. */
export function differsOn(c: AwsErrorCase, protocol: Protocol, part: AnswerPart): boolean {
  const d = c.differs;
  if (d === undefined || (d.on !== undefined && !d.on.includes(protocol))) return false;
  return part === "message" || d.part !== "message";
}

/** A case's test title, naming its known difference if the part has one. */
export function caseTitle(c: AwsErrorCase, protocol: Protocol, part: AnswerPart): string {
  const what = part === "code" ? `${c.code}, HTTP ${c.status}` : "AWS's message";
  if (!differsOn(c, protocol, part)) return `${c.case}: ${what}`;
  const known = c.differs!.item === undefined ? "not a #35 item" : `#35 item ${c.differs!.item}`;
  return `${c.case}: ${what} (known difference, ${known}: ${c.differs!.why})`;
}

/** Where a case's placeholders point. */
export interface CaseQueue {
  readonly name: string;
  readonly url: string;
  readonly goneUrl: string;
}

/** A case's parameters with its placeholders filled in. */
export function expandParams(value: unknown, queue: CaseQueue): unknown {
  if (typeof value === "string") {
    if (value === "$url") return queue.url;
    if (value === "$goneUrl") return queue.goneUrl;
    const repeat = /^\$(.)\*(\d+)$/.exec(value);
    if (repeat !== null) return repeat[1]!.repeat(Number(repeat[2]));
    return value.replaceAll("$name", queue.name);
  }
  if (Array.isArray(value)) return value.map((item) => expandParams(item, queue));
  if (typeof value === "object" && value !== null) {
    if ("$entries" in value) {
      const count = (value as { $entries: number }).$entries;
      return Array.from({ length: count }, (_, i) => ({ Id: `m${i}`, ReceiptHandle: `handle-${i}` }));
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandParams(item, queue)]));
  }
  return value;
}
