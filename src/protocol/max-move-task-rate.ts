/** The highest rate a task may be given, per second: SQS's MaxNumberOfMessagesPerSecond bound. */
export const maxMoveTaskRate = 500;
