import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** A relative link of a markdown file that does not resolve, and why. */
export interface BrokenLink {
  /** The file the link is in, relative to the root, and its line. */
  readonly where: string;
  readonly target: string;
  readonly problem: string;
}

/** A link found in markdown: its target as written and the line it is on. */
interface FoundLink {
  readonly target: string;
  readonly line: number;
}

/**
 * The anchor GitHub gives a heading: its text as rendered (no code ticks,
 * link targets or emphasis marks), lower-cased, without punctuation other
 * than `-` and `_`, each space a `-` (so "kill -9" becomes "kill--9").
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`/g, "")
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a markdown file's headings, with GitHub's `-1`, `-2` suffixes for repeats. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(text);
    if (heading === null) continue;
    const slug = githubSlug(heading[1]!);
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  return anchors;
}

/** Inline links, images and reference definitions outside code blocks and code spans. */
function markdownLinks(markdown: string): FoundLink[] {
  const links: FoundLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    // A code span may hold brackets and parentheses that are not links.
    const prose = text.replace(/(`+)[^`]*?\1/g, "code");
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1]!, line });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(prose);
    if (definition !== null) links.push({ target: definition[1]!, line });
  }
  return links;
}

/** The lines of a markdown file outside fenced code blocks, numbered from 1. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((text, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (fence !== undefined && marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length)
      fence = undefined;
    else if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/**
 * The relative links of `file` (a path under `root`) that do not resolve: a
 * file or folder that does not exist, or a `#anchor` that no heading of the
 * markdown file it points into has. Links with a scheme (https:, mailto:) are
 * not followed.
 */
export function findBrokenLinks(root: string, file: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (absolute: string): Set<string> => {
    let found = anchorsOf.get(absolute);
    if (found === undefined) {
      found = headingAnchors(readFileSync(absolute, "utf8"));
      anchorsOf.set(absolute, found);
    }
    return found;
  };
  const source = path.join(root, file);
  for (const { target, line } of markdownLinks(readFileSync(source, "utf8"))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const where = `${file}:${line}`;
    const hash = target.indexOf("#");
    const linkPath = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = linkPath === "" ? source : path.resolve(path.dirname(source), linkPath);
    if (!existsSync(resolved)) {
      broken.push({ where, target, problem: `${path.relative(root, resolved)} does not exist` });
      continue;
    }
    if (anchor === undefined || anchor === "" || !resolved.endsWith(".md")) continue;
    if (!anchors(resolved).has(anchor)) {
      broken.push({
        where,
        target,
        problem: `${path.relative(root, resolved)} has no heading with the anchor #${anchor}`,
      });
    }
  }
  return broken;
}
