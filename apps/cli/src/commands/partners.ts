import { createPartner, listPartners, setPartnerActive, updatePartnerSettings } from "@outcomes/db";
import { type PartnerView, presentPartner } from "@outcomes/records";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { printPage, record, table } from "../output.js";
import { limitOption, PAGING_HELP, pageOf, pageOption, usdOrDefault } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

const partnerRecord = (partner: PartnerView) =>
  record({
    id: partner.id,
    slug: partner.slug,
    name: partner.name,
    contactEmail: partner.contactEmail,
    active: partner.isActive ? "yes" : "no (deactivated)",
    spinCeilingUsd: String(partner.spinCeilingUsd),
    createdAt: partner.createdAt,
  });

async function setActive(ctx: CliContext, partnerId: string, isActive: boolean) {
  const partner = presentPartner(await setPartnerActive(ctx.db(), partnerId, isActive));
  await ctx.announce("auth");
  ctx.print(partner, () => partnerRecord(partner));
}

export function registerPartnerCommands(program: Command, action: ActionFactory) {
  const partners = program.command("partners").description("create, list, update, deactivate and activate partners");

  partners
    .command("create")
    .description("create an active partner")
    .requiredOption("--slug <slug>", "3..64 lowercase letters, digits and hyphens (unique)")
    .requiredOption("--name <name>", "display name")
    .option("--contact-email <email>", "the partner's account contact")
    .addHelpText("after", '\nExample:\n  npm run cli -- partners create --slug acme --name "Acme Gaming"')
    .action(
      action(async (ctx, _args, options) => {
        const created = await createPartner(ctx.db(), {
          slug: options.slug,
          name: options.name,
          contactEmail: options.contactEmail,
        });
        await ctx.announce("auth");
        const partner = presentPartner(created);
        ctx.print(partner, () => `Partner created.\n${partnerRecord(partner)}`);
      }),
    );

  partners
    .command("list")
    .description("list partners, newest first")
    .addOption(pageOption())
    .addOption(limitOption("partners"))
    .addHelpText("after", `\n${PAGING_HELP}`)
    .action(
      action(async (ctx, _args, options) => {
        const { page, limit, offset } = pageOf(options);
        const result = await listPartners(ctx.db(), { limit, offset });
        const views = result.rows.map(presentPartner);
        printPage(ctx, "partners", views, { page, limit, total: result.total }, () =>
          table(
            ["id", "slug", "name", "active", "contact email", "created at"],
            views.map((p) => [p.id, p.slug, p.name, p.isActive ? "yes" : "no", p.contactEmail, p.createdAt]),
          ),
        );
      }),
    );

  partners
    .command("update")
    .description("change a partner's settings (as PATCH /api/admin/v1/partners/{partnerId})")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .requiredOption(
      "--spin-ceiling-usd <usd|default>",
      "the most one spin of its games may stake or pay (default 1000000); binds games registered or re-bounded from now on",
      usdOrDefault,
    )
    .addHelpText("after", "\nExample:\n  npm run cli -- partners update ptr_… --spin-ceiling-usd 5000000")
    .action(
      action(async (ctx, [partnerId], options) => {
        const ceiling = options.spinCeilingUsd;
        const updated = await updatePartnerSettings(ctx.db(), partnerId!, {
          spinCeilingMicros: ceiling === "default" ? null : ceiling,
        });
        const partner = presentPartner(updated);
        ctx.print(partner, () => partnerRecord(partner));
      }),
    );

  partners
    .command("deactivate")
    .description("deactivate a partner: its keys answer KS-4005 on every API process within 1 s")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .action(action(async (ctx, [partnerId]) => setActive(ctx, partnerId!, false)));

  partners
    .command("activate")
    .description("re-activate a deactivated partner")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .action(action(async (ctx, [partnerId]) => setActive(ctx, partnerId!, true)));
}
