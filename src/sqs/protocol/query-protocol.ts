/** The SQS query protocol (form-encoded requests, XML answers), translated to and from the JSON protocol's shapes. */
export { decodeQueryRequest, type QueryRequest } from "./query-request.js";
export { encodeQueryError, encodeQueryResponse, queryNamespace } from "./query-response.js";
