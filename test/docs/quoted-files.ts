import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * A fenced code block of a markdown file that quotes a file whole: the line
 * before its opening fence is `<!-- quoted: PATH -->`, PATH relative to the
 * markdown file as a link's would be. Tests hold the block to the file, and
 * run the file, so that the code a page shows is code that works.
 */
export interface QuotedFile {
  /** The markdown file, relative to the root, and the marker's line. */
  readonly where: string;
  /** The quoted file, relative to the root. */
  readonly file: string;
  /** The block's text, each line ending in a newline, as a file's would. */
  readonly code: string;
}

const marker = /^<!-- quoted: (\S+) -->$/;

/** The quoted blocks of `file` (a path under `root`); throws for a marker without a fenced block right after it. */
export function quotedFiles(root: string, file: string): QuotedFile[] {
  const lines = readFileSync(path.join(root, file), "utf8").split("\n");
  const quoted: QuotedFile[] = [];
  lines.forEach((line, index) => {
    const target = marker.exec(line)?.[1];
    if (target === undefined) return;
    const where = `${file}:${index + 1}`;
    const fence = /^(`{3,}|~{3,})/.exec(lines[index + 1] ?? "")?.[1];
    if (fence === undefined) throw new Error(`${where}: the quoted marker is not followed by a fenced code block`);
    const end = lines.findIndex((candidate, at) => at > index + 1 && candidate.startsWith(fence));
    if (end === -1) throw new Error(`${where}: the quoted block is never closed`);
    const code = lines
      .slice(index + 2, end)
      .map((text) => `${text}\n`)
      .join("");
    quoted.push({ where, file: path.relative(root, path.resolve(root, path.dirname(file), target)), code });
  });
  return quoted;
}
