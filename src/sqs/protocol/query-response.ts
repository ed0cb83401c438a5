/**
 * The query protocol's answers: an action's output (in the JSON protocol's
 * shape) and an SqsError, as the XML documents SQS sends.
 */
import type { SqsError } from "../sqs-error.js";
import { queryOperations, type QueryMember, type QueryShape, type StructureShape } from "./query-shapes.js";
import { escapeXmlText, xmlElement } from "./xml-writer.js";

/** The namespace of every SQS query answer. */
export const queryNamespace = "http://queue.amazonaws.com/doc/2012-11-05/";
const declaration = '<?xml version="1.0"?>';

/**
 * `<{Action}Response><{Action}Result>…</{Action}Result><ResponseMetadata>…`,
 * members renamed and flattened as the model's output shape says. An action
 * without output answers with ResponseMetadata alone, as SQS does. Members
 * that are undefined or null, empty lists and empty maps are left out: the
 * query wire has no form for them. Throws a TypeError for an action with no
 * shape or an output that does not fit it: the dispatcher's mistake, not the
 * client's.
 */
export function encodeQueryResponse(action: string, output: Record<string, unknown>, requestId: string): string {
  const operation = queryOperations.get(action);
  if (operation === undefined) throw new TypeError(`No query shape for the action ${JSON.stringify(action)}`);
  // botocore looks the Result element up by name for actions with output: it is written even when empty.
  const result =
    operation.output === undefined
      ? ""
      : xmlElement(`${action}Result`, encodeStructure(operation.output, output, action));
  return `${declaration}<${action}Response xmlns="${queryNamespace}">${result}${responseMetadata(requestId)}</${action}Response>`;
}

/**
 * `<ErrorResponse><Error><Type/><Code/><Message/><Detail/></Error><RequestId/></ErrorResponse>`,
 * with the legacy code and the query protocol's wording: botocore's query
 * error parser reads Error's Code and Message, and maps the code to the
 * modeled exception.
 */
export function encodeQueryError(error: SqsError, requestId: string): string {
  const fields = [
    xmlElement("Type", error.fault),
    xmlElement("Code", escapeXmlText(error.legacyCode)),
    xmlElement("Message", escapeXmlText(error.queryMessage)),
    "<Detail/>",
  ].join("");
  const document = xmlElement("Error", fields) + xmlElement("RequestId", escapeXmlText(requestId));
  return `${declaration}<ErrorResponse xmlns="${queryNamespace}">${document}</ErrorResponse>`;
}

function responseMetadata(requestId: string): string {
  return xmlElement("ResponseMetadata", xmlElement("RequestId", escapeXmlText(requestId)));
}

function encodeStructure(shape: StructureShape, value: unknown, path: string): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw misfit(path, "an object");
  const fields = value as Record<string, unknown>;
  return shape.members.map((member) => encodeMember(member, fields[member.name], `${path}.${member.name}`)).join("");
}

function encodeMember(member: QueryMember, value: unknown, path: string): string {
  if (value === undefined || value === null) return "";
  const { shape, wireName } = member;
  switch (shape.type) {
    case "list":
      if (!Array.isArray(value)) throw misfit(path, "an array");
      return value
        .map((item, index) => xmlElement(wireName, encodeValue(shape.item, item, `${path}[${index}]`)))
        .join("");
    case "map":
      if (typeof value !== "object" || Array.isArray(value)) throw misfit(path, "an object");
      return Object.entries(value)
        .map(([key, entry]) =>
          xmlElement(
            wireName,
            xmlElement(shape.keyName, escapeXmlText(key)) +
              xmlElement(shape.valueName, encodeValue(shape.value, entry, `${path}.${key}`)),
          ),
        )
        .join("");
    default:
      return xmlElement(wireName, encodeValue(shape, value, path));
  }
}

function encodeValue(shape: QueryShape, value: unknown, path: string): string {
  switch (shape.type) {
    case "structure":
      return encodeStructure(shape, value, path);
    case "list":
    case "map":
      // Every SQS list and map is a flattened structure member: encodeMember writes them.
      throw misfit(path, "a structure member");
    case "string":
    case "blob":
      // Blobs are base64 text already, as the JSON protocol carries them.
      if (typeof value !== "string") throw misfit(path, "a string");
      return escapeXmlText(value);
    case "integer":
    case "long":
      if (!Number.isSafeInteger(value)) throw misfit(path, "an integer");
      return String(value);
    case "boolean":
      if (typeof value !== "boolean") throw misfit(path, "a boolean");
      return String(value);
  }
}

const misfit = (path: string, expected: string) => new TypeError(`The output's ${path} is not ${expected}`);
