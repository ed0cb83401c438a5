import { isJsonObjectText } from "../protocol/json-object-text.js";
import { maxAccessPolicyBytes } from "../protocol/limits.js";
import { sqsErrors } from "./sqs-error.js";

/** The actions AddPermission may grant (SQS's list; "*" is every one of them). */
const grantableActions = [
  "*",
  "ChangeMessageVisibility",
  "DeleteMessage",
  "GetQueueAttributes",
  "GetQueueUrl",
  "ListDeadLetterSourceQueues",
  "PurgeQueue",
  "ReceiveMessage",
  "SendMessage",
];
/** The most actions one AddPermission may name. */
const maxActions = 7;

/** What AddPermission grants: one statement, labelled. */
export interface Permission {
  readonly label: string;
  readonly accountIds: readonly string[];
  readonly actions: readonly string[];
}

type PolicyDocument = Record<string, unknown> & { Statement: Record<string, unknown>[] };

/**
 * The Policy attribute's value as the queue keeps it: empty removes the
 * policy; otherwise a JSON object of at most 8192 bytes, kept as given.
 * Anything else is InvalidAttributeValue, in SQS's words.
 */
export function checkedPolicy(value: string): string {
  if (value === "") return "";
  if (!isJsonObjectText(value) || Buffer.byteLength(value, "utf8") > maxAccessPolicyBytes)
    throw sqsErrors.invalidAttributeValue("Invalid value for the parameter Policy.");
  return value;
}

/**
 * The policy with one more statement, as SQS's AddPermission writes it:
 * Sid the label, Allow, the accounts' root ARNs as AWS principals, the
 * actions as "SQS:<action>", the queue's ARN as the resource (a single
 * principal or action as a string, several as a list). A queue without a
 * policy gets SQS's default document around it.
 */
export function withPermission(policy: string, queueArn: string, permission: Permission): string {
  const { label, accountIds, actions } = permission;
  if (actions.length === 0) throw sqsErrors.missingParameter("The request must contain the parameter Actions.");
  if (accountIds.length === 0)
    throw sqsErrors.invalidParameterValue("Value [] for parameter PrincipalId is invalid. Reason: Unable to verify.");
  if (actions.length > maxActions)
    throw sqsErrors.overLimit(`${actions.length} Actions were found, maximum allowed is ${maxActions}.`);
  const refused = actions.find((action) => !grantableActions.includes(action));
  if (refused !== undefined) {
    throw sqsErrors.invalidParameterValue(
      `Value SQS:${refused} for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.`,
    );
  }
  const document = policyDocument(policy, queueArn);
  if (document.Statement.some((statement) => statement["Sid"] === label))
    throw sqsErrors.invalidParameterValue(`Value ${label} for parameter Label is invalid. Reason: Already exists.`);
  const partition = queueArn.split(":")[1] ?? "aws";
  const principals = accountIds.map((account) => `arn:${partition}:iam::${account}:root`);
  const grants = actions.map((action) => `SQS:${action}`);
  document.Statement.push({
    Sid: label,
    Effect: "Allow",
    Principal: { AWS: principals.length === 1 ? principals[0] : principals },
    Action: grants.length === 1 ? grants[0] : grants,
    Resource: queueArn,
  });
  return checkedPolicy(JSON.stringify(document));
}

/** The policy without the statement labelled `label`; none left removes the policy (""), as SQS does. */
export function withoutPermission(policy: string, queueArn: string, label: string): string {
  const document = policyDocument(policy, queueArn);
  const kept = document.Statement.filter((statement) => statement["Sid"] !== label);
  if (kept.length === document.Statement.length)
    throw sqsErrors.invalidParameterValue(`Value ${label} for parameter Label is invalid. Reason: can't find label.`);
  return kept.length === 0 ? "" : JSON.stringify({ ...document, Statement: kept });
}

/** The queue's policy as an object with a Statement list: SQS's default document when it has none. */
function policyDocument(policy: string, queueArn: string): PolicyDocument {
  const parsed = (policy === "" ? {} : JSON.parse(policy)) as Record<string, unknown>;
  const statements = parsed["Statement"];
  // A single statement may stand alone in a policy a client set: it is kept as the list's first.
  const Statement = Array.isArray(statements)
    ? (statements as Record<string, unknown>[])
    : typeof statements === "object" && statements !== null
      ? [statements as Record<string, unknown>]
      : [];
  return { Version: "2008-10-17", Id: `${queueArn}/SQSDefaultPolicy`, ...parsed, Statement };
}
