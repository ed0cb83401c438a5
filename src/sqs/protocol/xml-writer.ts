/**
 * The little XML the query protocol's answers need: elements and escaped
 * text, written as strings.
 */

// What text must not carry as is: markup, and CR, which XML parsers turn into
// LF (a body's CRLF would come back as LF, and its MD5 would no longer
// match); then what XML 1.0 cannot carry at all: controls other than tab, LF
// and CR, lone surrogates, U+FFFE and U+FFFF.
const needsEscape = /[&<>"\r]|[^\t\n\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const escapes: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "\r": "&#xD;",
};

/**
 * Text as XML element content that parses back to the same string. A
 * character XML 1.0 cannot carry, even as a reference, becomes U+FFFD: the
 * endpoint refuses such bodies on the way in (InvalidMessageContents), and an
 * answer that clients cannot parse at all would be worse.
 */
export function escapeXmlText(text: string): string {
  return text.replace(needsEscape, (char) => escapes[char] ?? "\uFFFD");
}

/** `<name>content</name>`, with content already XML. */
export function xmlElement(name: string, content: string): string {
  return `<${name}>${content}</${name}>`;
}
