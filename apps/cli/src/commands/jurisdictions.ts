import { ErrorCode, JURISDICTION_CODE_PATTERN, ServiceError } from "@outcomes/core";
import { findJurisdiction, listJurisdictions, putJurisdiction, updatePartnerSettings } from "@outcomes/db";
import { presentJurisdiction, presentPartner } from "@outcomes/records";
import { type Command, InvalidArgumentError } from "commander";
import type { CliContext } from "../context.js";
import { record, table } from "../output.js";
import { usdOrDefault } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

function code(text: string): string {
  if (!JURISDICTION_CODE_PATTERN.test(text)) throw new InvalidArgumentError("2..32 of A-Z, 0-9 and -");
  return text;
}

function wholeIn(low: number, high: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < low || value > high) {
      throw new InvalidArgumentError(`a whole number ${low}..${high}`);
    }
    return value;
  };
}

function printProfile(ctx: CliContext, profile: ReturnType<typeof presentJurisdiction>) {
  ctx.print(profile, () =>
    record({
      code: profile.code,
      name: profile.name,
      minRoundMs: String(profile.minRoundMs),
      maxWagerUsd: profile.maxWagerUsd === null ? "none" : String(profile.maxWagerUsd),
      sessionReminderMinutes: profile.sessionReminderMinutes === null ? "none" : String(profile.sessionReminderMinutes),
      builtIn: profile.builtIn ? "yes" : "no",
    }),
  );
}

/** Jurisdiction profiles and partners' defaults (docs/jurisdictions.md), as the operator API sets them. */
export function registerJurisdictionCommands(program: Command, action: ActionFactory) {
  const jurisdictions = program
    .command("jurisdictions")
    .description("list and define jurisdiction profiles; set a partner's default (docs/jurisdictions.md)");

  jurisdictions
    .command("list")
    .description("every profile, built-in and the operator's")
    .action(
      action(async (ctx) => {
        const views = (await listJurisdictions(ctx.db())).map(presentJurisdiction);
        ctx.print({ jurisdictions: views }, () =>
          table(
            ["code", "name", "min round ms", "max wager usd", "reminder minutes", "built in"],
            views.map((j) => [
              j.code,
              j.name,
              String(j.minRoundMs),
              j.maxWagerUsd === null ? null : String(j.maxWagerUsd),
              j.sessionReminderMinutes === null ? null : String(j.sessionReminderMinutes),
              j.builtIn ? "yes" : "no",
            ]),
          ),
        );
      }),
    );

  jurisdictions
    .command("put")
    .description("define a profile or change its figures (as PUT /api/admin/v1/jurisdictions/{code})")
    .argument("<code>", "2..32 of A-Z, 0-9 and -", code)
    .requiredOption("--name <name>", "what the profile is")
    .option("--min-round-ms <ms>", "least time between a player's round starts, 0..60000", wholeIn(0, 60_000), 0)
    .option("--max-wager-usd <usd|default>", "the most one spin may stake (default: no limit)", usdOrDefault)
    .option("--reminder-minutes <minutes>", "session reminder marks, 1..1440 (default: none)", wholeIn(1, 1440))
    .addHelpText("after", '\nExample:\n  npm run cli -- jurisdictions put MT-MGA --name "Malta" --min-round-ms 3000')
    .action(
      action(async (ctx, [profileCode], options) => {
        const maxWager = options.maxWagerUsd as number | "default" | undefined;
        const row = await putJurisdiction(ctx.db(), profileCode!, {
          name: String(options.name).trim(),
          minRoundMs: options.minRoundMs as number,
          maxWagerMicros: maxWager === undefined || maxWager === "default" ? null : maxWager,
          sessionReminderMinutes: (options.reminderMinutes as number | undefined) ?? null,
        });
        printProfile(ctx, presentJurisdiction(row));
      }),
    );

  jurisdictions
    .command("default")
    .description("set a partner's default jurisdiction (as PATCH /api/admin/v1/partners/{partnerId})")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .argument("<code>", "an existing profile's code", code)
    .action(
      action(async (ctx, [partnerId, profileCode]) => {
        if (!(await findJurisdiction(ctx.db(), profileCode!))) {
          throw new ServiceError(ErrorCode.InvalidRequest, {
            details: [{ path: "code", message: `no profile ${profileCode} (see: jurisdictions list)` }],
          });
        }
        const partner = presentPartner(
          await updatePartnerSettings(ctx.db(), partnerId!, { defaultJurisdiction: profileCode! }),
        );
        // Whether the partner's spins are checked follows its default: every API process within 1 s.
        await ctx.announce("auth");
        ctx.print(partner, () => record({ id: partner.id, defaultJurisdiction: partner.defaultJurisdiction }));
      }),
    );
}
