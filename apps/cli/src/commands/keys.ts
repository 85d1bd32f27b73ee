import { DEFAULT_ROTATION_OVERLAP_HOURS, ENVIRONMENTS, type Environment } from "@outcomes/core";
import { issueApiKey, listApiKeys, revokeApiKey, rotateApiKey } from "@outcomes/db";
import { type ApiKeyView, type IssuedApiKeyView, presentApiKey, presentIssuedKey } from "@outcomes/records";
import { type Command, Option } from "commander";
import { printPage, record, table } from "../output.js";
import { dateTime, hours, limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

const issuedText = (title: string, key: IssuedApiKeyView) =>
  [
    title,
    record({ id: key.id, key: key.key, prefix: key.prefix, environment: key.environment, expiresAt: key.expiresAt }),
    "Hand the key to the partner's account contact now: it is shown only once and cannot be recovered.",
  ].join("\n");

function keyState(key: ApiKeyView, now: number): string {
  if (key.revokedAt) return "revoked";
  return Date.parse(key.expiresAt) <= now ? "expired" : "active";
}

export function registerKeyCommands(program: Command, action: ActionFactory) {
  const keys = program.command("keys").description("issue, list, revoke and rotate partners' API keys");

  keys
    .command("issue")
    .description("issue an API key (default lifetime 365 days)")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .addOption(
      new Option("--environment <environment>", "the key's environment").choices(ENVIRONMENTS).makeOptionMandatory(),
    )
    .option("--expires-at <date-time>", "expiry, ISO-8601 with offset (default: 365 days from now)", dateTime)
    .addHelpText("after", "\nExample:\n  npm run cli -- keys issue ptr_0Qx7kLm2AbCd --environment sandbox")
    .action(
      action(async (ctx, [partnerId], options) => {
        const issued = await issueApiKey(ctx.db(), {
          partnerId: partnerId!,
          environment: options.environment as Environment,
          expiresAt: options.expiresAt,
        });
        await ctx.announceKeyChange({ live: [issued.record] });
        const view = presentIssuedKey(issued);
        ctx.print(view, () => issuedText("API key issued.", view));
      }),
    );

  keys
    .command("list")
    .description("list a partner's keys, newest first (never their secrets)")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .addOption(pageOption())
    .addOption(limitOption("keys"))
    .addHelpText("after", `\n${PAGING_HELP}`)
    .action(
      action(async (ctx, [partnerId], options) => {
        const { page, limit, offset } = pageOf(options);
        const result = await listApiKeys(ctx.db(), partnerId!, { limit, offset });
        const views = result.rows.map(presentApiKey);
        const now = Date.now();
        printPage(ctx, "apiKeys", views, { page, limit, total: result.total }, () =>
          table(
            ["id", "prefix", "environment", "state", "expires at", "revoked at", "last used at", "created at"],
            views.map((k) => [
              k.id,
              k.prefix,
              k.environment,
              keyState(k, now),
              k.expiresAt,
              k.revokedAt,
              k.lastUsedAt,
              k.createdAt,
            ]),
          ),
        );
      }),
    );

  keys
    .command("revoke")
    .description("revoke a key at once: it answers KS-4003 on every API process within 1 s")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .argument("<keyId>", "the key's id (key_…)")
    .action(
      action(async (ctx, [partnerId, keyId]) => {
        const revoked = await revokeApiKey(ctx.db(), partnerId!, keyId!);
        await ctx.announceKeyChange({ gone: [revoked.keyHash] });
        const view = presentApiKey(revoked);
        ctx.print(view, () => `API key revoked.\n${record({ ...view })}`);
      }),
    );

  keys
    .command("rotate")
    .description("issue a new key of the same environment; the old one keeps working for the overlap")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .argument("<keyId>", "the key to replace (key_…)")
    .option(
      "--overlap-hours <hours>",
      `how long the old key keeps working (default ${DEFAULT_ROTATION_OVERLAP_HOURS})`,
      hours,
    )
    .option("--expires-at <date-time>", "the new key's expiry (default: 365 days from now)", dateTime)
    .addHelpText("after", "\nSee docs/operators.md for the rotation procedure.")
    .action(
      action(async (ctx, [partnerId, keyId], options) => {
        const rotated = await rotateApiKey(ctx.db(), {
          partnerId: partnerId!,
          keyId: keyId!,
          overlapHours: options.overlapHours,
          expiresAt: options.expiresAt,
        });
        await ctx.announceKeyChange({ live: [rotated.record, rotated.previous] });
        const view = presentIssuedKey(rotated);
        const oldExpiry = rotated.previous.expiresAt.toISOString();
        ctx.print(
          view,
          () => `${issuedText("API key rotated.", view)}\nThe old key ${keyId} now expires at ${oldExpiry}.`,
        );
      }),
    );
}
