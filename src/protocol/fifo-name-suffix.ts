/** The suffix SQS requires of FIFO queues' names, which holdshelf keeps for FIFO queues alone. */
export const fifoNameSuffix = ".fifo";
