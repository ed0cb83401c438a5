/**
 * A query-protocol request (a form-encoded POST body, or a GET query string)
 * read into the input the JSON protocol would carry for the same action, so
 * that the actions handle one shape.
 */
import { sqsErrors } from "../sqs-error.js";
import {
  queryOperations,
  type MapShape,
  type QueryMember,
  type QueryShape,
  type StructureShape,
} from "./query-shapes.js";

/** The action a request names, and its input with the JSON protocol's member names and types. */
export interface QueryRequest {
  readonly action: string;
  readonly input: Record<string, unknown>;
}

/**
 * Reads a query request. `Version` is not checked: SQS has had one query
 * version since 2012 and its older ones named the same parameters, so
 * refusing another would only break old clients. An action without a shape
 * here gives an empty input (the dispatcher answers InvalidAction);
 * parameters the action does not have are ignored. Throws only SqsError:
 * MissingParameter without Action or with half a map entry,
 * InvalidParameterValue for an integer or boolean that is not one.
 */
export function decodeQueryRequest(params: URLSearchParams): QueryRequest {
  const action = params.get("Action");
  if (!action) throw sqsErrors.missingAction();
  const operation = queryOperations.get(action);
  if (operation === undefined) return { action, input: {} };
  return { action, input: decodeStructure(operation.input, fieldTree(params), "") };
}

/**
 * The parameters by the dot-separated segments of their names, so that
 * `Attribute.99999999999.Name` costs one node, not a loop to its index. Node
 * children are Maps: a segment such as `__proto__` is only a key.
 */
interface FieldNode {
  value?: string;
  readonly children: Map<string, FieldNode>;
}

// The deepest name the model has, SendMessageBatchRequestEntry.N.MessageAttribute.N.Value.StringValue, has 6 segments.
const maxSegments = 8;

function fieldTree(params: URLSearchParams): FieldNode {
  const root: FieldNode = { children: new Map() };
  for (const [name, value] of params) {
    // A name deeper than any the model has names nothing: skipped before it is split,
    // so a megabyte of dots costs a scan, not a node per dot (test/hostile/sqs-fuzz.test.ts).
    if (tooDeep(name)) continue;
    let node = root;
    for (const segment of name.split(".")) {
      let child = node.children.get(segment);
      if (child === undefined) {
        child = { children: new Map() };
        node.children.set(segment, child);
      }
      node = child;
    }
    // A repeated parameter: the first counts, as URLSearchParams.get reads it.
    node.value ??= value;
  }
  return root;
}

function tooDeep(name: string): boolean {
  let dots = 0;
  for (let at = name.indexOf("."); at !== -1; at = name.indexOf(".", at + 1)) {
    if (++dots >= maxSegments) return true;
  }
  return false;
}

function decodeStructure(shape: StructureShape, node: FieldNode, prefix: string): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const member of shape.members) {
    const value = decodeMember(member, node, prefix);
    if (value !== undefined) decoded[member.name] = value;
  }
  return decoded;
}

function decodeMember(member: QueryMember, node: FieldNode, prefix: string): unknown {
  const { shape } = member;
  const child = node.children.get(member.wireName);
  const name = `${prefix}${member.wireName}`;
  switch (shape.type) {
    case "list": {
      const items = child === undefined ? [] : decodeList(shape.item, child, `${name}.`);
      if (items.length > 0) return items;
      // botocore writes an empty list as `Entries=`: the action, not the wire, answers it (EmptyBatchRequest).
      const empty = member.emptyListName === undefined ? undefined : node.children.get(member.emptyListName)?.value;
      return empty === "" ? [] : undefined;
    }
    case "map":
      return child === undefined ? undefined : decodeMap(shape, child, `${name}.`);
    default:
      return child === undefined ? undefined : decodeValue(shape, child, name);
  }
}

function decodeValue(shape: QueryShape, node: FieldNode, name: string): unknown {
  switch (shape.type) {
    case "structure": {
      const decoded = decodeStructure(shape, node, `${name}.`);
      return Object.keys(decoded).length > 0 ? decoded : undefined;
    }
    case "list":
    case "map":
      // Every SQS list and map is a structure member, flattened: decodeMember reads them.
      return undefined;
    case "integer":
    case "long":
      return node.value === undefined ? undefined : decodeInteger(node.value, name, shape.type);
    case "boolean":
      return node.value === undefined ? undefined : decodeBoolean(node.value, name);
    case "string":
    case "blob":
      // Blobs stay base64, as the JSON protocol carries them.
      return node.value;
  }
}

/** The items at `Item.1`, `Item.2`, … in index order; a gap closes up, and an item with nothing known in it is left out. */
function decodeList(item: QueryShape, node: FieldNode, prefix: string): unknown[] {
  const items: unknown[] = [];
  for (const [index, child] of indexed(node)) {
    const value = decodeValue(item, child, `${prefix}${index}`);
    if (value !== undefined) items.push(value);
  }
  return items;
}

/**
 * A map from `Entry.N.Key`/`Entry.N.Value`, in index order; of two entries
 * with one key the later wins, as JSON.parse keeps the later of two keys.
 * Object.fromEntries defines keys, so `__proto__` is an own key like any other.
 */
function decodeMap(shape: MapShape, node: FieldNode, prefix: string): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const [index, entry] of indexed(node)) {
    const keyNode = entry.children.get(shape.keyName);
    const valueNode = entry.children.get(shape.valueName);
    const key = keyNode?.value;
    const value =
      valueNode === undefined ? undefined : decodeValue(shape.value, valueNode, `${prefix}${index}.${shape.valueName}`);
    if (key === undefined && value === undefined) continue;
    if (key === undefined) throw missingParameter(`${prefix}${index}.${shape.keyName}`);
    if (value === undefined) throw missingParameter(`${prefix}${index}.${shape.valueName}`);
    entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}

// Indexes as clients write them, from 1 with no leading zero; other segments are parameters this action does not have.
const listIndex = /^[1-9][0-9]*$/;

/** The children whose names are indexes, in numeric order (compared as digit strings: no index is too big). */
function indexed(node: FieldNode): [string, FieldNode][] {
  return [...node.children]
    .filter(([segment]) => listIndex.test(segment))
    .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}

const int32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const int64 = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

function decodeInteger(text: string, name: string, type: "integer" | "long"): number {
  const range = type === "integer" ? int32 : int64;
  const value = /^-?[0-9]{1,20}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= range.min && value <= range.max)) throw invalidValue(text, name, "Must be an integer.");
  return value;
}

function decodeBoolean(text: string, name: string): boolean {
  if (text === "true") return true;
  if (text === "false") return false;
  throw invalidValue(text, name, "Must be true or false.");
}

// SQS's wording for these two errors.
const missingParameter = (name: string) =>
  sqsErrors.missingParameter(`The request must contain the parameter ${name}.`);
const invalidValue = (text: string, name: string, reason: string) =>
  sqsErrors.invalidParameterValue(`Value ${text} for parameter ${name} is invalid. Reason: ${reason}`);
