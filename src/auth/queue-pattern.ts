/**
 * A queue name pattern of an auth file: `*` matches any run of characters
 * (also none); every other character matches only itself. Queue names are
 * [A-Za-z0-9_-] and FIFO queues' may end in ".fifo", so a pattern is those
 * characters, `.` and `*` ("*.fifo" grants every FIFO queue named so).
 */
export class QueuePattern {
  private readonly parts: readonly string[];

  private constructor(readonly source: string) {
    // The literal runs between stars: "orders-*-dlq" is ["orders-", "-dlq"].
    this.parts = source.split("*");
  }

  /** The pattern, or a description of what is wrong with it. */
  static parse(source: string): QueuePattern | string {
    if (source.length === 0) return "must not be empty";
    if (source.length > maxPatternLength) return `must be at most ${maxPatternLength} characters`;
    if (!/^[A-Za-z0-9_.*-]+$/.test(source)) return "may contain only A-Z, a-z, 0-9, '_', '-', '.' and '*'";
    return new QueuePattern(source);
  }

  /** Whether it matches every queue name, those not yet created too: it is only stars ("*"). */
  get matchesEveryName(): boolean {
    return this.parts.every((part) => part === "");
  }

  /**
   * Whether the whole queue name matches. Linear in the name for each
   * literal run (no regular expression, so no backtracking on "*a*a*a…").
   */
  matches(name: string): boolean {
    const parts = this.parts;
    const first = parts[0]!;
    if (parts.length === 1) return name === first;
    const last = parts[parts.length - 1]!;
    if (name.length < first.length + last.length) return false;
    if (!name.startsWith(first) || !name.endsWith(last)) return false;
    // Each middle run, leftmost first, in what lies between the prefix and the suffix.
    let at = first.length;
    const end = name.length - last.length;
    for (let i = 1; i < parts.length - 1; i++) {
      const part = parts[i]!;
      const found = name.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  }
}

// Twice a queue name's limit: room for stars around any name.
const maxPatternLength = 160;
