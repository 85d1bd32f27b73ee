import type { Command } from "commander";
import type { CliContext } from "../context.js";

/** What a command does with its arguments and options, given the opened context. */
export type CommandHandler = (ctx: CliContext, args: string[], options: Record<string, any>) => Promise<void>;
/** Wraps a handler as a commander action: opens the context, runs, closes it whatever happens. */
export type ActionFactory = (handler: CommandHandler) => (...commanderArgs: any[]) => Promise<void>;
/** A group of commands (`partners …`, `keys …`); add a new group to COMMAND_GROUPS in program.ts. */
export type CommandGroup = (program: Command, action: ActionFactory) => void;
