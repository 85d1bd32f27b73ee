import { migrateDatabase } from "@outcomes/db";
import { createLogger, loadEnvOrExit } from "@outcomes/runtime";

const env = loadEnvOrExit();
const logger = createLogger(env.LOG_LEVEL, "migrate");
await migrateDatabase(env.DATABASE_URL);
logger.info("migrations applied");
