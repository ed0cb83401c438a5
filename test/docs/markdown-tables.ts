import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * The rows of the first table after a heading of a markdown file, as cells
 * (trimmed, header and separator left out), so that a test can hold a
 * page's table to the code it describes.
 */
export function tableUnder(root: string, file: string, heading: string): string[][] {
  const lines = readFileSync(path.join(root, file), "utf8").split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const first = lines.findIndex((line, index) => index > start && line.startsWith("|"));
  if (first < 0) throw new Error(`${file}: no table under "${heading}"`);
  const rows: string[][] = [];
  for (let index = first + 2; lines[index]?.startsWith("|"); index++) {
    rows.push(
      lines[index]!.slice(1, -1)
        // A cell's own "|" is escaped ("\|"), as GitHub's tables want it.
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}
