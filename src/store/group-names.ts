/**
 * FIFO message groups' names, each given a small number while any message of
 * the group is held, so that a queue's columns keep a 4-byte number per
 * message instead of a string, and a million messages in a thousand groups
 * share a thousand strings. Numbers are reused once released: a queue that
 * sees a new group per order does not grow without end.
 */
export class GroupNames {
  private readonly names: (string | undefined)[] = [];
  private readonly numbers = new Map<string, number>();
  private readonly freed: number[] = [];

  /** The number of a group, given one if it has none. */
  intern(name: string): number {
    const known = this.numbers.get(name);
    if (known !== undefined) return known;
    const number = this.freed.pop() ?? this.names.length;
    this.names[number] = name;
    this.numbers.set(name, number);
    return number;
  }

  /** The name of a group number in use. */
  nameOf(number: number): string {
    const name = this.names[number];
    if (name === undefined) throw new Error(`message group number ${number} is not in use`);
    return name;
  }

  /** Frees a number whose group holds no message any more. */
  release(number: number): void {
    const name = this.names[number];
    if (name === undefined) return;
    this.names[number] = undefined;
    this.numbers.delete(name);
    this.freed.push(number);
  }

  /** The highest number handed out, plus one: the size of arrays indexed by group number. */
  get span(): number {
    return this.names.length;
  }

  /** Forgets every group (a purge). */
  clear(): void {
    this.names.length = 0;
    this.numbers.clear();
    this.freed.length = 0;
  }
}
