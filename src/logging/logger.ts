/** Log levels, least severe first. */
export const logLevels = ["debug", "info", "warn", "error"] as const;
/** A log level. */
export type LogLevel = (typeof logLevels)[number];

/** Structured logging: one JSON object per line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Options of createLogger. */
export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Where lines go; standard error by default, so standard output stays the CLI's. */
  readonly write?: (line: string) => void;
}

/** A logger writing JSON lines at or above a level. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const threshold = logLevels.indexOf(options.level ?? "info");
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const at =
    (level: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}): void => {
      if (logLevels.indexOf(level) < threshold) return;
      write(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }, errorFields));
    };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A logger that drops everything, for tests and embedding. */
export const silentLogger: Logger = createLogger({ write: () => undefined });

// Errors have no enumerable fields: log their name, message and stack.
function errorFields(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
