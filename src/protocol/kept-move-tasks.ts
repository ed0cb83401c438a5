/** How many tasks a source queue's record keeps, newest first (as SQS lists them). */
export const keptMoveTasks = 10;
