import { queueNamePattern } from "../protocol/queue-name-pattern.js";
import { sqsErrors } from "./sqs-error.js";

// arn:aws:sqs:<region>:<account>:<queue>, the queue named as the broker names queues.
const arnPattern = new RegExp(`^arn:aws[\\w-]*:sqs:[\\w-]*:(\\d{12}):(${queueNamePattern.source.slice(1, -1)})$`);

/** How the endpoint names queues to SQS clients. */
export interface QueueUrlOptions {
  /** The start of every queue URL, scheme and authority: "http://127.0.0.1:9324". Clients send their calls there. */
  readonly baseUrl: string;
  /** The account id in queue URLs and ARNs: 12 digits. */
  readonly accountId: string;
  /** The region in ARNs. */
  readonly region: string;
}

/**
 * Queue URLs (`<base>/<account>/<queue>`) and ARNs
 * (`arn:aws:sqs:<region>:<account>:<queue>`), both ways. Parsing ignores the
 * URL's host: a client may reach the broker by another name than the one it
 * advertises (localhost, a load balancer), and the path says everything.
 */
export class QueueUrls {
  constructor(private readonly options: QueueUrlOptions) {}

  get accountId(): string {
    return this.options.accountId;
  }

  urlOf(queue: string): string {
    return `${this.options.baseUrl}/${this.options.accountId}/${queue}`;
  }

  arnOf(queue: string): string {
    return `arn:aws:sqs:${this.options.region}:${this.options.accountId}:${queue}`;
  }

  /**
   * The queue a QueueUrl names: a queue URL, its path, or the queue's bare
   * name, which AWS accepts there too. A URL of another account, or one that
   * is none of these, names no queue here: QueueDoesNotExist, as SQS answers
   * for a queue it cannot find.
   */
  queueOfUrl(url: string): string {
    if (queueNamePattern.test(url)) return url;
    const path = pathOf(url);
    const queue = path === undefined ? undefined : this.queueOfPath(path);
    if (queue === undefined) throw sqsErrors.queueDoesNotExist();
    return queue;
  }

  /** The queue of a request path `/<account>/<queue>` (old SDKs post to the queue URL), or undefined for any other path. */
  queueOfPath(path: string): string | undefined {
    const match = /^\/(\d{12})\/([^/?#]+)\/?$/.exec(path);
    if (match === null || match[1] !== this.options.accountId) return undefined;
    let name: string;
    try {
      name = decodeURIComponent(match[2]!);
    } catch {
      return undefined;
    }
    return queueNamePattern.test(name) ? name : undefined;
  }

  /** The queue an ARN names (a redrive policy's deadLetterTargetArn); another account's is refused. */
  queueOfArn(arn: string, parameter: string): string {
    const match = arnPattern.exec(arn);
    if (match === null)
      throw sqsErrors.invalidParameterValue(`Value ${arn} for parameter ${parameter} is invalid. Reason: Invalid ARN.`);
    if (match[1] !== this.options.accountId) {
      throw sqsErrors.invalidParameterValue(
        `Value ${arn} for parameter ${parameter} is invalid. Reason: The ARN names another account.`,
      );
    }
    return match[2]!;
  }
}

function pathOf(url: string): string | undefined {
  // A bare path ("/000000000000/orders") is accepted as well as a full URL.
  if (url.startsWith("/")) return url;
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}
