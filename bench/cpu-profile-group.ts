/** The groups a CPU profile's busy samples are counted in, in the order the report lists them. */
export const cpuProfileGroups = [
  "holdshelf",
  "grpc-js",
  "HTTP/2 and streams",
  "protobuf-es",
  "LevelDB",
  "GC",
  "other",
] as const;

/** One of cpuProfileGroups. */
export type CpuProfileGroup = (typeof cpuProfileGroups)[number];

// Node's modules that carry gRPC's bytes: HTTP/2 framing, sockets, streams and buffers.
const transportModules =
  /^node:(internal\/http2\/|net$|internal\/net$|stream$|internal\/streams\/|internal\/stream_base_commons$|buffer$|internal\/buffer$)/;
// Native functions without a script, by name: the socket writes of LibuvStreamWrap and Buffer's codecs.
const transportNatives =
  /^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeAsciiString|writeUcs2String|(hex|base64|base64url|utf8|latin1|ascii|ucs2)(Write|Slice)|byteLengthUtf8|compare|copy|fill|createUnsafeArrayBuffer)$/;
// classic-level's native binding, should a frame of it ever appear on its own (its calls
// are usually counted in the JS frame that makes them: _put, _write, _getMany).
const levelNatives = /^(batch_|db_|iterator_)/;

/**
 * The group of one profile frame, from its function name and script URL:
 * holdshelf's code (generated code included), its libraries, the Node
 * internals that carry HTTP/2, LevelDB (JS and native), GC, and the rest.
 */
export function cpuProfileGroup(functionName: string, url: string): CpuProfileGroup {
  if (functionName === "(garbage collector)") return "GC";
  if (url.includes("/@grpc/")) return "grpc-js";
  if (url.includes("/@bufbuild/")) return "protobuf-es";
  if (/\/node_modules\/(classic-level|abstract-level|level-[a-z-]+)\//.test(url)) return "LevelDB";
  // dist/gen/ is holdshelf's generated schema: descriptors protobuf-es reads, not code that runs much.
  if (url.includes("/dist/src/") || url.includes("/dist/gen/") || url.includes("/bin/holdshelf")) return "holdshelf";
  if (transportModules.test(url)) return "HTTP/2 and streams";
  if (url === "" && transportNatives.test(functionName)) return "HTTP/2 and streams";
  if (url === "" && levelNatives.test(functionName)) return "LevelDB";
  // "(program)" (native code V8 cannot attribute), timers, events, module loading.
  return "other";
}
