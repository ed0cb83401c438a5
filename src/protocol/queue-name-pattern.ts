/**
 * A well-formed queue name: 1 to 80 characters of [A-Za-z0-9_-], or (FIFO
 * queues, as SQS names them) such a name ending in ".fifo", 80 characters in
 * all. Auth's queue patterns add `*` to those characters.
 */
export const queueNamePattern = /^(?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;
