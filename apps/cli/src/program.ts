import { ServiceError } from "@outcomes/core";
import { EnvError } from "@outcomes/runtime";
import { Command, CommanderError } from "commander";
import type { ActionFactory, CommandGroup } from "./commands/command-group.js";
import { registerDeliveryCommands } from "./commands/deliveries.js";
import { registerFreeRoundCommands } from "./commands/free-rounds.js";
import { registerGameCommands } from "./commands/games.js";
import { registerJobCommands } from "./commands/jobs.js";
import { registerJurisdictionCommands } from "./commands/jurisdictions.js";
import { registerKeyCommands } from "./commands/keys.js";
import { registerMaintenanceCommands } from "./commands/maintenance.js";
import { registerPartnerCommands } from "./commands/partners.js";
import { registerReleaseCommands } from "./commands/release.js";
import { registerSettlementCommands } from "./commands/settlements.js";
import { registerSheetCommands } from "./commands/sheets.js";
import { registerSpinCommands } from "./commands/spins.js";
import { registerWebhookCommands } from "./commands/webhooks.js";
import { CliContext, type CliIo } from "./context.js";

const COMMAND_GROUPS: CommandGroup[] = [
  registerPartnerCommands,
  registerKeyCommands,
  registerMaintenanceCommands,
  registerSheetCommands,
  registerSettlementCommands,
  registerJobCommands,
  registerGameCommands,
  registerJurisdictionCommands,
  registerDeliveryCommands,
  registerReleaseCommands,
  registerSpinCommands,
  registerFreeRoundCommands,
  registerWebhookCommands,
];

function buildProgram(io: CliIo): Command {
  const program = new Command("npm run cli --")
    .description("Operator commands of the partner game outcome service (Postgres and Redis from the environment)")
    .option("--json", "print JSON for scripts instead of tables")
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      "\nEnvironment: DATABASE_URL, REDIS_URL, REDIS_PREFIX (the same values as the API's).\n" +
        "Exit status: 0 done, 1 refused or failed (the error code is printed).",
    );

  const action: ActionFactory =
    (handler) =>
    async (...commanderArgs) => {
      const command = commanderArgs.at(-1) as Command;
      const options = commanderArgs.at(-2) as Record<string, any>;
      const ctx = new CliContext(io, Boolean(command.optsWithGlobals().json));
      try {
        await handler(ctx, commanderArgs.slice(0, -2) as string[], options);
      } finally {
        await ctx.close();
      }
    };
  for (const register of COMMAND_GROUPS) register(program, action);
  return program;
}

function wantsJson(argv: string[]): boolean {
  return argv.includes("--json");
}

function reportError(error: unknown, io: CliIo, json: boolean): number {
  if (error instanceof ServiceError) {
    if (json) {
      const body = {
        message: error.message,
        errorCode: error.code,
        ...(error.details ? { details: error.details } : {}),
      };
      io.stderr(`${JSON.stringify(body)}\n`);
    } else {
      const details = Array.isArray(error.details)
        ? error.details.map((detail) => `\n  ${detail.path || "(body)"}: ${detail.message}`)
        : Object.entries(error.details ?? {}).map(([name, value]) => `\n  ${name}: ${value}`);
      io.stderr(`error ${error.code}: ${error.message}${details.join("")}\n`);
    }
    return 1;
  }
  if (error instanceof EnvError) {
    io.stderr(`${error.message}\n`);
    return 1;
  }
  io.stderr(`error: ${rootMessage(error)}\n`);
  return 1;
}

/** The innermost cause says what went wrong ("connect ECONNREFUSED …"), not the query drizzle was running. */
function rootMessage(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/** Runs one CLI invocation (`argv` without node and script) and returns its exit status. */
export async function run(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    // commander has already printed help, version or usage errors through `io`.
    if (error instanceof CommanderError) return error.exitCode;
    return reportError(error, io, wantsJson(argv));
  }
}

function processIo(): CliIo {
  return {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
}
