import type { Logger } from "pino";

type Closer = { name: string; close: () => Promise<unknown> | unknown };

/**
 * Closes what a process opened in reverse order of opening on SIGTERM/SIGINT.
 * A second signal exits at once; an uncaught error logs and exits non-zero (never limps on).
 */
export class ShutdownManager {
  private readonly closers: Closer[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  register(name: string, close: Closer["close"]): void {
    this.closers.push({ name, close });
  }

  installSignalHandlers(): void {
    const onSignal = (signal: string) => {
      if (this.closing) {
        this.logger.warn({ signal }, "second signal, exiting now");
        process.exit(1);
      }
      this.logger.info({ signal }, "shutting down");
      void this.shutdown().then(() => process.exit(0));
    };
    process.on("SIGTERM", () => onSignal("SIGTERM"));
    process.on("SIGINT", () => onSignal("SIGINT"));
    process.on("uncaughtException", (error) => {
      this.logger.fatal({ err: error }, "uncaught exception");
      void this.shutdown().finally(() => process.exit(1));
    });
    process.on("unhandledRejection", (reason) => {
      this.logger.fatal({ err: reason }, "unhandled rejection");
      void this.shutdown().finally(() => process.exit(1));
    });
  }

  shutdown(): Promise<void> {
    this.closing ??= (async () => {
      for (const closer of [...this.closers].reverse()) {
        try {
          await closer.close();
          this.logger.info({ component: closer.name }, "closed");
        } catch (error) {
          this.logger.error({ err: error, component: closer.name }, "close failed");
        }
      }
    })();
    return this.closing;
  }
}
