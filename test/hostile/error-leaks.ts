// What an error's message must never show, whichever wire answered it (the
// SQS endpoint, the console): stack frames, source paths, and the wording of
// JavaScript's and Node's own errors, which only an unexpected failure would
// let through. The fuzzers' strings are kept clear of these.
const leaks: readonly RegExp[] = [
  /\n\s*at /,
  /\bat [\w.<>$]+ \(/,
  /(file:\/\/|\/src\/|\/dist\/|node_modules|\/work\/)/,
  /\.(ts|js|mjs):\d+/,
  /\b(TypeError|RangeError|SyntaxError|ReferenceError)\b/,
  /Cannot read propert|is not a function|is not iterable|Unexpected token|Unexpected end of JSON|in JSON at position|Maximum call stack|Invalid URL/,
  /\bERR_[A-Z_]{3,}|\bE(CONNRESET|PIPE|NOENT)\b/,
  /\[object Object\]|\bundefined\b|\bNaN\b/,
  /LEVEL_|classic-level|postgres/i,
];

/** The first leak pattern a message matches, or undefined when it shows none. */
export function leakIn(message: string): RegExp | undefined {
  return leaks.find((pattern) => pattern.test(message));
}
