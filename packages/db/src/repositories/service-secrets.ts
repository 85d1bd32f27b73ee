import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "../client.js";
import { serviceSecrets } from "../schema/service-secrets.js";

const SECRET_BYTES = 32;

/**
 * The deployment's own secret for `name`: made from the CSPRNG by the first process that asks, and
 * the same for every process after (a concurrent first ask keeps the row written first).
 */
export async function serviceSecret(db: Database, name: string): Promise<Buffer> {
  await db
    .insert(serviceSecrets)
    .values({ name, secret: randomBytes(SECRET_BYTES) })
    .onConflictDoNothing();
  const [row] = await db
    .select({ secret: serviceSecrets.secret })
    .from(serviceSecrets)
    .where(eq(serviceSecrets.name, name));
  if (!row) throw new Error(`service secret ${name} was not kept`);
  return row.secret;
}

/**
 * The secrets replay links are signed with, first signing: REPLAY_SECRETS when set (`configured`),
 * else the one kept in Postgres.
 */
export async function replayLinkSecrets(db: Database, configured: readonly string[] | undefined): Promise<Buffer[]> {
  if (configured && configured.length > 0) return configured.map((secret) => Buffer.from(secret, "utf8"));
  return [await serviceSecret(db, "replay-links")];
}
