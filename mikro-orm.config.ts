// Used only by the MikroORM CLI (`npm run migration:create`); the app builds its options in src/db/orm.ts.
import { ormOptions } from "./src/db/orm.js";

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write("DATABASE_URL: required for the MikroORM CLI (npm run migration:create starts a scratch database for you)\n");
  process.exit(1);
}
export default ormOptions(url);
